//! A finished tool call as the model will see it, and as the flow labels read it.

use serde_json::Value;

use crate::model::ImageData;
use crate::pool::PoolTool;
use crate::protocol::ToolOutcome;

pub(super) const CANCELLED_TEXT: &str = "Cancelled by the user";

/// A finished call as the model will see it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolRun {
    pub outcome: ToolOutcome,
    pub text: String,
    /// Images for the model besides the text (an MCP tool's image content,
    /// read_mcp_resource of an image).
    pub images: Vec<ImageData>,
}

impl ToolRun {
    pub(super) fn ok(text: impl Into<String>) -> Self {
        ToolRun {
            outcome: ToolOutcome::Ok,
            text: text.into(),
            images: Vec::new(),
        }
    }
    pub(super) fn error(text: impl Into<String>) -> Self {
        ToolRun {
            outcome: ToolOutcome::Error,
            text: text.into(),
            images: Vec::new(),
        }
    }
    pub(super) fn cancelled() -> Self {
        ToolRun {
            outcome: ToolOutcome::Cancelled,
            text: CANCELLED_TEXT.into(),
            images: Vec::new(),
        }
    }
    pub fn is_error(&self) -> bool {
        self.outcome != ToolOutcome::Ok
    }
}

/// One finished call, as the labels need it.
pub(super) struct Finished<'a> {
    pub call_id: &'a str,
    /// The call's number in the session.
    pub call: u32,
    pub tool: Option<&'a PoolTool>,
    pub name: &'a str,
    pub input: &'a Value,
    pub outcome: ToolOutcome,
    /// The result's whole text.
    pub output: &'a str,
}
