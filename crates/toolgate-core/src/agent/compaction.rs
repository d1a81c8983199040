//! Compaction: making the conversation fit the model's window again, in two steps.
//!
//! 1. **Shed old tool outputs.** Bulky tool results outside the recent part are replaced by
//!    a note naming the file that keeps their full text (the session folder). Nothing is
//!    asked of the model; the calls and every other word stay as they were.
//! 2. **Summarize.** When shedding is not enough (or the person asked with `/compact`), the
//!    older part is written out as a plain transcript and the model summarizes it; the
//!    conversation continues from the summary plus the recent messages. The cut is made
//!    only where no tool_use is parted from its tool_result.
//!
//! What was done is one [`CompactionRecord`]; the journal's [`apply`] replays it, live and
//! when a session is resumed, so both see the same messages.

use std::collections::HashSet;
use std::path::Path;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::context::{ContextMeter, est, message_tokens};
use crate::journal::redo::{ClearedOutput, CompactionRecord, apply};
use crate::model::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, Role, StreamEvent,
};
use crate::protocol::{CompactionReport, CompactionTrigger};

/// A tool output smaller than this (estimated tokens) is not worth a note in its place.
const BULKY_OUTPUT_TOKENS: u64 = 250;
/// What the summary request may ask for.
const SUMMARY_MAX_TOKENS: u32 = 4_096;
/// The first line of the message that holds a summary.
pub(super) const SUMMARY_HEADER: &str = "[Summary of the earlier conversation, written when toolgate compacted it to fit the model's context window. The full history is in the session log.]";

/// What a compaction is asked to do.
pub(super) struct Ask<'a> {
    pub trigger: CompactionTrigger,
    pub focus: Option<String>,
    /// Estimated tokens of the request beyond its messages (system prompt, tools).
    pub fixed: u64,
    /// What toolgate itself keeps across the summary: connected servers, loaded tools.
    pub state: &'a [String],
    /// `sessions/<id>/`, where cleared outputs are kept whole.
    pub files_dir: Option<&'a Path>,
}

#[derive(Debug, thiserror::Error)]
pub(super) enum CompactError {
    #[error("the summary request failed: {0}")]
    Model(ModelError),
    #[error("the summary request was cancelled")]
    Cancelled,
}

/// Plans and runs a compaction of `messages`; returns the record to apply (the caller
/// applies and logs it). Ok(None): nothing could be shed or summarized.
pub(super) async fn compact(
    model: &dyn ModelProvider,
    messages: &[Message],
    meter: &ContextMeter,
    ask: Ask<'_>,
    cancel: &CancellationToken,
) -> Result<Option<CompactionRecord>, CompactError> {
    let tokens: Vec<u64> = messages.iter().map(message_tokens).collect();
    let before = ask.fixed + tokens.iter().sum::<u64>();
    let target = meter.estimate_for(meter.target());
    // The recent part is kept word for word: about a quarter of what a compaction aims
    // for. `/compact` keeps only what the model is still working on (as Claude Code's
    // and Codex's do): a finished exchange is summarized whole.
    let recent_budget = match ask.trigger {
        CompactionTrigger::Manual => 0,
        CompactionTrigger::Auto | CompactionTrigger::Overflow => {
            target.saturating_sub(ask.fixed) / 2
        }
    };
    let protected_from = recent_start(&tokens, recent_budget);

    let (cleared, saved) = shed(messages, &tokens, protected_from, ask.fixed, target, &ask);
    let mut after = before - saved;
    let summarize = match ask.trigger {
        CompactionTrigger::Manual => true,
        CompactionTrigger::Auto | CompactionTrigger::Overflow => after > target,
    };
    let mut record = CompactionRecord {
        report: CompactionReport {
            trigger: ask.trigger,
            tokens_before: meter.tokens(before),
            tokens_after: 0,
            cleared_outputs: cleared.len(),
            summarized_messages: 0,
            kept_messages: messages.len(),
        },
        cleared,
        kept_from: 0,
        summary: None,
        focus: ask.focus.clone(),
    };
    if summarize && let Some(split) = split_point(messages, &tokens, recent_budget) {
        let mut shed_view = messages[..split].to_vec();
        apply(&mut shed_view, &record);
        let summary = summarize_part(model, &shed_view, meter, &ask, cancel).await?;
        let text = summary_message(&summary, &shed_view, ask.state);
        after = ask.fixed + est(&text) + messages[split..].iter().map(message_tokens).sum::<u64>();
        record.summary = Some(text);
        record.kept_from = split;
        record.report.summarized_messages = split;
        record.report.kept_messages = messages.len() - split;
    }
    if record.summary.is_none() && record.cleared.is_empty() {
        return Ok(None);
    }
    record.report.tokens_after = meter.tokens(after);
    Ok(Some(record))
}

/// The index from which the messages fit `budget` (at least the last message).
/// What stays true after a compaction, said in the summary: connected servers and tools
/// loaded with search_tools.
pub(super) fn kept_state(servers: Vec<String>, loaded: &[String]) -> Vec<String> {
    let mut state = Vec::new();
    if !servers.is_empty() {
        state.push(format!(
            "Connected MCP servers (still connected): {}",
            servers.join(", ")
        ));
    }
    if !loaded.is_empty() {
        state.push(format!(
            "Tools loaded with search_tools (still loaded): {}",
            loaded.join(", ")
        ));
    }
    state
}

fn recent_start(tokens: &[u64], budget: u64) -> usize {
    let mut sum = 0;
    for (at, t) in tokens.iter().enumerate().rev() {
        sum += t;
        if sum > budget {
            return (at + 1).min(tokens.len().saturating_sub(1));
        }
    }
    0
}

/// Replaces bulky tool results before `protected_from`, oldest first, until the request
/// fits `target`; each full text is kept in the session folder. Returns the notes and the
/// tokens saved.
fn shed(
    messages: &[Message],
    tokens: &[u64],
    protected_from: usize,
    fixed: u64,
    target: u64,
    ask: &Ask<'_>,
) -> (Vec<ClearedOutput>, u64) {
    let mut total = fixed + tokens.iter().sum::<u64>();
    let mut cleared = Vec::new();
    let mut saved = 0;
    let blocks = messages[..protected_from]
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                images,
                ..
            } => Some((tool_use_id, content, images.len())),
            _ => None,
        });
    for (call_id, content, images) in blocks {
        // Manual and overflow compactions summarize anyway; shedding first keeps the
        // transcript the model summarizes small.
        if total <= target && ask.trigger == CompactionTrigger::Auto {
            break;
        }
        let size = est(content) + 1_600 * images as u64;
        if size < BULKY_OUTPUT_TOKENS || content.starts_with(CLEARED_NOTE_START) {
            continue;
        }
        let note = cleared_note(call_id, content, ask.files_dir);
        let gain = size.saturating_sub(est(&note));
        total -= gain;
        saved += gain;
        cleared.push(ClearedOutput {
            call_id: call_id.clone(),
            note,
        });
    }
    (cleared, saved)
}

const CLEARED_NOTE_START: &str = "[toolgate cleared this tool output";

/// The note that replaces a cleared output; its full text is written beside the session
/// log (once: an output cut to the budget is there already under the same name).
fn cleared_note(call_id: &str, content: &str, files_dir: Option<&Path>) -> String {
    let saved = files_dir.and_then(|dir| {
        let dir = dir.join("tool-outputs");
        let path = dir.join(format!("{}.txt", crate::pool::normalize(call_id)));
        if path.exists() {
            return Some(path);
        }
        match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, content)) {
            Ok(()) => Some(path),
            Err(e) => {
                tracing::warn!("keeping a cleared tool output: {e}");
                None
            }
        }
    });
    let first_line: String = content
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(120)
        .collect();
    match saved {
        Some(path) => format!(
            "{CLEARED_NOTE_START} to save context ({} characters, first line: {first_line:?}). The full output is in {}; read it with read_file or call the tool again if you need it.]",
            content.chars().count(),
            path.display()
        ),
        None => format!(
            "{CLEARED_NOTE_START} to save context ({} characters, first line: {first_line:?}). Call the tool again if you need it.]",
            content.chars().count()
        ),
    }
}

/// Where the summarized part ends: the smallest index whose tail fits `budget`, at a
/// message no tool_result of an earlier tool_use opens. None when nothing is before it.
fn split_point(messages: &[Message], tokens: &[u64], budget: u64) -> Option<usize> {
    let starts_cleanly = |at: usize| {
        at == messages.len()
            || !messages[at]
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
    };
    let mut tail = 0;
    let mut best = None;
    for at in (1..=messages.len()).rev() {
        if at < messages.len() {
            tail += tokens[at];
        }
        // The last message is always kept unless it ends a finished exchange (the model's
        // reply), so the model sees the result it is working on.
        let keeps_enough = at < messages.len() || messages[at - 1].role == Role::Assistant;
        if !keeps_enough || !starts_cleanly(at) {
            continue;
        }
        if tail > budget && best.is_some() {
            break;
        }
        best = Some(at);
    }
    best
}

/// Asks the model for a summary of `part`, cutting the transcript down step by step
/// when it (or the API) says it is too long.
async fn summarize_part(
    model: &dyn ModelProvider,
    part: &[Message],
    meter: &ContextMeter,
    ask: &Ask<'_>,
    cancel: &CancellationToken,
) -> Result<String, CompactError> {
    // What the summary request may take: half the window, leaving room for the reply.
    let budget = meter.estimate_for(meter.window() / 2);
    let mut level = 0;
    loop {
        let transcript = transcript(part, level, budget);
        let mut prompt = transcript;
        prompt.push_str("\n\n");
        prompt.push_str(crate::model::SUMMARY_INSTRUCTIONS);
        if let Some(focus) = &ask.focus {
            prompt.push_str("\n\nFocus the summary on: ");
            prompt.push_str(focus);
        }
        let request = ModelRequest {
            system: crate::model::SUMMARY_SYSTEM_PROMPT.to_string(),
            messages: vec![Message::user_text(prompt)],
            tools: Vec::new(),
            max_tokens: SUMMARY_MAX_TOKENS,
            sampling: Default::default(),
        };
        match ask_model(model, request, cancel).await {
            Err(ModelError::ContextOverflow { .. }) if level < LAST_LEVEL => level += 1,
            Err(e) => return Err(CompactError::Model(e)),
            Ok(None) => return Err(CompactError::Cancelled),
            Ok(Some(text)) => return Ok(text),
        }
    }
}

async fn ask_model(
    model: &dyn ModelProvider,
    request: ModelRequest,
    cancel: &CancellationToken,
) -> Result<Option<String>, ModelError> {
    let mut stream = model.stream(request);
    let mut text = String::new();
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(None),
            next = stream.next() => next,
        };
        match next {
            None => return Ok(Some(text)),
            Some(Err(e)) => return Err(e),
            Some(Ok(StreamEvent::TextDelta(delta))) => text.push_str(&delta),
            // A retried attempt starts the reply over.
            Some(Ok(StreamEvent::Retrying(_))) => text.clear(),
            Some(Ok(_)) => {}
        }
    }
}

/// How hard the transcript is cut: tool outputs to 2,000 characters, then to 300, then
/// left out, then the oldest messages dropped (the first, the task, is always kept).
const LAST_LEVEL: usize = 3;

fn transcript(part: &[Message], level: usize, budget: u64) -> String {
    let output_cap = [2_000, 300, 0, 0][level.min(LAST_LEVEL)];
    let mut names = std::collections::HashMap::new();
    let mut entries: Vec<String> = Vec::new();
    for message in part {
        for block in &message.content {
            let entry = match (message.role, block) {
                (Role::User, ContentBlock::Text { text }) => format!("USER: {text}"),
                (Role::Assistant, ContentBlock::Text { text }) => format!("ASSISTANT: {text}"),
                (_, ContentBlock::ToolUse { id, name, input }) => {
                    names.insert(id.as_str(), name.as_str());
                    format!("ASSISTANT called {name} {}", cut(&input.to_string(), 500))
                }
                (
                    _,
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        ..
                    },
                ) => {
                    let name = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                    let status = if *is_error { "error" } else { "result" };
                    if output_cap == 0 {
                        format!(
                            "{name} {status}: ({} characters, left out)",
                            content.chars().count()
                        )
                    } else {
                        format!("{name} {status}: {}", cut(content, output_cap))
                    }
                }
                (_, ContentBlock::Image(_)) => "(an image)".to_string(),
                // The model's private reasoning is not part of what the summary keeps.
                (_, ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }) => {
                    continue;
                }
            };
            entries.push(entry);
        }
    }
    let mut text = entries.join("\n\n");
    if level >= LAST_LEVEL {
        // Drop the oldest entries after the first until the rest fits.
        while est(&text) > budget && entries.len() > 2 {
            entries.remove(1);
            text = format!(
                "{}\n\n(earlier messages left out)\n\n{}",
                entries[0],
                entries[1..].join("\n\n")
            );
        }
    }
    text
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
        None => text.to_string(),
    }
}

/// The message that stands for the summarized part: the model's summary and what
/// toolgate knows for certain (files the part touched, servers and tools in the pool).
fn summary_message(summary: &str, part: &[Message], state: &[String]) -> String {
    let mut read = Vec::new();
    let mut changed = Vec::new();
    let mut seen = HashSet::new();
    for block in part.iter().flat_map(|m| &m.content) {
        let ContentBlock::ToolUse { name, input, .. } = block else {
            continue;
        };
        let Some(kind) = crate::builtin::BuiltinId::from_name(name) else {
            continue;
        };
        let Some(path) = kind
            .path_field()
            .and_then(|field| input.get(field))
            .and_then(|p| p.as_str())
        else {
            continue;
        };
        if !seen.insert((kind.writes_files(), path.to_string())) {
            continue;
        }
        if kind.writes_files() {
            changed.push(path.to_string());
        } else if kind
            .file_access()
            .is_some_and(|access| access.locate == crate::builtin::Locate::Path)
        {
            // A file named by its path (read_file), not a listing by pattern (glob).
            read.push(path.to_string());
        }
    }
    let mut text = format!("{SUMMARY_HEADER}\n\n{}", summary.trim());
    if !changed.is_empty() {
        text.push_str(&format!(
            "\n\nFiles written or edited: {}",
            changed.join(", ")
        ));
    }
    if !read.is_empty() {
        text.push_str(&format!("\n\nFiles read: {}", read.join(", ")));
    }
    for line in state {
        text.push_str("\n\n");
        text.push_str(line);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(text: &str) -> Message {
        Message::user_text(text)
    }

    fn call(id: &str, path: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "read_file".into(),
                input: json!({ "path": path }),
            }],
        }
    }

    fn result(id: &str, size: usize) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: "x".repeat(size),
                is_error: false,
                images: vec![],
            }],
        }
    }

    /// A task, then `n` reads of `size` characters each.
    fn reads(n: usize, size: usize) -> Vec<Message> {
        let mut messages = vec![user("read every file")];
        for i in 0..n {
            messages.push(call(&format!("t{i}"), &format!("f{i}.txt")));
            messages.push(result(&format!("t{i}"), size));
        }
        messages
    }

    #[test]
    fn the_split_never_parts_a_tool_use_from_its_result() {
        let messages = reads(10, 4_000);
        let tokens: Vec<u64> = messages.iter().map(message_tokens).collect();
        for budget in [0, 500, 1_500, 3_000, 100_000] {
            if let Some(at) = split_point(&messages, &tokens, budget) {
                assert!(at >= 1);
                assert_eq!(messages[at].role, Role::Assistant, "budget {budget}: {at}");
            }
        }
        // A small budget still keeps the latest call and its result.
        assert_eq!(split_point(&messages, &tokens, 0), Some(messages.len() - 2));
        // A finished exchange may be summarized whole.
        let mut done = messages.clone();
        done.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: "ok".into() }],
        });
        let tokens: Vec<u64> = done.iter().map(message_tokens).collect();
        assert_eq!(split_point(&done, &tokens, 0), Some(done.len()));
    }

    #[test]
    fn applying_a_record_replaces_the_part_and_the_notes() {
        let mut messages = reads(3, 100);
        let record = CompactionRecord {
            report: CompactionReport {
                trigger: CompactionTrigger::Auto,
                tokens_before: 0,
                tokens_after: 0,
                cleared_outputs: 1,
                summarized_messages: 3,
                kept_messages: 4,
            },
            cleared: vec![ClearedOutput {
                call_id: "t2".into(),
                note: "cleared".into(),
            }],
            kept_from: 3,
            summary: Some("the summary".into()),
            focus: None,
        };
        apply(&mut messages, &record);
        assert_eq!(messages.len(), 5);
        assert_eq!(messages[0], user("the summary"));
        assert_eq!(messages[1].role, Role::Assistant);
        let ContentBlock::ToolResult { content, .. } = &messages[4].content[0] else {
            panic!("a result");
        };
        assert_eq!(content, "cleared");
    }

    #[test]
    fn the_transcript_is_cut_harder_at_each_level() {
        let part = reads(20, 5_000);
        let sizes: Vec<usize> = (0..=LAST_LEVEL)
            .map(|level| transcript(&part, level, 200).len())
            .collect();
        assert!(sizes.windows(2).all(|w| w[0] > w[1]), "{sizes:?}");
        assert!(transcript(&part, LAST_LEVEL, 200).starts_with("USER: read every file"));
    }

    #[test]
    fn the_summary_message_lists_the_files_and_the_state() {
        let mut part = reads(1, 10);
        part.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "w".into(),
                name: "write_file".into(),
                input: json!({"path": "out.txt", "content": "x"}),
            }],
        });
        let text = summary_message(
            "Did things.",
            &part,
            &["Connected MCP servers: docs".into()],
        );
        assert!(text.starts_with(SUMMARY_HEADER));
        assert!(text.contains("Did things."));
        assert!(text.contains("Files written or edited: out.txt"));
        assert!(text.contains("Files read: f0.txt"));
        assert!(text.ends_with("Connected MCP servers: docs"));
    }
}
