//! The checkpoint log of one workspace, `checkpoints.jsonl` beside the shadow repository:
//! append-only events (taken, the turn's tool calls started and ended, finished, undone),
//! folded into one [`CheckpointInfo`] per checkpoint when read. Appends happen under the shadow's lock; a line that does not
//! parse (a half-written last line) is skipped.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::protocol::lossy_path;
pub use crate::protocol::{Change, FileChange};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(super) enum Event {
    /// Before a turn's first workspace-changing tool call.
    Taken {
        id: u64,
        time: DateTime<Utc>,
        session: String,
        turn: usize,
        commit: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        /// The turn records its tool calls (`call_started`/`call_ended`), and only what
        /// changed under them is the turn's. False in logs written before calls were
        /// recorded: the whole window from this checkpoint to the turn's end counts.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        attributed: bool,
    },
    /// A tool call of the turn that may change the workspace started; `commit` is the
    /// workspace then.
    CallStarted { id: u64, call: u32, commit: String },
    /// That call ended: the workspace then, and the files taken as the call's own
    /// (every change in its window for a shell or a server, the target for a file tool).
    CallEnded {
        id: u64,
        call: u32,
        commit: String,
        files: Vec<CallFile>,
    },
    /// After the turn: the state it left, and what differs from the checkpoint.
    Finished {
        id: u64,
        time: DateTime<Utc>,
        commit: String,
        files: Vec<FileChange>,
    },
    /// The turn's changes were undone; `saved` is the state just before the undo.
    Undone {
        id: u64,
        time: DateTime<Utc>,
        saved: String,
        restored: Vec<FileChange>,
    },
}

/// A file as a snapshot holds it: git's mode (regular, executable, symlink) and object id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blob {
    pub mode: u32,
    pub oid: String,
}

impl Blob {
    /// The kind of entry (file or symlink), without the permission bits.
    pub fn kind(&self) -> u32 {
        self.mode & 0o170000
    }
}

/// One file a tool call changed: as it was when the call started (`from`) and when it
/// ended (`to`); None where it did not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFile {
    #[serde(with = "lossy_path")]
    pub path: PathBuf,
    pub from: Option<Blob>,
    pub to: Option<Blob>,
}

/// One recorded tool call of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    /// The workspace when the call started.
    pub before: String,
    /// The workspace when it ended, and what it changed; None when it never ended
    /// (toolgate was killed during the call).
    pub ended: Option<(String, Vec<CallFile>)>,
}

/// A checkpoint as `toolgate undo --list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub id: u64,
    pub time: DateTime<Utc>,
    pub session: String,
    /// The turn of its session (1 = the session's first message).
    pub turn: usize,
    /// The workspace before the turn (a commit of the shadow repository).
    pub before: String,
    /// The workspace after the turn; for a turn that never finished (toolgate was killed),
    /// the next checkpoint's state; None while the turn runs or when it was the last.
    pub after: Option<String>,
    /// What the turn changed, once known.
    pub files: Option<Vec<FileChange>>,
    /// Files over the size limit, not in the checkpoint.
    pub skipped: Vec<PathBuf>,
    pub undone: Option<DateTime<Utc>>,
    /// Whether the turn's tool calls were recorded (see [`Event::Taken`]).
    pub attributed: bool,
    /// The turn's recorded tool calls, in order.
    pub calls: Vec<CallInfo>,
}

pub(super) fn append(path: &Path, event: &Event) -> std::io::Result<()> {
    // Serializing plain data (strings, numbers, times) cannot fail.
    let mut line = serde_json::to_string(event).unwrap_or_default();
    line.push('\n');
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(line.as_bytes())?;
    file.flush()
}

/// Every checkpoint in the log, oldest first.
pub(super) fn read(path: &Path) -> std::io::Result<Vec<CheckpointInfo>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut by_id: BTreeMap<u64, CheckpointInfo> = BTreeMap::new();
    for line in BufReader::new(file).lines() {
        let line = line?;
        let Ok(event) = serde_json::from_str::<Event>(&line) else {
            continue;
        };
        match event {
            Event::Taken {
                id,
                time,
                session,
                turn,
                commit,
                skipped,
                attributed,
            } => {
                by_id.insert(
                    id,
                    CheckpointInfo {
                        id,
                        time,
                        session,
                        turn,
                        before: commit,
                        after: None,
                        files: None,
                        skipped: skipped.into_iter().map(PathBuf::from).collect(),
                        undone: None,
                        attributed,
                        calls: Vec::new(),
                    },
                );
            }
            Event::CallStarted { id, call, commit } => {
                if let Some(info) = by_id.get_mut(&id) {
                    let index = call as usize;
                    if info.calls.len() <= index {
                        info.calls.resize(
                            index + 1,
                            CallInfo {
                                before: commit.clone(),
                                ended: None,
                            },
                        );
                    }
                    info.calls[index].before = commit;
                }
            }
            Event::CallEnded {
                id,
                call,
                commit,
                files,
            } => {
                if let Some(call) = by_id
                    .get_mut(&id)
                    .and_then(|info| info.calls.get_mut(call as usize))
                {
                    call.ended = Some((commit, files));
                }
            }
            Event::Finished {
                id, commit, files, ..
            } => {
                if let Some(info) = by_id.get_mut(&id) {
                    info.after = Some(commit);
                    info.files = Some(files);
                }
            }
            Event::Undone { id, time, .. } => {
                if let Some(info) = by_id.get_mut(&id) {
                    info.undone = Some(time);
                }
            }
        }
    }
    let mut all: Vec<CheckpointInfo> = by_id.into_values().collect();
    // A turn that never finished ended, at the latest, where the next one began (only
    // said of unattributed turns: with several sessions, the next checkpoint may be
    // another session's, taken while this turn still ran).
    for i in 1..all.len() {
        if all[i - 1].after.is_none() && !all[i - 1].attributed {
            all[i - 1].after = Some(all[i].before.clone());
        }
    }
    Ok(all)
}

/// Bytes read from the end of the log to find the last id: a checkpoint must not cost more
/// as the log grows.
const TAIL: u64 = 64 * 1024;

/// The id the next checkpoint gets: one more than the last one taken. Reads the log's
/// tail, and the whole log only when the tail holds no `taken` event.
pub(super) fn next_id(path: &Path) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(1),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    if len > TAIL {
        file.seek(SeekFrom::Start(len - TAIL))?;
        let mut tail = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut tail)?;
        // The first line is cut, unless the cut fell on a line start; a cut line does not
        // parse and is skipped below.
        let last_taken = tail
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice::<Event>(line).ok())
            .filter_map(|event| match event {
                Event::Taken { id, .. } => Some(id),
                Event::Finished { .. }
                | Event::Undone { .. }
                | Event::CallStarted { .. }
                | Event::CallEnded { .. } => None,
            })
            .max();
        if let Some(id) = last_taken {
            return Ok(id + 1);
        }
    }
    Ok(read(path)?.last().map_or(1, |last| last.id + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_path;

    fn taken(id: u64) -> Event {
        Event::Taken {
            id,
            time: Utc::now(),
            session: "s".into(),
            turn: 1,
            commit: "0".repeat(40),
            skipped: vec![],
            attributed: false,
        }
    }

    fn undone(id: u64) -> Event {
        Event::Undone {
            id,
            time: Utc::now(),
            saved: "0".repeat(40),
            restored: (0..20)
                .map(|i| FileChange {
                    path: format!("src/module_{i}/file.rs").into(),
                    change: Change::Modified,
                })
                .collect(),
        }
    }

    #[test]
    fn next_id_reads_the_tail_and_falls_back_to_the_whole_log() {
        let (_dir, path) = temp_path("checkpoints.jsonl");
        assert_eq!(next_id(&path).unwrap(), 1);
        for id in 1..=1500 {
            append(&path, &taken(id)).unwrap();
        }
        assert!(std::fs::metadata(&path).unwrap().len() > TAIL);
        assert_eq!(next_id(&path).unwrap(), 1501);
        // A tail of undo events only (no `taken` in the last 64 KiB).
        for _ in 0..300 {
            append(&path, &undone(7)).unwrap();
        }
        assert_eq!(next_id(&path).unwrap(), 1501);
        let all = read(&path).unwrap();
        assert_eq!(all.len(), 1500);
        assert!(all[6].undone.is_some() && all[7].undone.is_none());
        // An unfinished checkpoint ends where the next one began.
        assert_eq!(all[0].after.as_deref(), Some(all[1].before.as_str()));
        assert_eq!(all[1499].after, None);
    }
}
