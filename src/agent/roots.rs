//! `/roots` and `/roots add DIR`: the hub keeps the roots and tells the servers; this only
//! words the outcome for the front end.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::events::AgentEvent;
use crate::mcp::{McpHub, file_uri};

pub(super) async fn add(hub: McpHub, dir: PathBuf, events: mpsc::Sender<AgentEvent>) {
    // `~/…` as a shell would read it; anything else relative is relative to the workspace.
    let dir = match (dir.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => dir,
    };
    let event = match hub.add_root(&dir).await {
        Ok((root, Some(told))) => AgentEvent::Notice(format!(
            "Root added: {} ({told} connected server{} told the roots changed)",
            file_uri(&root),
            if told == 1 { "" } else { "s" }
        )),
        Ok((root, None)) => AgentEvent::Notice(format!("{} is a root already", file_uri(&root))),
        Err(message) => AgentEvent::Error(message),
    };
    let _ = events.send(event).await;
}

pub(super) fn list(hub: &McpHub) -> AgentEvent {
    let roots: Vec<String> = hub
        .roots()
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            let note = if i == 0 { " (workspace)" } else { "" };
            format!("  {}{note}", file_uri(dir))
        })
        .collect();
    AgentEvent::Notice(format!(
        "Roots servers may work in (/roots add DIR adds one):\n{}",
        roots.join("\n")
    ))
}
