//! The project's context in a session (see [`crate::project`]): announced to the front
//! ends at the start, a typed `/NAME` of a command file expanded into its text, and the
//! workspace files a message names with `@path` attached to it.

use std::path::Path;

use tokio::sync::mpsc;

use super::conversation::Conversation;
use crate::model::ContentBlock;
use crate::project::files::{self, FileMention};
use crate::project::{ProjectContext, commands};
use crate::protocol::AgentEvent;
use crate::protocol::Event;
use crate::protocol::View;

/// Tells the front ends what was loaded (`/memory`, `/help`, completion).
pub(super) async fn announce(conv: &mut Conversation, project: &ProjectContext) {
    conv.emit(AgentEvent::View(View::Project(project.view())))
        .await;
    for file in &project.instructions.loaded {
        let loaded = crate::views::instructions_loaded(file, project.trusted);
        conv.tell(Event::InstructionsLoaded(loaded)).await;
    }
}

/// Lists the workspace's files for `@path` completion on a thread of its own: a large
/// tree must not hold up the session's start.
pub(super) fn list_files(workspace: &Path, events: mpsc::Sender<AgentEvent>) {
    let workspace = workspace.to_path_buf();
    tokio::spawn(async move {
        let listed = tokio::task::spawn_blocking(move || files::workspace_files(&workspace)).await;
        if let Ok(files) = listed {
            let _ = events
                .send(AgentEvent::View(View::WorkspaceFiles(files)))
                .await;
        }
    });
}

/// What a typed message sends: the command file's text when it starts with `/NAME` of
/// one (with the arguments substituted), else the message itself; and the model the
/// command file asks for its turn.
pub(super) async fn expand_command(
    conv: &Conversation,
    project: &ProjectContext,
    text: String,
) -> (String, Option<String>) {
    if text.trim() == "/init" {
        return (crate::project::INIT_PROMPT.to_string(), None);
    }
    let Some(typed) = commands::typed(&text, &project.commands) else {
        return (text, None);
    };
    conv.emit(AgentEvent::Fact(Event::Notice {
        message: format!(
            "/{} runs {}",
            typed.command.name,
            typed.command.path.display()
        ),
    }))
    .await;
    (
        typed.command.expand(typed.args),
        typed.command.model.clone(),
    )
}

/// The `@path` mentions of workspace files in `text` (words that are `@server:uri`
/// mentions of `servers` left to those).
pub(super) fn file_mentions(text: &str, workspace: &Path, servers: &[String]) -> Vec<FileMention> {
    files::mentions(text, workspace, |word| {
        word.strip_prefix('@')
            .and_then(|w| w.split_once(':'))
            .is_some_and(|(server, _)| servers.iter().any(|s| s == server))
    })
}

/// Attaches the files after the message's text, and tells the person what was attached,
/// cut or refused; a refused file is named to the model too, so it does not guess.
pub(super) async fn attach_files(
    conv: &Conversation,
    mentions: Vec<FileMention>,
    content: &mut Vec<ContentBlock>,
) {
    for mention in mentions {
        match mention {
            FileMention::Attached {
                path,
                text,
                chars,
                cut,
            } => {
                let cut = if cut {
                    format!(" — cut at {} characters", files::FILE_CAP)
                } else {
                    String::new()
                };
                conv.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("Attached @{path} ({chars} characters){cut}"),
                }))
                .await;
                content.push(ContentBlock::Text { text });
            }
            FileMention::Refused { path, why } => {
                conv.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("@{path} is not attached: {why}"),
                }))
                .await;
                content.push(ContentBlock::Text {
                    text: format!("[@{path} not attached: {why}]"),
                });
            }
        }
    }
}
