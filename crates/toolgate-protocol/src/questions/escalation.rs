//! A command that would run outside the OS sandbox: because the model asked for it (with
//! a one-line justification), or because the sandbox is unavailable on this machine. Never
//! covered by an allow rule: only the person, or their grant for this session, lets it run.

use super::tool_call::run_choices;
use super::{Card, Choice, Fact, Kind, Tone};
use crate::PersonAnswer;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscalationReason {
    /// The model asked to leave the sandbox, saying why.
    Requested { justification: String },
    /// The kernel cannot enforce the sandbox (or it was switched off by force): the
    /// command would run unconfined.
    SandboxUnavailable { why: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub call_id: String,
    /// The bash command line, exactly as it would run.
    pub command: String,
    pub workspace: std::path::PathBuf,
    pub reason: EscalationReason,
    /// What the policy said besides (a destructive command's reason), if anything.
    pub policy_note: Option<String>,
}

impl Kind for Escalation {
    type Answer = PersonAnswer;
    const NAME: &'static str = "leave the sandbox";

    fn card(&self) -> Card {
        let mut facts = Vec::new();
        match &self.reason {
            EscalationReason::Requested { justification } => {
                facts.push(Fact::new(
                    "the model's justification",
                    justification,
                    Tone::Claim,
                ));
            }
            EscalationReason::SandboxUnavailable { why } => {
                facts.push(Fact::new("sandbox unavailable", why, Tone::Warn));
            }
        }
        if let Some(note) = &self.policy_note {
            facts.push(Fact::new("also", note, Tone::Warn));
        }
        facts.push(Fact::new(
            "working directory",
            self.workspace.display().to_string(),
            Tone::Dim,
        ));
        Card {
            title: "Run outside the sandbox?".into(),
            asker: match self.reason {
                EscalationReason::Requested { .. } => {
                    "The agent asks to run a command without the sandbox".into()
                }
                EscalationReason::SandboxUnavailable { .. } => {
                    "The agent wants to run a command, and the sandbox cannot confine it".into()
                }
            },
            effect: "bash runs this command with your full access: files outside the \
                     workspace, credentials and the network are not protected."
                .into(),
            facts,
            details_title: "command".into(),
            details: self.command.clone(),
        }
    }

    fn choices(&self) -> Vec<Choice<PersonAnswer>> {
        run_choices("Run it once", "Allow unsandboxed this session", None, true)
    }

    fn safe_default(&self) -> PersonAnswer {
        PersonAnswer::Deny
    }

    fn outcome_line(&self, answer: &PersonAnswer) -> String {
        match answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowAlways | PersonAnswer::AllowLimited(_) => {
                "unsandboxed command allowed once".into()
            }
            PersonAnswer::AllowSession => "unsandboxed commands allowed for this session".into(),
            PersonAnswer::Deny => "unsandboxed command denied".into(),
            PersonAnswer::DenyWithNote(note) => format!("unsandboxed command denied: {note}"),
        }
    }
}
