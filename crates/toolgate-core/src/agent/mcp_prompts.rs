//! MCP prompts as slash commands: `/mcp__server__prompt …` fetches the prompt and its
//! messages enter the conversation with their roles; the model then answers.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use super::conversation::Conversation;
use crate::mcp::McpHub;
use crate::mcp::catalog::{PromptContent, PromptMessage, PromptRole, ResourcePart};
use crate::model::{ContentBlock, ImageData, Message, Role};
use crate::protocol::AgentEvent;
use crate::protocol::{Event, Live};

/// A prompt's messages as model messages: roles kept, consecutive messages of one role
/// merged (model APIs want roles to alternate). Text stays text; images are image blocks
/// in user messages (the model APIs take none from the assistant, so there they are
/// described); embedded resources become text with their URI; links name their URI.
pub fn prompt_messages(server: &str, messages: &[PromptMessage]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for m in messages {
        let role = match m.role {
            PromptRole::User => Role::User,
            PromptRole::Assistant => Role::Assistant,
        };
        let block = content_block(server, role, &m.content);
        match out.last_mut() {
            Some(last) if last.role == role => last.content.push(block),
            _ => out.push(Message {
                role,
                content: vec![block],
            }),
        }
    }
    out
}

fn content_block(server: &str, role: Role, content: &PromptContent) -> ContentBlock {
    let text = |text: String| ContentBlock::Text { text };
    match content {
        PromptContent::Text(t) => text(t.clone()),
        PromptContent::Image { mime_type, data } if role == Role::User => {
            ContentBlock::Image(ImageData {
                media_type: mime_type.clone(),
                data: data.clone(),
            })
        }
        PromptContent::Image { mime_type, data } => text(format!(
            "[image {mime_type} ({} bytes base64) not shown]",
            data.len()
        )),
        PromptContent::Resource(ResourcePart::Text {
            uri,
            mime_type,
            text: body,
        }) => text(super::attachments::tagged(
            server,
            uri,
            mime_type.as_deref(),
            body,
        )),
        PromptContent::Resource(ResourcePart::Blob {
            mime_type: Some(mime),
            blob,
            ..
        }) if role == Role::User
            && mime.starts_with("image/")
            && blob.len() <= super::attachments::MAX_IMAGE_BASE64 =>
        {
            ContentBlock::Image(ImageData {
                media_type: mime.clone(),
                data: blob.clone(),
            })
        }
        PromptContent::Resource(ResourcePart::Blob {
            uri,
            mime_type,
            blob,
        }) => text(format!(
            "[resource {uri} is binary ({}, {} bytes base64): not shown]",
            mime_type.as_deref().unwrap_or("unknown type"),
            blob.len()
        )),
        PromptContent::Link { uri } => text(format!("[resource link {uri}]")),
        PromptContent::Other(described) => text(described.clone()),
    }
}

/// What the transcript shows of a message: its text, images named.
fn shown(message: &Message) -> String {
    message
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image(image) => format!("[image {}]", image.media_type),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `/mcp__server__prompt`: fetches the prompt and shows its messages; they open the turn
/// that lets the model answer. None when there is nothing to run (the failure or the empty
/// prompt was reported and the turn is finished).
pub(super) async fn opening(
    hub: &McpHub,
    conv: &Conversation,
    (server, prompt): (&str, &str),
    arguments: &HashMap<String, String>,
    cancel: &CancellationToken,
) -> Option<Vec<Message>> {
    let fetched = hub.get_prompt(server, prompt, arguments, cancel).await;
    let messages = match fetched {
        Ok(result) => prompt_messages(server, &result.messages),
        Err(e) => {
            conv.emit(AgentEvent::Fact(Event::Error {
                message: format!("/mcp__{server}__{prompt}: {e}"),
            }))
            .await;
            Vec::new()
        }
    };
    if messages.is_empty() {
        conv.emit(AgentEvent::Fact(Event::TurnFinished {
            usage: Default::default(),
            cancelled: cancel.is_cancelled(),
            model_calls: None,
            exit_code: None,
        }))
        .await;
        return None;
    }
    for message in &messages {
        match message.role {
            Role::User => {
                conv.emit(AgentEvent::Fact(Event::User {
                    text: shown(message),
                }))
                .await
            }
            Role::Assistant => {
                conv.emit(AgentEvent::Live(Live::TextDelta(shown(message))))
                    .await;
                conv.emit(AgentEvent::Live(Live::AssistantMessageDone))
                    .await;
            }
        }
    }
    if messages.last().is_some_and(|m| m.role == Role::Assistant) {
        conv.emit(AgentEvent::Fact(Event::Notice {
            message: format!(
                "The prompt {prompt} ends with an assistant message; send a message to continue."
            ),
        }))
        .await;
    }
    Some(messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_kept_and_runs_of_one_role_merged() {
        let messages = vec![
            PromptMessage {
                role: PromptRole::User,
                content: PromptContent::Text("review this".into()),
            },
            PromptMessage {
                role: PromptRole::User,
                content: PromptContent::Resource(ResourcePart::Text {
                    uri: "f://a.rs".into(),
                    mime_type: None,
                    text: "fn main() {}".into(),
                }),
            },
            PromptMessage {
                role: PromptRole::Assistant,
                content: PromptContent::Image {
                    mime_type: "image/png".into(),
                    data: "iVBO".into(),
                },
            },
            PromptMessage {
                role: PromptRole::User,
                content: PromptContent::Image {
                    mime_type: "image/png".into(),
                    data: "iVBO".into(),
                },
            },
        ];
        let out = prompt_messages("s", &messages);
        assert_eq!(
            out,
            vec![
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::Text {
                            text: "review this".into()
                        },
                        ContentBlock::Text {
                            text: "<resource server=\"s\" uri=\"f://a.rs\">\nfn main() {}\n</resource>"
                                .into()
                        },
                    ],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::Text {
                        text: "[image image/png (4 bytes base64) not shown]".into()
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::Image(ImageData {
                        media_type: "image/png".into(),
                        data: "iVBO".into()
                    })],
                },
            ]
        );
    }
}
