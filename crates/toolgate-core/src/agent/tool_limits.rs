//! What a tool call's input must be and how much of its output the model gets: the input
//! schemas compiled once per definition, the character budget and MCP's token budget.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::pool::{PoolTool, Schema, ToolOrigin};

pub(super) struct ToolLimits {
    /// Compiled input schemas by tool name (with the schema they were compiled from), so a
    /// call does not recompile its tool's schema.
    validators: std::collections::HashMap<String, (Schema, Arc<jsonschema::Validator>)>,
    /// Characters of one tool output the model gets.
    output_budget: usize,
    /// Estimated tokens of one MCP tool result the model gets.
    mcp_output_tokens: usize,
}

impl ToolLimits {
    pub fn new(output_budget: usize, mcp_output_tokens: usize) -> Self {
        ToolLimits {
            validators: Default::default(),
            output_budget: output_budget.max(1),
            mcp_output_tokens: mcp_output_tokens.max(1),
        }
    }

    /// A malformed call is refused before anyone is asked about it. Connector arguments
    /// are checked by the connector itself, whose answer to an unknown server lists the
    /// available ones (the schema's enum would only say "not one of").
    pub fn check(&mut self, tool: &PoolTool, input: &Value) -> Result<(), InvalidArguments> {
        match tool.origin {
            ToolOrigin::Builtin(kind) if kind.is_connector() => require_object(input),
            ToolOrigin::Builtin(_) | ToolOrigin::Mcp { .. } => self
                .validator(tool)
                .map_or_else(|| require_object(input), |v| check_arguments(&v, input)),
        }
    }

    /// The compiled input schema of a tool; None when the schema does not compile (that
    /// is the server's problem: the call goes through unchecked).
    fn validator(&mut self, tool: &PoolTool) -> Option<Arc<jsonschema::Validator>> {
        if let Some((schema, validator)) = self.validators.get(&tool.name)
            // Same Arc when the pool was re-assembled from the same listing.
            && (Arc::ptr_eq(schema, &tool.input_schema) || **schema == *tool.input_schema)
        {
            return Some(validator.clone());
        }
        let validator = Arc::new(jsonschema::validator_for(&tool.input_schema).ok()?);
        self.validators.insert(
            tool.name.clone(),
            (tool.input_schema.clone(), validator.clone()),
        );
        Some(validator)
    }

    /// Cuts an output to the budget, keeping the whole text in `files_dir` (the session's): every
    /// output to `output_budget` characters, an MCP tool's also to `mcp_output_tokens`
    /// estimated tokens (whichever cuts first; the marker says which).
    pub fn fit(
        &self,
        call_id: &str,
        text: String,
        is_mcp: bool,
        files_dir: Option<&Path>,
    ) -> (String, Option<PathBuf>) {
        let char_cut = text
            .char_indices()
            .nth(self.output_budget)
            .map(|(at, _)| at);
        let token_cut = if is_mcp {
            Some(crate::tokens::prefix_within(&text, self.mcp_output_tokens))
                .filter(|&at| at < text.len())
        } else {
            None
        };
        let (cut, by_tokens) = match (char_cut, token_cut) {
            (None, None) => return (text, None),
            (Some(chars), Some(tokens)) if tokens < chars => (tokens, true),
            (Some(chars), _) => (chars, false),
            (None, Some(tokens)) => (tokens, true),
        };
        let saved = files_dir.and_then(|files_dir| {
            let dir = files_dir.join("tool-outputs");
            let path = dir.join(format!("{}.txt", crate::pool::normalize(call_id)));
            match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &text)) {
                Ok(()) => Some(path),
                Err(e) => {
                    tracing::warn!("saving full tool output: {e}");
                    None
                }
            }
        });
        let whereabouts = match &saved {
            Some(path) => format!("the full output is saved in {}", path.display()),
            None => "the full output was not saved".to_string(),
        };
        // The model sees the head and the tail (where errors and summaries tend to be),
        // three quarters and one quarter of the budget, with the marker between them.
        let (head_end, tail_start, marker) = if by_tokens {
            let budget = self.mcp_output_tokens;
            let (head, tail) = (budget - budget / 4, budget / 4);
            let head_end = crate::tokens::prefix_within(&text, head);
            let tail_start = crate::tokens::suffix_within(&text, tail).max(head_end);
            let marker = format!(
                "\n\n[output truncated: showing about the first {head} and the last {tail} of about {} tokens (MAX_MCP_OUTPUT_TOKENS); {whereabouts}]\n\n",
                crate::tokens::estimate(&text)
            );
            (head_end, tail_start, marker)
        } else {
            let budget = self.output_budget;
            let (head, tail) = (budget - budget / 4, budget / 4);
            let total = text.chars().count();
            let at_char = |n: usize| text.char_indices().nth(n).map_or(text.len(), |(at, _)| at);
            let head_end = at_char(head).min(cut);
            let tail_start = at_char(total.saturating_sub(tail)).max(head_end);
            let marker = format!(
                "\n\n[output truncated: showing the first {head} and the last {tail} of {total} characters; {whereabouts}]\n\n"
            );
            (head_end, tail_start, marker)
        };
        let mut shown = text[..head_end].to_string();
        shown.push_str(&marker);
        shown.push_str(&text[tail_start..]);
        (shown, saved)
    }
}

/// Checks the model's arguments against the tool's input schema, so a malformed call gets
/// a precise message instead of whatever the tool would make of it.
fn check_arguments(
    validator: &jsonschema::Validator,
    input: &Value,
) -> Result<(), InvalidArguments> {
    require_object(input)?;
    let problems: Vec<String> = validator
        .iter_errors(input)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(InvalidArguments::Schema(problems))
    }
}

fn require_object(input: &Value) -> Result<(), InvalidArguments> {
    if input.is_object() {
        Ok(())
    } else {
        Err(InvalidArguments::NotAnObject(input.to_string()))
    }
}

/// Why the model's arguments for a tool are refused before the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidArguments {
    #[error("expected a JSON object, got {0}")]
    NotAnObject(String),
    /// What the input schema found wrong (at most five problems, each with its place).
    #[error("{}", .0.join("; "))]
    Schema(Vec<String>),
}
