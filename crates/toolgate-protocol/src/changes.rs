//! What a turn changed in the workspace, as the session log records it and the undo
//! question lists it. The core's checkpoints compute it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
pub mod lossy_path {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::path::{Path, PathBuf};

    pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&path.to_string_lossy())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
        String::deserialize(deserializer).map(PathBuf::from)
    }
}

/// Why undoing a file would lose someone else's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Changed after the turn (by the person, another session or a later turn).
    AfterTheTurn,
    /// Changed by someone else between two of the turn's own calls.
    DuringTheTurn,
}

/// One such file, with the difference between how the turn left it and how it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedSince {
    pub path: PathBuf,
    /// What the turn did to it.
    pub change: Change,
    pub since: Since,
    /// A unified diff, "as the turn left it" → "now" (may be empty for `DuringTheTurn`).
    pub diff: String,
}

impl ChangedSince {
    /// "changed since the turn", for lists.
    pub fn reason(&self) -> &'static str {
        match self.since {
            Since::AfterTheTurn => "changed since the turn",
            Since::DuringTheTurn => "also changed by someone else during the turn",
        }
    }
}

/// "1 file", "3 files".
pub fn count_files(n: usize) -> String {
    if n == 1 {
        "1 file".to_string()
    } else {
        format!("{n} files")
    }
}
