//! The checkpoint log of one workspace, `checkpoints.jsonl` beside the shadow repository:
//! append-only events (taken, finished, undone), folded into one [`CheckpointInfo`] per
//! checkpoint when read. Appends happen under the shadow's lock; a line that does not
//! parse (a half-written last line) is skipped.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How a file differs after a turn from how it was at the turn's checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The turn created it: undo removes it.
    Created,
    Modified,
    /// The turn deleted it: undo brings it back.
    Deleted,
    /// A file became a symlink or the other way round.
    TypeChanged,
}

impl Change {
    /// What the turn did, for lists ("deleted").
    pub fn past_tense(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Modified => "modified",
            Change::Deleted => "deleted",
            Change::TypeChanged => "type changed",
        }
    }

    /// What undo does about it ("remove", "restore").
    pub fn undo_verb(self) -> &'static str {
        match self {
            Change::Created => "remove",
            Change::Modified | Change::Deleted | Change::TypeChanged => "restore",
        }
    }
}

/// One file a turn changed, relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    #[serde(with = "lossy_path")]
    pub path: PathBuf,
    pub change: Change,
}

/// Paths that are not UTF-8 are written with replacement characters: the log is for
/// listing; restoring reads the exact names from git.
mod lossy_path {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::path::{Path, PathBuf};

    pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&path.to_string_lossy())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
        String::deserialize(deserializer).map(PathBuf::from)
    }
}

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
                    },
                );
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
    // A turn that never finished ended, at the latest, where the next one began.
    for i in 1..all.len() {
        if all[i - 1].after.is_none() {
            all[i - 1].after = Some(all[i].before.clone());
        }
    }
    Ok(all)
}

/// The id the next checkpoint gets.
pub(super) fn next_id(all: &[CheckpointInfo]) -> u64 {
    all.last().map_or(1, |last| last.id + 1)
}
