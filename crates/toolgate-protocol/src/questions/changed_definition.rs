//! The agent wants to call an MCP tool whose definition is not the one a grant or rule was
//! given for: it changed since it was pinned, or the tool appeared mid-session. The card
//! shows what changed (or the new definition) before anything runs.

use serde_json::Value;

use super::tool_call::{claims_fact, pretty, run_choices};
use super::{Card, Choice, Fact, Kind, Tone};
use crate::{PersonAnswer, Verdict};
use crate::{PoolTool, ToolOrigin};

/// What is new about the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefinitionNews {
    /// The server lists another definition than the pinned one.
    Changed {
        /// What pinned the old one (`always grant`, `rule mcp__docs__*`, …).
        pinned_by: String,
        /// Unified diff of description, input schema and annotations.
        diff: String,
    },
    /// It appeared after the server's first listing this session (`tools/list_changed`
    /// or a reconnect).
    New,
}

#[derive(Debug, Clone)]
pub struct ChangedDefinition {
    pub call_id: String,
    pub tool: PoolTool,
    pub input: Value,
    pub news: DefinitionNews,
    /// What the policy says when the pin is left aside (the rule that would allow it).
    pub verdict: Verdict,
}

impl ChangedDefinition {
    /// Why it asks, in a sentence (also the headless refusal's reason).
    pub fn why(&self) -> String {
        match &self.news {
            DefinitionNews::Changed { pinned_by, .. } => format!(
                "the definition of {} changed since it was allowed ({pinned_by}); grants and rules cover only the definition they were given for",
                self.tool.name
            ),
            DefinitionNews::New => format!(
                "{} appeared mid-session, after the server's first listing; its first call is asked about even where a server-wide rule allows it",
                self.tool.name
            ),
        }
    }
}

impl Kind for ChangedDefinition {
    type Answer = PersonAnswer;
    const NAME: &'static str = "changed definition";

    fn card(&self) -> Card {
        let effect = match &self.tool.origin {
            ToolOrigin::Mcp { server, tool } => {
                format!("MCP server '{server}' runs its tool '{tool}' with the arguments below.")
            }
            ToolOrigin::Builtin { .. } => {
                format!("{} runs with the arguments below.", self.tool.name)
            }
        };
        let facts = vec![
            Fact::new("why", self.why(), Tone::Warn),
            Fact::new(
                "rule",
                format!("{} ({})", self.verdict.rule, self.verdict.source),
                Tone::Dim,
            ),
            claims_fact(&self.tool),
        ];
        let (title, details_title, shown) = match &self.news {
            DefinitionNews::Changed { diff, .. } => (
                "Tool definition changed",
                "what changed, then the arguments",
                diff.clone(),
            ),
            DefinitionNews::New => (
                "New tool",
                "its definition, then the arguments",
                format!(
                    "description:\n{}\ninput schema:\n{}",
                    self.tool.description,
                    pretty(&self.tool.input_schema)
                ),
            ),
        };
        Card {
            title: title.into(),
            asker: format!("The agent wants to call {}", self.tool.name),
            effect,
            facts,
            details_title: details_title.into(),
            details: format!("{}\narguments:\n{}", shown.trim_end(), pretty(&self.input)),
        }
    }

    fn choices(&self) -> Vec<Choice<PersonAnswer>> {
        run_choices(
            "Allow once",
            "Accept for this session",
            Some("Accept always (pin it)"),
            true,
        )
    }

    fn safe_default(&self) -> PersonAnswer {
        PersonAnswer::Deny
    }

    fn outcome_line(&self, answer: &PersonAnswer) -> String {
        let tool = &self.tool.name;
        match answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowLimited(_) => {
                format!("{tool} (new definition) allowed once")
            }
            PersonAnswer::AllowSession => {
                format!("{tool}: new definition accepted for this session")
            }
            PersonAnswer::AllowAlways => format!("{tool}: new definition accepted and pinned"),
            PersonAnswer::Deny => format!("{tool} denied (definition not accepted)"),
            PersonAnswer::DenyWithNote(note) => format!("{tool} denied: {note}"),
        }
    }
}
