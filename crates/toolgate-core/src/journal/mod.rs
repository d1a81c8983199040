//! The journal: the session log and its hash chain ([`chain`]), written by the agent and
//! read by a resume, `toolgate audit` and `toolgate undo`.
//!
//! The session log: one JSONL file per session, `state_dir()/sessions/<id>.jsonl`, one record
//! per line, flushed as each is written so a crash loses at most the line being written.
//! A write cut short (a full disk, a kill) leaves a last line without its newline; the next
//! append starts on a new line, so only the cut record is lost, never the next one too.
//!
//! # Record schema
//!
//! Every line is a JSON object with `ts` (RFC 3339, UTC), `type`, and (since the hash
//! chain, [`chain`]) `seq` and `prev`, plus (since decision 0090) `chain` on the
//! `session_start` and `resumed` records: the chain rule the writer follows, so a file
//! whose links were stripped is known to have had them. A record is a protocol `Event`
//! (the same fields as the JSONL line of the same `type`, docs/EVENTS.md) or one of the
//! journal's own ([`Journal`]). Then:
//!
//! | `type`            | fields |
//! |-------------------|--------|
//! | `session_start`   | `session_id`, `model` (label, e.g. `scripted demo`), `workspace` (path) |
//! | `resumed`         | `model` — the session was continued (`--continue` / `--resume ID`) |
//! | `sandbox`         | `problem` (null when bash runs confined as configured, else why not), `status` (what the kernel offers), `bash` (bash's profile) |
//! | `message`         | `message`: `{role: "user"\|"assistant", content: [block…]}` exactly as the model receives it; blocks are `{type:"text",text}`, `{type:"tool_use",id,name,input}`, `{type:"tool_result",tool_use_id,content,is_error}` |
//! | `tool_started`    | `call_id`, `name` (model-facing), `server` (null for built-ins), `input` (`tool_call` before decision 0097) |
//! | `tool_finished`   | `call_id`, `name`, `outcome` (`ok`\|`error`\|`denied`\|`cancelled`), `output` (what the model got), `full_output_path` (only when the output was truncated) (`tool_result`, without `name`, before decision 0097) |
//! | `permission_decided` | (`permission` before decision 0097) `call_id`, then the policy's `AuditRecord`: `time`, `tool`, `input_digest`, `decision` (`allow`\|`deny`), `why` (optional), `decider` (who decided; see docs/EVENTS.md) |
//! | `connect`         | `server`, `tools` (raw MCP tool names) |
//! | `disconnect`      | `server` |
//! | `turn_finished`   | `usage` `{input_tokens, output_tokens}`, `cancelled`, `model_calls` |
//! | `error`           | `message` |
//! | `cleared`         | — the user cleared the conversation (connections stay) |
//! | `checkpoint`      | `checkpoint` (id in the workspace's checkpoint log), `turn` (1 = the session's first message), `commit` (the shadow repository's snapshot), `skipped` (files over the size limit, not recorded; omitted when none) — taken before the turn first changed the workspace |
//! | `turn_changes`    | `checkpoint`, `files` `[{path, change: created\|modified\|deleted\|type_changed}]` — what differs at the turn's end; only when something does |
//! | `undo`            | `checkpoint`, `restored` (same shape as `files`) — the turn's files were put back (`/undo`, `toolgate undo`) |
//! | `sampling`        | `server`, `max_tokens` (asked), `system_prompt`, `messages` `[{role, text}]`, `decision` (an `AuditRecord`, tool `sampling(SERVER)`; absent when refused before the policy), `outcome` `{kind: answered\|refused\|failed\|withdrawn, …}` (`answered`: `model`, `stop_reason`, `usage`, `text`; `refused`: `reason`; `failed`: `error`, `usage`) — a server's `sampling/createMessage` |
//! | `server_log`      | `server`, `level` (`debug` … `emergency`), `message` — a server's `notifications/message` |
//! | `model_retry`     | `attempt` (the one that follows), `max_attempts`, `wait_ms`, `reason` (`overloaded`\|`rate_limited`\|`server_error`\|`connection`\|`cut`), `detail` — a model request failed and was sent again |
//! | `model_switched`  | `model` (the model's name, e.g. `claude-opus-4-1`) — `/model` switched the model for the requests after it; a resumed session goes on with the last one |
//! | `flow_labels`     | `call_id`, `call` (the call's number in the session), `tool`, `text` / `record` (`[{kind: url\|email\|account\|digits, value, field}]`: tokens seen in free text / record data), `values` / `texts` (`[{field, text}]`, normalised) — the labels of one untrusted tool result (decision 0098); a resume rebuilds the flow state from them, also after a compaction |
//! | `reply_cut`       | `text` (what the person saw of the reply), `retrying` — the reply's stream broke off; the text is not part of the conversation (the retry's reply, in the next `message`, is) |
//!
//! Images in messages are kept out of the log: a `message` record's image has `file`
//! (under `sessions/<id>/images/`) or `dropped: true` instead of `data` (see
//! `images`).
//!
//! Resuming replays the `message` records into the conversation (and shows the
//! `reply_cut` texts where they came, marked) and the `connect` /
//! `disconnect` records into the set of servers to reconnect. Lines that do not parse (a
//! half-written last line, a record type from a newer version) are skipped.

pub mod chain;
mod images;
mod record;
pub mod redo;

use crate::ids::ServerName;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ContentBlock, Message, Role};
use crate::protocol::{Event, ReplyCut, ToolOutcome};
use chain::Chain;
pub use record::{Journal, Record};

/// A second handle on the session's log for what happens beside the agent loop (sampling,
/// server logs): filled when the log opens. Both handles append whole lines (O_APPEND), so
/// their records interleave line by line.
pub type SharedLog = std::sync::Arc<std::sync::Mutex<Option<SessionLog>>>;

/// Appends to the shared handle; a failure drops the handle (the agent reports a failing
/// log through its own handle).
pub fn append_shared(log: &SharedLog, record: impl Into<Record>) {
    let mut slot = log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(handle) = slot.as_mut()
        && let Err(e) = handle.append(record)
    {
        tracing::warn!("session log: {e}");
        *slot = None;
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    ts: DateTime<Utc>,
    #[serde(flatten)]
    record: Record,
    /// The record's place in the file's hash chain (see [`chain`]); absent in files
    /// written before the chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prev: Option<String>,
    /// On the records that open a writer's part of the file (`session_start`, `resumed`):
    /// the chain rule it follows ([`chain::RULE`]). Its presence says the file
    /// was written chained from there on, links or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chain: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no state directory for sessions (set TOOLGATE_STATE_DIR)")]
    NoStateDir,
    #[error("cannot write session log {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read session log {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no session '{0}' found")]
    NotFound(String),
    #[error("no earlier session for workspace {0}")]
    NoneForWorkspace(PathBuf),
    #[error("'{0}' is not a session id (letters, digits, '-' and '_' only)")]
    BadId(String),
}

/// Which earlier session to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeFrom {
    /// `--continue`: the most recently written session of this workspace.
    Latest,
    /// `--resume ID`.
    Id(String),
}

/// `state_dir()/sessions`.
pub fn default_sessions_dir() -> Option<PathBuf> {
    crate::paths::state_dir().map(|d| d.join("sessions"))
}

/// A fresh, sortable, typeable id: `20261202-150011-3fa9c1`.
pub fn new_session_id() -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{}-{}", Utc::now().format("%Y%m%d-%H%M%S"), &random[..6])
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub fn log_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.jsonl"))
}

/// Finds the session to continue and returns its id.
pub fn resolve(dir: &Path, workspace: &Path, from: &ResumeFrom) -> Result<String, SessionError> {
    match from {
        ResumeFrom::Id(id) => {
            if !valid_id(id) {
                return Err(SessionError::BadId(id.clone()));
            }
            if log_path(dir, id).is_file() {
                Ok(id.clone())
            } else {
                Err(SessionError::NotFound(id.clone()))
            }
        }
        ResumeFrom::Latest => latest_for_workspace(dir, workspace)
            .ok_or_else(|| SessionError::NoneForWorkspace(workspace.to_path_buf())),
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

fn latest_for_workspace(dir: &Path, workspace: &Path) -> Option<String> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(std::time::SystemTime, String)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let Some(id) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let Some(start_workspace) = first_record_workspace(&path) else {
            continue;
        };
        if !same_path(&start_workspace, workspace) {
            continue;
        }
        let modified = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        // Ties (same mtime granularity) go to the later id, which sorts by start time.
        if best
            .as_ref()
            .is_none_or(|(t, b)| (modified, id.as_str()) > (*t, b.as_str()))
        {
            best = Some((modified, id));
        }
    }
    best.map(|(_, id)| id)
}

fn first_record_workspace(path: &Path) -> Option<PathBuf> {
    let file = File::open(path).ok()?;
    let mut first = String::new();
    BufReader::new(file).read_line(&mut first).ok()?;
    match serde_json::from_str::<Line>(&first).ok()?.record {
        Record::Fact(Event::SessionStart { workspace, .. }) => Some(workspace),
        _ => None,
    }
}

/// What a resumed session brings back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestoredSession {
    /// The conversation as the model sees it (compactions applied).
    pub messages: Vec<Message>,
    /// Every message since the last `/clear`, as the person saw them (the replay).
    pub shown: Vec<Message>,
    /// Compactions, each with the number of `shown` messages before it.
    pub compactions: Vec<(usize, crate::protocol::CompactionReport)>,
    /// Servers connected when the session ended, in connection order.
    pub connected: Vec<String>,
    /// Lines that could not be read (reported, not fatal).
    pub skipped_lines: usize,
    /// Turns the session had (its next turn is `turns + 1`).
    pub turns: usize,
    /// Tools `search_tools` loaded, oldest first.
    pub loaded_tools: Vec<String>,
    /// Roots added with `/roots add`, oldest first (the workspace is always one).
    pub roots: Vec<PathBuf>,
    /// Replies that broke off, each with the number of `shown` messages before it (shown,
    /// not sent to the model).
    pub cut_replies: Vec<(usize, ReplyCut)>,
    /// What the log says of each tool call beyond the messages (its server, its outcome),
    /// by call id: the replay shows the call's card as it was.
    pub tool_calls: HashMap<String, LoggedCall>,
    /// The permission mode the session was last in, if the log says.
    pub mode: Option<crate::protocol::PermissionMode>,
    /// The model `/model` switched to last, if it was used.
    pub model: Option<String>,
    /// The flow labels of the untrusted results, oldest first (decision 0098).
    pub flow_labels: Vec<crate::flow::ResultLabels>,
}

/// A tool call as the session log recorded it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoggedCall {
    /// Model-facing name (the replayed `tool_finished` names its call, as live).
    pub name: String,
    pub server: Option<ServerName>,
    pub outcome: Option<ToolOutcome>,
}

pub fn load(dir: &Path, id: &str) -> Result<RestoredSession, SessionError> {
    let path = log_path(dir, id);
    let file = File::open(&path).map_err(|source| SessionError::Read {
        path: path.clone(),
        source,
    })?;
    let mut restored = RestoredSession::default();
    for line in BufReader::new(file).lines() {
        let line = line.map_err(|source| SessionError::Read {
            path: path.clone(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(&line).and_then(|mut value| {
            if let Some(message) = value.get_mut("message") {
                images::internalize(message, &dir.join(id));
            }
            serde_json::from_value::<Line>(value)
        });
        let Ok(parsed) = parsed else {
            restored.skipped_lines += 1;
            continue;
        };
        match parsed.record {
            Record::Journal(Journal::Message { message }) => {
                // Merged as the live session merged it (`Conversation::push_user`), so a
                // compaction's message index means the same here.
                match restored.messages.last_mut() {
                    Some(last) if last.role == Role::User && message.role == Role::User => {
                        last.content.extend(message.content.iter().cloned());
                    }
                    _ => restored.messages.push(message.clone()),
                }
                restored.shown.push(message);
            }
            Record::Journal(Journal::Compacted(record)) => {
                redo::apply(&mut restored.messages, &record);
                restored
                    .compactions
                    .push((restored.shown.len(), record.report));
            }
            Record::Fact(Event::ToolStarted(start)) => {
                let call = restored
                    .tool_calls
                    .entry(start.call_id.as_str().to_string())
                    .or_default();
                call.name = start.name.into_string();
                call.server = start.server;
            }
            Record::Fact(Event::ToolFinished {
                call_id, outcome, ..
            }) => {
                restored
                    .tool_calls
                    .entry(call_id.as_str().to_string())
                    .or_default()
                    .outcome = Some(outcome);
            }
            Record::Journal(Journal::Connect { server, .. }) => {
                restored.connected.retain(|s| s != &server);
                restored.connected.push(server.into_string());
            }
            Record::Journal(Journal::Disconnect { server }) => {
                restored.connected.retain(|s| s != &server)
            }
            Record::Journal(Journal::Cleared) => {
                restored.messages.clear();
                restored.shown.clear();
                restored.compactions.clear();
                restored.cut_replies.clear();
            }
            Record::Fact(Event::ReplyCut(cut)) => {
                restored.cut_replies.push((restored.shown.len(), cut))
            }
            Record::Fact(Event::TurnFinished { .. }) => restored.turns += 1,
            Record::Journal(Journal::RootAdded { dir }) if !restored.roots.contains(&dir) => {
                restored.roots.push(dir);
            }
            Record::Fact(Event::PermissionMode(change)) => restored.mode = Some(change.mode),
            Record::Journal(Journal::ModelSwitched { model }) => restored.model = Some(model),
            Record::Journal(Journal::FlowLabels(labels)) => restored.flow_labels.push(labels),
            Record::Journal(Journal::ToolsLoaded { tools }) => {
                for tool in tools {
                    if !restored.loaded_tools.contains(&tool) {
                        restored.loaded_tools.push(tool);
                    }
                }
            }
            _ => {}
        }
    }
    close_dangling_tool_uses(&mut restored.messages);
    close_dangling_tool_uses(&mut restored.shown);
    Ok(restored)
}

/// Every record of session `id` that parses, in file order (lines that do not parse are
/// skipped, as [`load`] skips them): what `toolgate audit export` reads.
pub fn read_records(dir: &Path, id: &str) -> Result<Vec<Record>, SessionError> {
    let path = log_path(dir, id);
    let bytes = std::fs::read(&path).map_err(|source| SessionError::Read {
        path: path.clone(),
        source,
    })?;
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Line>(line).ok())
        .map(|line| line.record)
        .collect())
}

/// Every session id in `dir`, sorted (ids sort by their start time).
pub fn all_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            (path.extension().and_then(|e| e.to_str()) == Some("jsonl"))
                .then(|| path.file_stem()?.to_str().map(str::to_string))
                .flatten()
        })
        .collect();
    ids.sort();
    ids
}

/// A session that ended mid-turn (crash, kill) can end with tool_use blocks that never got
/// a result; model APIs reject such a history, so answer them with an error result.
fn close_dangling_tool_uses(messages: &mut Vec<Message>) {
    let Some(last) = messages.last() else {
        return;
    };
    if last.role != Role::Assistant {
        return;
    }
    let results: Vec<ContentBlock> = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: "The session ended before this tool call finished.".into(),
                is_error: true,
                images: vec![],
            }),
            _ => None,
        })
        .collect();
    if !results.is_empty() {
        messages.push(Message {
            role: Role::User,
            content: results,
        });
    }
}

/// Appends records to one session's log.
pub struct SessionLog {
    pub id: String,
    pub path: PathBuf,
    /// `sessions/<id>/`: where full outputs of truncated tool results go.
    pub files_dir: PathBuf,
    file: File,
    images: images::ImageStore,
    /// Shared by the log's handles in this process, so their records link in the order
    /// they are written.
    chain: Arc<Mutex<Chain>>,
}

impl SessionLog {
    /// Opens (creating if needed) the log of session `id` in `dir` for appending.
    pub fn open(dir: &Path, id: &str) -> Result<Self, SessionError> {
        let path = log_path(dir, id);
        std::fs::create_dir_all(dir).map_err(|source| SessionError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        // Readable too: each append looks at the last byte first (see `append`).
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|source| SessionError::Write {
                path: path.clone(),
                source,
            })?;
        let chain = Chain::open(&file, dir, id).map_err(|source| SessionError::Read {
            path: path.clone(),
            source,
        })?;
        Ok(SessionLog {
            id: id.to_string(),
            images: images::ImageStore::new(&dir.join(id)),
            files_dir: dir.join(id),
            path,
            file,
            chain: Arc::new(Mutex::new(chain)),
        })
    }

    /// A second handle on the same log (see [`SharedLog`]): its records join the same chain.
    pub fn another_handle(&self) -> Result<SessionLog, SessionError> {
        let file = self
            .file
            .try_clone()
            .map_err(|source| SessionError::Write {
                path: self.path.clone(),
                source,
            })?;
        Ok(SessionLog {
            id: self.id.clone(),
            path: self.path.clone(),
            files_dir: self.files_dir.clone(),
            file,
            images: images::ImageStore::new(&self.files_dir),
            chain: Arc::clone(&self.chain),
        })
    }

    pub fn append(&mut self, record: impl Into<Record>) -> Result<(), SessionError> {
        let write_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SessionError::Write { path, source }
        };
        let mut line = Line {
            ts: Utc::now(),
            record: record.into(),
            seq: None,
            prev: None,
            chain: None,
        };
        if matches!(
            line.record,
            Record::Fact(Event::SessionStart { .. }) | Record::Journal(Journal::Resumed { .. })
        ) {
            line.chain = Some(chain::RULE.to_string());
        }
        // The handles take turns on the chain; other processes on the file's lock.
        let mut chain = self.chain.lock().unwrap_or_else(PoisonError::into_inner);
        let _locked = Chain::lock(&self.file).map_err(write_error(&self.path))?;
        let next = chain.next(&self.file).map_err(write_error(&self.path))?;
        line.seq = Some(next.link.seq);
        line.prev = Some(next.link.prev.clone());
        // Serializing plain data (strings, numbers, JSON values) cannot fail.
        let mut text = if matches!(line.record, Record::Journal(Journal::Message { .. })) {
            let mut value = serde_json::to_value(&line).unwrap_or_default();
            if let Some(message) = value.get_mut("message") {
                self.images.externalize(message);
            }
            value.to_string()
        } else {
            serde_json::to_string(&line).unwrap_or_default()
        };
        text.push('\n');
        // A record cut short before gets its newline in the same write (O_APPEND), so the
        // newline and the record land together and only the cut record is lost.
        let mut out = &self.file;
        let written = if next.newline_first {
            out.write_all(format!("\n{text}").as_bytes())
        } else {
            out.write_all(text.as_bytes())
        };
        if let Err(source) = written.and_then(|()| out.flush()) {
            chain.lost_track();
            return Err(SessionError::Write {
                path: self.path.clone(),
                source,
            });
        }
        let head = chain.head_path().to_path_buf();
        chain
            .written(&next, text.as_bytes())
            .map_err(write_error(&head))
    }
}

#[cfg(test)]
mod tests;
