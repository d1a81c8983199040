//! The preview a tool-call question carries: the diff of a write_file or edit_file call
//! (read and computed on a blocking thread, never on the UI's), or a bash command. A file
//! that cannot be previewed gives a one-line reason; nothing here stops the question.

use std::path::Path;

use serde_json::Value;

use crate::builtin::{BuiltinId, proposed_write};
use crate::pool::PoolTool;
use crate::protocol::questions::{FileDiff, Preview};

/// The preview of `tool` called with `input` in `workspace`; None for tools without one.
pub async fn for_call(tool: &PoolTool, input: &Value, workspace: &Path) -> Option<Preview> {
    let kind = tool.origin.builtin()?;
    if kind.is_shell() {
        let command = input.get("command")?.as_str()?;
        return Some(Preview::Shell {
            command: command.to_string(),
        });
    }
    if !kind.writes_files() {
        return None;
    }
    let (input, workspace) = (input.clone(), workspace.to_path_buf());
    let work = move || file_preview(kind, &input, &workspace);
    let failed = |e: tokio::task::JoinError| Preview::NoDiff {
        path: None,
        reason: format!("the preview failed: {e}"),
    };
    Some(
        tokio::task::spawn_blocking(work)
            .await
            .unwrap_or_else(failed),
    )
}

fn file_preview(kind: BuiltinId, input: &Value, workspace: &Path) -> Preview {
    match proposed_write(kind, input, workspace) {
        Ok(change) => Preview::Diff(FileDiff::between(
            &change.path,
            change.before.as_deref(),
            &change.after,
        )),
        Err(no) => Preview::NoDiff {
            path: no.path,
            reason: no.reason,
        },
    }
}
