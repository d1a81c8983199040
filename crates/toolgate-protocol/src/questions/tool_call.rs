//! The agent wants to call a tool that the policy says to ask about.

use serde_json::Value;

use super::{Card, Choice, Fact, Kind, Preview, Then, Tone};
use crate::{GrantLimit, PersonAnswer, Verdict};
use crate::{PoolTool, ToolOrigin};

#[derive(Debug, Clone)]
pub struct ToolCall {
    pub call_id: String,
    pub tool: PoolTool,
    pub input: Value,
    /// Why the policy asks.
    pub why: String,
    /// The verdict that asked (its rule and where the rule came from).
    pub verdict: Verdict,
    /// The diff of a file change or the bash command, worked out when the question was
    /// built; None for other tools.
    pub preview: Option<Preview>,
}

impl Kind for ToolCall {
    type Answer = PersonAnswer;
    const NAME: &'static str = "tool call";

    fn card(&self) -> Card {
        let effect = match &self.tool.origin {
            ToolOrigin::Mcp { server, tool } => {
                format!("MCP server '{server}' runs its tool '{tool}' with the arguments below.")
            }
            _ => format!(
                "The built-in tool {} runs with the arguments below.",
                self.tool.name
            ),
        };
        let mut facts = vec![
            Fact::new("why", &self.why, Tone::Warn),
            Fact::new(
                "rule",
                format!("{} ({})", self.verdict.rule, self.verdict.source),
                Tone::Dim,
            ),
        ];
        if let ToolOrigin::Mcp { .. } = self.tool.origin {
            facts.push(claims_fact(&self.tool));
        }
        Card {
            title: "Permission required".into(),
            asker: format!("The agent wants to call {}", self.tool.name),
            effect,
            facts,
            details_title: "arguments".into(),
            details: pretty(&self.input),
        }
    }

    fn choices(&self) -> Vec<Choice<PersonAnswer>> {
        let mut choices = run_choices(
            "Allow once",
            "Allow this session",
            Some("Always (save rule)"),
            true,
        );
        // Grants that end, one key per preset (after the others, so their places stay).
        choices.extend(GrantLimit::PRESETS.iter().map(|&(key, limit)| {
            Choice::new(
                key,
                limit.label(),
                Then::Answer(PersonAnswer::AllowLimited(limit)),
            )
        }));
        choices
    }

    fn safe_default(&self) -> PersonAnswer {
        PersonAnswer::Deny
    }

    fn preview(&self) -> Option<Preview> {
        self.preview.clone()
    }

    fn outcome_line(&self, answer: &PersonAnswer) -> String {
        let tool = &self.tool.name;
        match answer {
            PersonAnswer::AllowOnce => format!("{tool} allowed once"),
            PersonAnswer::AllowSession => format!("{tool} allowed for this session"),
            PersonAnswer::AllowLimited(limit) => format!("{tool} allowed {}", limit.describe()),
            PersonAnswer::AllowAlways => format!("{tool} always allowed (rule saved)"),
            PersonAnswer::Deny => format!("{tool} denied"),
            PersonAnswer::DenyWithNote(note) => format!("{tool} denied: {note}"),
        }
    }
}

/// The choices of a question about running something: once (`y`), for the session (`a`),
/// always (`s`, where offered), deny (`n`, the safe one) and, where the agent hears it,
/// deny with a note (`d`).
pub(super) fn run_choices(
    once: &str,
    session: &str,
    always: Option<&str>,
    with_note: bool,
) -> Vec<Choice<PersonAnswer>> {
    let mut choices = vec![
        Choice::new('y', once, Then::Answer(PersonAnswer::AllowOnce)),
        Choice::new('a', session, Then::Answer(PersonAnswer::AllowSession)),
    ];
    if let Some(always) = always {
        choices.push(Choice::new(
            's',
            always,
            Then::Answer(PersonAnswer::AllowAlways),
        ));
    }
    choices.push(deny());
    if with_note {
        choices.push(deny_with_note());
    }
    choices
}

/// The server's claims about a tool, as a card shows them (never verified).
pub(super) fn claims_fact(tool: &PoolTool) -> Fact {
    let claims = if tool.claims.is_empty() {
        "none".to_string()
    } else {
        tool.claims.describe()
    };
    Fact::new("server claims (not verified)", claims, Tone::Claim)
}

/// "Deny", the safe choice of every question about running something.
fn deny() -> Choice<PersonAnswer> {
    Choice::new('n', "Deny", Then::Answer(PersonAnswer::Deny)).safe()
}

/// "Deny with a note" for the agent; an empty note is a plain deny.
fn deny_with_note() -> Choice<PersonAnswer> {
    Choice::new(
        'd',
        "Deny with note",
        Then::AskNote(PersonAnswer::deny_with),
    )
}

/// Pretty JSON; serde_json escapes control characters inside strings.
pub(super) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
