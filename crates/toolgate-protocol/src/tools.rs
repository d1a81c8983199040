//! How a tool call ended, and what a front end shows of the images it returned.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::AuditRecord;
use crate::ids::{CallId, ServerName, ToolName};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok,
    Error,
    Denied,
    Cancelled,
}

/// What the console shows of an image a tool returned: its type and size, not its pixels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSummary {
    pub media_type: String,
    /// Decoded size in bytes (from the base64 length).
    pub bytes: usize,
}

impl ImageSummary {
    pub fn of(image: &crate::ImageData) -> Self {
        ImageSummary {
            media_type: image.media_type.clone(),
            bytes: image.data.trim_end_matches('=').len() * 3 / 4,
        }
    }

    /// `image/png, 5.3 kB`.
    pub fn describe(&self) -> String {
        let size = if self.bytes >= 1_000_000 {
            format!("{:.1} MB", self.bytes as f64 / 1_000_000.0)
        } else if self.bytes >= 1_000 {
            format!("{:.1} kB", self.bytes as f64 / 1_000.0)
        } else {
            format!("{} bytes", self.bytes)
        };
        format!("{}, {size}", self.media_type)
    }
}

/// A tool call as it starts: the session log's `tool_call` record and the JSONL
/// `tool_started` line are this, under their own `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallStart {
    pub call_id: CallId,
    /// Model-facing name.
    pub name: ToolName,
    /// None for built-ins.
    pub server: Option<ServerName>,
    pub input: Value,
}

/// Who allowed or refused a tool call, as the policy records it: the session log's
/// `permission` record and the JSONL `permission_decided` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionLine {
    pub call_id: CallId,
    #[serde(flatten)]
    pub record: AuditRecord,
}
