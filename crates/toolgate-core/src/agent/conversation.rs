//! The conversation part: the messages the model sees, the session log they are written
//! to, and the replay of a restored conversation. Everything the agent records goes
//! through [`Conversation::record`], so a failing log is reported once, in one place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc;

use crate::journal::{self, Journal, LoggedCall, Record, SessionLog, SharedLog};
use crate::model::{ContentBlock, Message, Role};
use crate::protocol::Event;
use crate::protocol::{AgentEvent, CallId, ToolOutcome};
use crate::protocol::{Live, ToolCallStart};

pub(super) struct Conversation {
    messages: Vec<Message>,
    /// Each message's estimated tokens (see `context`), kept beside it so that sizing a
    /// request is one sum, not a re-count of the whole history.
    tokens: Vec<u64>,
    pub session_id: String,
    log: Option<SessionLog>,
    /// The log's second handle, for sampling and server logs (see [`SharedLog`]).
    shared_log: SharedLog,
    events: mpsc::Sender<AgentEvent>,
}

impl Conversation {
    pub fn new(
        session_id: String,
        shared_log: SharedLog,
        events: mpsc::Sender<AgentEvent>,
    ) -> Self {
        Conversation {
            messages: Vec::new(),
            tokens: Vec::new(),
            session_id,
            log: None,
            shared_log,
            events,
        }
    }

    /// The messages the model sees.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Takes a restored conversation's messages.
    pub fn restore(&mut self, messages: Vec<Message>) {
        self.tokens = messages
            .iter()
            .map(super::context::message_tokens)
            .collect();
        self.messages = messages;
    }

    /// Estimated tokens of the messages.
    pub fn estimate(&self) -> u64 {
        self.tokens.iter().sum()
    }

    /// Applies a compaction, logs it and tells the front ends.
    pub async fn apply_compaction(&mut self, record: journal::redo::CompactionRecord) {
        let mut messages = std::mem::take(&mut self.messages);
        journal::redo::apply(&mut messages, &record);
        self.restore(messages);
        let report = record.report.clone();
        self.record(Journal::Compacted(record)).await;
        self.emit(AgentEvent::Fact(Event::Compacted(report))).await;
    }

    /// The channel to the front end.
    pub fn events(&self) -> &mpsc::Sender<AgentEvent> {
        &self.events
    }

    pub async fn emit(&self, event: AgentEvent) {
        // A front end that went away gets its Shutdown from the command reader.
        let _ = self.events.send(event).await;
    }

    /// The open session log, if any (tool outputs too long for the model are kept beside it).
    pub fn log(&self) -> Option<&SessionLog> {
        self.log.as_ref()
    }

    /// Appends to the session log; a failing log is reported once and then left alone,
    /// so a full disk never stops the conversation.
    pub async fn record(&mut self, record: impl Into<Record>) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        if let Err(e) = log.append(record) {
            tracing::warn!("session log: {e}");
            self.log = None;
            self.emit(AgentEvent::Fact(Event::Notice {
                message: format!("{e}; the rest of this session is not saved"),
            }))
            .await;
        }
    }

    /// A fact of the session: written to the session log and sent to the front end as the
    /// same [`Event`] (decision 0097).
    pub async fn tell(&mut self, event: Event) {
        self.record(event.clone()).await;
        self.emit(AgentEvent::Fact(event)).await;
    }

    /// Opens the session's log in `dir` (continued when `resumed`) and writes its first
    /// record.
    pub async fn open(
        &mut self,
        dir: Option<&Path>,
        resumed: bool,
        workspace: PathBuf,
        model: String,
    ) {
        let Some(dir) = dir else {
            return;
        };
        match SessionLog::open(dir, &self.session_id) {
            Ok(log) => {
                let second = log.another_handle();
                self.log = Some(log);
                if let Ok(second) = second {
                    *self
                        .shared_log
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(second);
                }
            }
            Err(e) => {
                self.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("{e}; this session is not saved"),
                }))
                .await;
                return;
            }
        }
        let record = if resumed {
            Record::from(Journal::Resumed { model })
        } else {
            Record::from(Event::SessionStart {
                session_id: self.session_id.clone(),
                model,
                workspace,
                servers: None,
                pool: None,
            })
        };
        self.record(record).await;
    }

    /// Shows a restored session as it was first seen: its messages, and the replies that
    /// broke off where they did.
    pub async fn replay_all(&self, restored: &journal::RestoredSession) {
        let mut cuts = restored.cut_replies.iter().peekable();
        let mut compactions = restored.compactions.iter().peekable();
        for (index, message) in restored.shown.iter().enumerate() {
            while let Some((_, cut)) = cuts.next_if(|(before, _)| *before <= index) {
                self.replay_cut(cut).await;
            }
            while let Some((_, report)) = compactions.next_if(|(before, _)| *before <= index) {
                self.emit(AgentEvent::Fact(Event::Compacted(report.clone())))
                    .await;
            }
            self.replay(message, &restored.tool_calls).await;
        }
        for (_, cut) in cuts {
            self.replay_cut(cut).await;
        }
        for (_, report) in compactions {
            self.emit(AgentEvent::Fact(Event::Compacted(report.clone())))
                .await;
        }
    }

    async fn replay_cut(&self, cut: &crate::protocol::ReplyCut) {
        self.emit(AgentEvent::Live(Live::TextDelta(cut.text.clone())))
            .await;
        self.emit(AgentEvent::Fact(Event::ReplyCut(cut.clone())))
            .await;
    }

    /// Shows a restored message as the events it was first seen as: prompts, replies, and
    /// each tool call's card with its result (`calls`: what the log adds to the messages).
    async fn replay(&self, message: &Message, calls: &HashMap<String, LoggedCall>) {
        for block in &message.content {
            match (message.role, block) {
                // What `@server:uri` attached was never a line the person typed.
                (Role::User, ContentBlock::Text { text })
                    if super::attachments::is_attachment_text(text) => {}
                (Role::User, ContentBlock::Text { text }) => {
                    self.emit(AgentEvent::Fact(Event::User { text: text.clone() }))
                        .await;
                }
                (Role::Assistant, ContentBlock::Text { text }) => {
                    self.emit(AgentEvent::Live(Live::TextDelta(text.clone())))
                        .await;
                    self.emit(AgentEvent::Live(Live::AssistantMessageDone))
                        .await;
                }
                (Role::Assistant, ContentBlock::ToolUse { id, name, input }) => {
                    self.emit(AgentEvent::Fact(Event::ToolStarted(ToolCallStart {
                        call_id: CallId::from(id.as_str()),
                        name: name.clone().into(),
                        server: calls.get(id).and_then(|c| c.server.clone()),
                        input: input.clone(),
                    })))
                    .await;
                }
                (
                    Role::User,
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        ..
                    },
                ) => {
                    // The log's outcome (denied, cancelled) where it has one; the message
                    // only knows error or not.
                    let outcome =
                        calls
                            .get(tool_use_id)
                            .and_then(|c| c.outcome)
                            .unwrap_or(if *is_error {
                                ToolOutcome::Error
                            } else {
                                ToolOutcome::Ok
                            });
                    self.emit(AgentEvent::Fact(Event::ToolFinished {
                        call_id: CallId::from(tool_use_id.as_str()),
                        name: calls
                            .get(tool_use_id)
                            .map(|c| c.name.clone())
                            .unwrap_or_default(),
                        outcome,
                        output: content.clone(),
                        full_output_path: None,
                    }))
                    .await;
                }
                _ => {}
            }
        }
    }

    /// Appends a user message, merging into a trailing user message (left by a failed or
    /// cancelled turn) because model APIs want roles to alternate.
    pub async fn push_user(&mut self, content: Vec<ContentBlock>) {
        self.record(Journal::Message {
            message: Message {
                role: Role::User,
                content: content.clone(),
            },
        })
        .await;
        match (self.messages.last_mut(), self.tokens.last_mut()) {
            (Some(last), Some(tokens)) if last.role == Role::User => {
                last.content.extend(content);
                *tokens = super::context::message_tokens(last);
            }
            _ => {
                let message = Message {
                    role: Role::User,
                    content,
                };
                self.tokens.push(super::context::message_tokens(&message));
                self.messages.push(message);
            }
        }
    }

    pub async fn push_assistant(&mut self, content: Vec<ContentBlock>) {
        let message = Message {
            role: Role::Assistant,
            content,
        };
        self.record(Journal::Message {
            message: message.clone(),
        })
        .await;
        self.tokens.push(super::context::message_tokens(&message));
        self.messages.push(message);
    }

    /// `/clear`: forgets the messages (the log keeps them, after a `cleared` record).
    pub async fn clear(&mut self) {
        self.messages.clear();
        self.tokens.clear();
        self.record(Journal::Cleared).await;
        self.emit(AgentEvent::Fact(Event::Notice {
            message: "Conversation cleared.".into(),
        }))
        .await;
    }
}

/// A new session's id, or the resumed one's.
pub(super) fn session_id(resume: Option<&str>) -> String {
    resume.map_or_else(journal::new_session_id, str::to_string)
}
