//! An MCP server asks the person for input (elicitation): a form built from the server's
//! `requestedSchema`, or a page to open (URL mode). The card says plainly that the
//! server, not the model, is asking, and what the answer is sent to. The safe answer is
//! Decline; Cancel tells the server the person wants the whole operation stopped.

use crate::ids::ServerName;
use serde_json::{Map, Value};

use super::{Card, Choice, Fact, Kind, Then, Tone};
use crate::form::Form;

#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationMode {
    Form(Form),
    /// Open a page (sign in to a third party, pay, …); nothing passes through toolgate.
    Url {
        url: String,
        /// The host the URL points to, shown on its own so a look-alike stands out.
        domain: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    pub server: ServerName,
    /// The server's own words (untrusted; cleaned by front ends before display).
    pub message: String,
    pub mode: ElicitationMode,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Form: the content to send. URL: the person agreed to open the page (empty).
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

impl Elicitation {
    fn accept(content: Map<String, Value>) -> ElicitationAnswer {
        ElicitationAnswer::Accept(content)
    }
}

impl Kind for Elicitation {
    type Answer = ElicitationAnswer;
    const NAME: &'static str = "elicitation";

    fn card(&self) -> Card {
        let asker = format!(
            "MCP server '{}' asks you for input (the server asks, not the model)",
            self.server
        );
        match &self.mode {
            ElicitationMode::Form(_) => Card {
                title: "An MCP server asks you to fill in a form".into(),
                asker,
                effect: format!(
                    "What you submit is sent to '{}'. Do not enter passwords or keys here.",
                    self.server
                ),
                facts: Vec::new(),
                details_title: "the server says".into(),
                details: self.message.clone(),
            },
            ElicitationMode::Url { url, domain } => Card {
                title: "An MCP server asks you to open a page".into(),
                asker,
                effect: "If you choose Open, toolgate opens this address in your browser; \
                         what you do there goes to that site, not through toolgate."
                    .into(),
                facts: vec![
                    Fact::new("domain", domain, Tone::Warn),
                    Fact::new("url", url, Tone::Plain),
                ],
                details_title: "the server says".into(),
                details: self.message.clone(),
            },
        }
    }

    fn choices(&self) -> Vec<Choice<ElicitationAnswer>> {
        let accept = match &self.mode {
            ElicitationMode::Form(_) => Choice::new('s', "Submit", Then::Form(Self::accept)),
            ElicitationMode::Url { .. } => Choice::new(
                'o',
                "Open in browser",
                Then::Answer(ElicitationAnswer::Accept(Map::new())),
            ),
        };
        vec![
            accept,
            Choice::new('d', "Decline", Then::Answer(ElicitationAnswer::Decline)).safe(),
            // Not 'c': in a form, choice keys are typed with Ctrl, and Ctrl+C cancels the turn.
            Choice::new(
                'x',
                "Cancel the operation",
                Then::Answer(ElicitationAnswer::Cancel),
            ),
        ]
    }

    fn form(&self) -> Option<Form> {
        match &self.mode {
            ElicitationMode::Form(form) => Some(form.clone()),
            ElicitationMode::Url { .. } => None,
        }
    }

    fn safe_default(&self) -> ElicitationAnswer {
        ElicitationAnswer::Decline
    }

    fn outcome_line(&self, answer: &ElicitationAnswer) -> String {
        match (answer, &self.mode) {
            (ElicitationAnswer::Accept(content), ElicitationMode::Form(_)) => {
                format!("sent {} field(s) to '{}'", content.len(), self.server)
            }
            (ElicitationAnswer::Accept(_), ElicitationMode::Url { domain, .. }) => {
                format!("opening {domain} for '{}'", self.server)
            }
            (ElicitationAnswer::Decline, _) => format!("declined the request of '{}'", self.server),
            (ElicitationAnswer::Cancel, _) => {
                format!("cancelled the operation of '{}'", self.server)
            }
        }
    }
}
