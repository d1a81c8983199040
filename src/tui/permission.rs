//! The permission dialog's state: a queue of pending questions, the highlighted answer,
//! the note being typed, and the guard window that swallows keys typed before the user
//! could have read the question.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::agent::events::{PermissionKind, PermissionRequest, UserDecision};
use crate::policy::Verdict;
use crate::pool::PoolTool;
use crate::sanitize::for_terminal;

/// Keys arriving this soon after a dialog opens are ignored.
pub const GUARD_WINDOW: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    AllowOnce,
    AllowSession,
    AllowAlways,
    Deny,
    DenyWithNote,
}

impl Choice {
    pub fn key(self) -> char {
        match self {
            Choice::AllowOnce => 'y',
            Choice::AllowSession => 'a',
            Choice::AllowAlways => 's',
            Choice::Deny => 'n',
            Choice::DenyWithNote => 'd',
        }
    }
}

/// A question as the dialog shows it: every field already cleaned for the terminal.
#[derive(Debug)]
pub struct Question {
    pub kind: PermissionKind,
    pub call_id: String,
    pub tool: PoolTool,
    pub why: String,
    pub verdict: Verdict,
    /// Pretty-printed arguments.
    pub arguments: String,
    reply: oneshot::Sender<UserDecision>,
}

impl Question {
    pub fn from_request(req: PermissionRequest) -> Self {
        let mut tool = req.tool;
        tool.name = for_terminal(&tool.name);
        tool.description = for_terminal(&tool.description);
        if let crate::pool::ToolOrigin::Mcp { server, tool: raw } = &mut tool.origin {
            *server = for_terminal(server);
            *raw = for_terminal(raw);
        }
        if let Some(t) = &mut tool.claims.title {
            *t = for_terminal(t);
        }
        let mut verdict = req.verdict;
        verdict.rule = for_terminal(&verdict.rule);
        Question {
            kind: req.kind,
            call_id: for_terminal(&req.call_id),
            tool,
            why: for_terminal(&req.why),
            verdict,
            arguments: pretty(&req.input),
            reply: req.reply,
        }
    }

    /// The answers this kind of question offers, in display order.
    pub fn choices(&self) -> &'static [Choice] {
        match self.kind {
            PermissionKind::ToolCall => &[
                Choice::AllowOnce,
                Choice::AllowSession,
                Choice::AllowAlways,
                Choice::Deny,
                Choice::DenyWithNote,
            ],
            PermissionKind::WorkspaceTrust | PermissionKind::ProjectServer => {
                &[Choice::AllowOnce, Choice::AllowAlways, Choice::Deny]
            }
        }
    }

    pub fn label(&self, choice: Choice) -> &'static str {
        match (&self.kind, choice) {
            (PermissionKind::ToolCall, Choice::AllowOnce) => "Allow once",
            (PermissionKind::ToolCall, Choice::AllowSession) => "Allow this session",
            (PermissionKind::ToolCall, Choice::AllowAlways) => "Always (save rule)",
            (PermissionKind::ToolCall, Choice::Deny) => "Deny",
            (_, Choice::DenyWithNote) => "Deny with note",
            (PermissionKind::WorkspaceTrust, Choice::AllowOnce) => "Trust this session",
            (PermissionKind::ProjectServer, Choice::AllowOnce) => "Start it this session",
            (_, Choice::AllowSession) => "This session",
            (PermissionKind::WorkspaceTrust, Choice::AllowAlways) => "Always trust",
            (PermissionKind::ProjectServer, Choice::AllowAlways) => "Always allow",
            (PermissionKind::WorkspaceTrust, Choice::Deny) => "Don't trust",
            (PermissionKind::ProjectServer, Choice::Deny) => "Don't start",
        }
    }

    pub fn is_abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

fn pretty(input: &Value) -> String {
    // serde_json escapes control characters inside strings; the sanitizer is belt and braces.
    let text = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
    for_terminal(&text)
}

/// The answer to deliver: which request, what, and the channel it goes back on.
#[derive(Debug)]
pub struct Answer {
    pub call_id: String,
    pub kind: PermissionKind,
    /// Model-facing tool name (what a session grant is keyed by).
    pub tool: String,
    pub decision: UserDecision,
    pub reply: oneshot::Sender<UserDecision>,
}

#[derive(Debug)]
pub struct Pending {
    pub question: Question,
    /// When this question reached the front of the queue (None while it waits).
    pub shown_at: Option<Instant>,
    pub highlight: Choice,
    /// Some while the user types a note for "deny with note".
    pub note: Option<String>,
    pub scroll: u16,
}

#[derive(Debug, Default)]
pub struct PermissionQueue {
    queue: VecDeque<Pending>,
}

/// What a key did to the dialog.
#[derive(Debug)]
pub enum KeyResult {
    /// Swallowed (guard window, scrolling, typing, moving the highlight).
    Consumed,
    Answered(Answer),
    /// Not for the dialog (Ctrl+C goes through to cancel the turn).
    NotHandled,
}

impl PermissionQueue {
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn front(&self) -> Option<&Pending> {
        self.queue.front()
    }

    pub fn push(&mut self, question: Question, now: Instant) {
        let shown_at = if self.queue.is_empty() {
            Some(now)
        } else {
            None
        };
        self.queue.push_back(Pending {
            question,
            shown_at,
            highlight: Choice::Deny,
            note: None,
            scroll: 0,
        });
    }

    /// Drops questions the agent stopped waiting for (turn cancelled). True if any went.
    pub fn prune(&mut self, now: Instant) -> bool {
        let before = self.queue.len();
        self.queue.retain(|p| !p.question.is_abandoned());
        self.show_front(now);
        before != self.queue.len()
    }

    fn show_front(&mut self, now: Instant) {
        if let Some(front) = self.queue.front_mut()
            && front.shown_at.is_none()
        {
            front.shown_at = Some(now);
        }
    }

    /// When the front dialog starts accepting keys, if that is still ahead.
    pub fn guard_ends(&self, now: Instant) -> Option<Instant> {
        let end = self.queue.front()?.shown_at? + GUARD_WINDOW;
        (end > now).then_some(end)
    }

    pub fn in_guard(&self, now: Instant) -> bool {
        self.guard_ends(now).is_some()
    }

    fn answer(&mut self, decision: UserDecision, now: Instant) -> KeyResult {
        let Some(pending) = self.queue.pop_front() else {
            return KeyResult::NotHandled;
        };
        self.show_front(now);
        KeyResult::Answered(Answer {
            call_id: pending.question.call_id,
            kind: pending.question.kind,
            tool: pending.question.tool.name,
            decision,
            reply: pending.question.reply,
        })
    }

    fn decide(&mut self, choice: Choice, now: Instant) -> KeyResult {
        let decision = match choice {
            Choice::AllowOnce => UserDecision::AllowOnce,
            Choice::AllowSession => UserDecision::AllowSession,
            Choice::AllowAlways => UserDecision::AllowAlways,
            Choice::Deny => UserDecision::Deny,
            Choice::DenyWithNote => {
                if let Some(front) = self.queue.front_mut() {
                    front.note = Some(String::new());
                }
                return KeyResult::Consumed;
            }
        };
        self.answer(decision, now)
    }

    pub fn paste(&mut self, text: &str) {
        if let Some(front) = self.queue.front_mut()
            && let Some(note) = &mut front.note
        {
            note.push_str(&for_terminal(text).replace('\n', " "));
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> KeyResult {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return KeyResult::NotHandled;
        }
        if self.in_guard(now) {
            return KeyResult::Consumed;
        }
        let Some(front) = self.queue.front_mut() else {
            return KeyResult::NotHandled;
        };
        if let Some(note) = &mut front.note {
            match key.code {
                KeyCode::Enter => {
                    let note = note.trim().to_string();
                    let decision = if note.is_empty() {
                        UserDecision::Deny
                    } else {
                        UserDecision::DenyWithNote(note)
                    };
                    return self.answer(decision, now);
                }
                KeyCode::Esc => front.note = None,
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Char(c) => note.push(c),
                _ => {}
            }
            return KeyResult::Consumed;
        }
        let choices = front.question.choices();
        let pos = choices
            .iter()
            .position(|c| *c == front.highlight)
            .unwrap_or(0);
        match key.code {
            KeyCode::Esc => return self.decide(Choice::Deny, now),
            KeyCode::Char(c) => {
                if let Some(choice) = choices.iter().find(|ch| ch.key() == c) {
                    return self.decide(*choice, now);
                }
            }
            KeyCode::Enter => {
                let choice = front.highlight;
                return self.decide(choice, now);
            }
            KeyCode::Left | KeyCode::BackTab => {
                front.highlight = choices[pos.saturating_sub(1)];
            }
            KeyCode::Right | KeyCode::Tab => {
                front.highlight = choices[(pos + 1).min(choices.len() - 1)];
            }
            KeyCode::Up => front.scroll = front.scroll.saturating_sub(1),
            KeyCode::Down => front.scroll = front.scroll.saturating_add(1),
            KeyCode::PageUp => front.scroll = front.scroll.saturating_sub(10),
            KeyCode::PageDown => front.scroll = front.scroll.saturating_add(10),
            _ => {}
        }
        KeyResult::Consumed
    }
}
