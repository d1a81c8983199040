//! An HTTP server wants the person to sign in (OAuth): asked before the browser opens,
//! naming the authorization server they would be sent to and the scopes asked for. Only
//! that server waits for the answer; the others connect and run meanwhile.

use super::{Card, Choice, Fact, Kind, Then, Tone};
use crate::ids::ServerName;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignIn {
    pub server: ServerName,
    /// The server's URL.
    pub url: String,
    /// Origin of the authorization server (`https://login.example.com`).
    pub authorization_server: String,
    /// What the token will allow; empty when the server names none.
    pub scopes: Vec<String>,
    /// The server wants more than the current token allows.
    pub step_up: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInAnswer {
    /// Open the browser at the authorization server.
    SignIn,
    NotNow,
}

impl SignIn {
    fn scope_text(&self) -> String {
        if self.scopes.is_empty() {
            "none named (the authorization server decides)".to_string()
        } else {
            self.scopes.join(" ")
        }
    }
}

impl Kind for SignIn {
    type Answer = SignInAnswer;
    const NAME: &'static str = "sign-in";

    fn card(&self) -> Card {
        let (title, asker) = if self.step_up {
            (
                "Allow more access?",
                format!(
                    "MCP server '{}' needs more access than its current sign-in gives",
                    self.server
                ),
            )
        } else {
            (
                "Sign in to an MCP server?",
                format!("MCP server '{}' asks you to sign in", self.server),
            )
        };
        Card {
            title: title.into(),
            asker,
            effect: format!(
                "toolgate opens your browser at {}. After you sign in there, '{}' receives \
                 a token with the scopes below; toolgate keeps it in its state folder \
                 (readable by you only).",
                self.authorization_server, self.server
            ),
            facts: vec![
                Fact::new(
                    "authorization server",
                    &self.authorization_server,
                    Tone::Warn,
                ),
                Fact::new("scopes", self.scope_text(), Tone::Plain),
                Fact::new("server", &self.url, Tone::Dim),
            ],
            details_title: "what happens".into(),
            details: format!(
                "1. toolgate registers with {} if it has to,\n\
                 2. your browser opens there (the address is also shown in the transcript),\n\
                 3. the answer comes back to toolgate on 127.0.0.1 only.\n\
                 Choosing \"Not now\" leaves '{}' disconnected; the other servers are not affected.",
                self.authorization_server, self.server
            ),
        }
    }

    fn choices(&self) -> Vec<Choice<SignInAnswer>> {
        vec![
            Choice::new(
                's',
                "Sign in in the browser",
                Then::Answer(SignInAnswer::SignIn),
            ),
            Choice::new('n', "Not now", Then::Answer(SignInAnswer::NotNow)).safe(),
        ]
    }

    fn safe_default(&self) -> SignInAnswer {
        SignInAnswer::NotNow
    }

    fn outcome_line(&self, answer: &SignInAnswer) -> String {
        match answer {
            SignInAnswer::SignIn => format!(
                "signing in to '{}' at {}",
                self.server, self.authorization_server
            ),
            SignInAnswer::NotNow => format!("'{}' not signed in", self.server),
        }
    }
}
