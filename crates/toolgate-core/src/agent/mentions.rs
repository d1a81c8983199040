//! `@server:uri` mentions in a typed message: each is read and attached to the message
//! (connecting a configured server first, through the usual checks); then the workspace
//! files it names with `@path` (`project.rs`).

use tokio_util::sync::CancellationToken;

use super::attachments::{Attached, attach_parts, mentions};
use super::conversation::Conversation;
use super::tools::ToolHost;
use crate::model::ContentBlock;
use crate::protocol::AgentEvent;
use crate::protocol::Event;

/// The content of a typed message: its text, then each `@server:uri` of a connected
/// server read and attached (text cut to the output budget with a marker, images as
/// image blocks). The person typed the mention, so no permission is asked; a read
/// that fails is a notice, and the model is told which mention could not be read.
pub(super) async fn user_content(
    tools: &mut ToolHost,
    conv: &mut Conversation,
    text: String,
    cancel: &CancellationToken,
) -> Vec<ContentBlock> {
    let configured = tools.hub.configured();
    let found = mentions(&text, &configured);
    let files = super::project::file_mentions(&text, &tools.workspace, &configured);
    let mut content = vec![ContentBlock::Text { text }];
    for (n, mention) in found.iter().enumerate() {
        let shown = format!("@{}:{}", mention.server, mention.uri);
        // Naming a configured server that is not connected yet connects it (through
        // the usual checks: a project server still asks), so `toolgate -p "… @docs:…"`
        // works without a connect_mcp first.
        if !tools.hub.is_connected(&mention.server) {
            let connected = tools
                .connect_server(conv, &mention.server, true, Some(cancel))
                .await;
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: connected.text.clone(),
            }))
            .await;
            if connected.is_error() {
                content.push(ContentBlock::Text {
                    text: format!("[{shown} could not be read: {}]", connected.text),
                });
                continue;
            }
        }
        let parts = match tools
            .hub
            .read_resource(&mention.server, &mention.uri, cancel)
            .await
        {
            Ok(parts) if parts.is_empty() => {
                conv.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("{shown}: the resource is empty"),
                }))
                .await;
                content.push(ContentBlock::Text {
                    text: format!("[{shown} is empty]"),
                });
                continue;
            }
            Ok(parts) => parts,
            Err(e) => {
                conv.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("Could not attach {shown}: {e}"),
                }))
                .await;
                content.push(ContentBlock::Text {
                    text: format!("[{shown} could not be read: {e}]"),
                });
                continue;
            }
        };
        let mut characters = 0;
        let mut images = 0;
        let mut truncated = false;
        let turn = conv.messages().len();
        for (i, attached) in attach_parts(&mention.server, &parts)
            .into_iter()
            .enumerate()
        {
            match attached {
                Attached::Text(text) => {
                    let id = format!("attachment-{turn}-{n}-{i}");
                    let (text, saved) = tools.fit_budget(conv, &id, text, true);
                    truncated |= saved.is_some() || text.contains("[output truncated");
                    characters += text.chars().count();
                    content.push(ContentBlock::Text { text });
                }
                Attached::Image(image) => {
                    images += 1;
                    content.push(ContentBlock::Text {
                        text: format!("[image {} from {shown} follows]", image.media_type),
                    });
                    content.push(ContentBlock::Image(image));
                }
            }
        }
        let mut what = Vec::new();
        if characters > 0 {
            what.push(format!("{characters} characters"));
        }
        if images > 0 {
            what.push(format!(
                "{images} image{}",
                if images == 1 { "" } else { "s" }
            ));
        }
        conv.emit(AgentEvent::Fact(Event::Notice {
            message: format!(
                "Attached {shown} ({}){}",
                what.join(", "),
                if truncated {
                    " — cut to the output budget"
                } else {
                    ""
                }
            ),
        }))
        .await;
    }
    super::project::attach_files(conv, files, &mut content).await;
    content
}
