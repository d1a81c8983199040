//! An MCP server asks to use the host's model (`sampling/createMessage`): the card shows
//! the server, its system prompt, the messages, the token limit and its model
//! preferences. Approving sends exactly that to the session's model; the reply goes back
//! to the server only.

use super::tool_call::deny;
use super::{Card, Choice, Fact, Kind, Then, Tone};
use crate::mcp::{SamplingRequest, SamplingTurn};
use crate::model::Role;
use crate::policy::{PersonAnswer, Verdict};

#[derive(Debug, Clone)]
pub struct Sampling {
    pub server: String,
    pub request: SamplingRequest,
    /// The session's model (who would answer).
    pub model: String,
    /// toolgate's cap on one request's tokens.
    pub cap: u32,
    /// The verdict that asked (its rule and where the rule came from).
    pub verdict: Verdict,
}

impl Sampling {
    fn preferences(&self) -> String {
        let r = &self.request;
        let mut parts = Vec::new();
        if !r.model_hints.is_empty() {
            parts.push(format!("hints {}", r.model_hints.join(", ")));
        }
        for (name, value) in [
            ("cost", r.cost_priority),
            ("speed", r.speed_priority),
            ("intelligence", r.intelligence_priority),
        ] {
            if let Some(v) = value {
                parts.push(format!("{name} {v:.2}"));
            }
        }
        if let Some(t) = r.temperature {
            parts.push(format!("temperature {t:.2}"));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

fn transcript(turns: &[SamplingTurn]) -> String {
    turns
        .iter()
        .map(|t| {
            let who = match t.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            format!("[{who}]\n{}", t.text)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl Kind for Sampling {
    type Answer = PersonAnswer;
    const NAME: &'static str = "sampling";

    fn card(&self) -> Card {
        let r = &self.request;
        let mut facts = vec![
            Fact::new(
                "max tokens",
                format!("{} (toolgate's cap: {})", r.max_tokens, self.cap),
                Tone::Plain,
            ),
            Fact::new("model preferences", self.preferences(), Tone::Claim),
            Fact::new(
                "rule",
                format!("{} ({})", self.verdict.rule, self.verdict.source),
                Tone::Dim,
            ),
        ];
        if !r.stop_sequences.is_empty() {
            facts.push(Fact::new(
                "stop sequences (not applied)",
                r.stop_sequences.join(" · "),
                Tone::Dim,
            ));
        }
        if let Some(context) = &r.include_context {
            facts.push(Fact::new(
                "include context",
                format!("{context} asked; toolgate adds no other context"),
                Tone::Dim,
            ));
        }
        let system = r.system_prompt.as_deref().unwrap_or("(none)");
        Card {
            title: "Sampling request".into(),
            asker: format!(
                "MCP server '{}' asks to use your model ({})",
                self.server, self.model
            ),
            effect: format!(
                "The messages below go to {} with the server's system prompt; its reply \
                 (at most {} tokens) goes back to '{}' only. The server's text authorizes nothing.",
                self.model,
                r.max_tokens.min(self.cap),
                self.server
            ),
            facts,
            details_title: "system prompt and messages".into(),
            details: format!("[system prompt]\n{system}\n\n{}", transcript(&r.messages)),
        }
    }

    fn choices(&self) -> Vec<Choice<PersonAnswer>> {
        vec![
            Choice::new('y', "Allow once", Then::Answer(PersonAnswer::AllowOnce)),
            Choice::new(
                'a',
                "Allow for this session",
                Then::Answer(PersonAnswer::AllowSession),
            ),
            deny(),
        ]
    }

    fn safe_default(&self) -> PersonAnswer {
        PersonAnswer::Deny
    }

    fn outcome_line(&self, answer: &PersonAnswer) -> String {
        let server = &self.server;
        match answer {
            PersonAnswer::AllowOnce => format!("sampling by '{server}' allowed once"),
            PersonAnswer::AllowSession | PersonAnswer::AllowAlways => {
                format!("sampling by '{server}' allowed for this session")
            }
            PersonAnswer::Deny => format!("sampling by '{server}' denied"),
            PersonAnswer::DenyWithNote(note) => format!("sampling by '{server}' denied: {note}"),
        }
    }
}
