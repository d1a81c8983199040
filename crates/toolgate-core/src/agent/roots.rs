//! `/roots` and `/roots add DIR`: the hub keeps the roots and tells the servers; this only
//! words the outcome for the front end.

use std::path::PathBuf;

use tokio::sync::mpsc;

use crate::mcp::{McpHub, file_uri};
use crate::protocol::AgentEvent;
use crate::protocol::Event;

/// Adds `dir` as a root and says how it went; the new root when it was not one yet.
pub(super) async fn add(
    hub: McpHub,
    dir: PathBuf,
    events: mpsc::Sender<AgentEvent>,
) -> Option<PathBuf> {
    // `~/…` as a shell would read it; anything else relative is relative to the workspace.
    let dir = match (dir.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => dir,
    };
    let (event, added) = match hub.add_root(&dir).await {
        Ok((root, Some(told))) => (
            AgentEvent::Fact(Event::Notice {
                message: format!(
                    "Root added: {} ({told} connected server{} told the roots changed)",
                    file_uri(&root),
                    if told == 1 { "" } else { "s" }
                ),
            }),
            Some(root),
        ),
        Ok((root, None)) => (
            AgentEvent::Fact(Event::Notice {
                message: format!("{} is a root already", file_uri(&root)),
            }),
            None,
        ),
        Err(refused) => (
            AgentEvent::Fact(Event::Error {
                message: refused.to_string(),
            }),
            None,
        ),
    };
    let _ = events.send(event).await;
    added
}

/// Adds the roots a resumed session had; says what could not come back (a folder that is
/// gone), for the resume notice.
pub(super) async fn restore(hub: &McpHub, roots: &[PathBuf]) -> RestoredRoots {
    let mut outcome = RestoredRoots::default();
    for dir in roots {
        match hub.add_root(dir).await {
            Ok(_) => outcome.restored += 1,
            Err(refused) => outcome.problems.push(refused.to_string()),
        }
    }
    outcome
}

#[derive(Debug, Default)]
pub(super) struct RestoredRoots {
    pub restored: usize,
    pub problems: Vec<String>,
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
    AgentEvent::Fact(Event::Notice {
        message: format!(
            "Roots servers may work in (/roots add DIR adds one):\n{}",
            roots.join("\n")
        ),
    })
}
