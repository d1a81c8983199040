//! What one line of the session log holds: a fact of the session, as the protocol's
//! [`Event`] (the same value the JSONL output prints), or one of the journal's own records
//! ([`Journal`]): what a resume, `undo` and `audit` need that no front end is told as such.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::redo::CompactionRecord;
use crate::checkpoint::FileChange;
use crate::ids::ServerName;
use crate::model::Message;
use crate::protocol::Event;

/// One record of the session log. Untagged: both kinds carry their own `type`; a line is
/// read as a journal record first, so `compacted` (which the journal keeps with what a
/// resume needs to redo it) is the journal's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
// A line is built, written and dropped; boxing would only make every match noisier.
#[allow(clippy::large_enum_variant)]
pub enum Record {
    Journal(Journal),
    Fact(Event),
}

impl From<Event> for Record {
    fn from(event: Event) -> Record {
        Record::Fact(event)
    }
}

impl From<Journal> for Record {
    fn from(journal: Journal) -> Record {
        Record::Journal(journal)
    }
}

/// The journal's own records (the table in [`super`]'s docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Journal {
    /// The session was continued (`--continue` / `--resume ID`).
    Resumed {
        model: String,
    },
    /// How bash is contained this session (written at every start and resume).
    Sandbox {
        /// None when bash runs confined as configured; else why not (unavailable, or
        /// turned off in the configuration).
        problem: Option<String>,
        /// What the kernel offers.
        status: String,
        /// bash's profile.
        bash: String,
    },
    Message {
        message: Message,
    },
    Connect {
        server: ServerName,
        tools: Vec<String>,
    },
    Disconnect {
        server: ServerName,
    },
    /// The user cleared the conversation; resuming starts after this point.
    Cleared,
    /// A checkpoint of the workspace, taken before the turn first changed it.
    Checkpoint {
        checkpoint: u64,
        turn: usize,
        commit: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// What the turn changed since its checkpoint, at the turn's end.
    TurnChanges {
        checkpoint: u64,
        files: Vec<FileChange>,
    },
    /// The files of a checkpoint's turn were restored.
    Undo {
        checkpoint: u64,
        restored: Vec<FileChange>,
    },
    /// `search_tools` loaded these deferred tools (model-facing names); they stay loaded for
    /// the session, also when it is resumed.
    ToolsLoaded {
        tools: Vec<String>,
    },
    /// `/roots add` added this folder as a root; a resumed session has it again.
    RootAdded {
        dir: PathBuf,
    },
    /// `/model` switched the model; resuming goes on with the last one.
    ModelSwitched {
        model: String,
    },
    /// The conversation was compacted; a resumed session redoes it (see
    /// [`super::redo::apply`]), so the model sees what it saw.
    Compacted(CompactionRecord),
}
