//! What the journal keeps of a compaction so that a resumed session redoes it: the
//! report the person saw plus the outputs cleared and the summary. [`apply`] is the one
//! place that redoes it, live (the agent) and on resume ([`super::load`]), so both see
//! the same messages.

use serde::{Deserialize, Serialize};

use crate::model::{ContentBlock, Message, Role};
use crate::protocol::CompactionReport;

/// One compaction as the session log keeps it: enough to redo it on resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionRecord {
    #[serde(flatten)]
    pub report: CompactionReport,
    /// Tool results replaced by a note, by call id, with the note.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<ClearedOutput>,
    /// Messages before this index were replaced by `summary`.
    #[serde(default)]
    pub kept_from: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// `/compact FOCUS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearedOutput {
    pub call_id: String,
    pub note: String,
}

/// Redoes a compaction on `messages` (live, and on resume from the log).
pub fn apply(messages: &mut Vec<Message>, record: &CompactionRecord) {
    if !record.cleared.is_empty() {
        for block in messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
            if let ContentBlock::ToolResult {
                tool_use_id,
                content,
                images,
                ..
            } = block
                && let Some(cleared) = record.cleared.iter().find(|c| &c.call_id == tool_use_id)
            {
                content.clone_from(&cleared.note);
                images.clear();
            }
        }
    }
    let Some(summary) = &record.summary else {
        return;
    };
    let kept_from = record.kept_from.min(messages.len());
    messages.drain(..kept_from);
    let summary = ContentBlock::Text {
        text: summary.clone(),
    };
    match messages.first_mut() {
        // The kept part starts with the person's message: the summary goes before it, in
        // the same message (roles must alternate).
        Some(first) if first.role == Role::User => first.content.insert(0, summary),
        _ => messages.insert(
            0,
            Message {
                role: Role::User,
                content: vec![summary],
            },
        ),
    }
}
