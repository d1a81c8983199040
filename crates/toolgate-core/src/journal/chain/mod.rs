//! The hash chain over a session log, so that an edited, deleted, reordered or truncated
//! record is detected (`toolgate audit verify`).
//!
//! # The rule
//!
//! Every record the writer appends carries `seq` (1 for the first chained record of the
//! file, then one more each record) and `prev`: the lowercase hex SHA-256 of the file's
//! bytes from the start of the previous chained record's line up to the start of this
//! record's line. Normally that is exactly the previous line as written, newline included;
//! a record cut short by a crash, and the newline the next append puts after it, fall in
//! the same span, so they are covered too. The first chained record's `prev` covers every
//! byte before it: the hash of nothing for a new file, the whole unchained history for a
//! session written before the chain existed and resumed since.
//!
//! The chain's head (the number of chained records, the hash of the bytes from the last
//! record's start to the end of the file, and where those start and end) is kept apart from
//! the file, in `sessions/heads/<id>.head`, replaced after each record (at once or not at
//! all, see [`head`]). A file cut short, or a last record changed, no longer matches its
//! head.
//!
//! Writers: the agent's two handles on one log share one [`Chain`] (and take turns on it);
//! another process (`toolgate undo`) takes the same `flock` on the file, sees that the file
//! grew since its chain last looked, and reads the new tail before it appends.

mod head;
mod lock;
pub mod verify;

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use head::{Head, HeadError, HeadFile, head_path, read_head};

/// The chain rule this writer follows, named on the records that open a writer's part of
/// a file (`session_start`, `resumed`): a file that names it was written chained, so one
/// without links is not "written before the chain" but "its chain was removed".
pub const RULE: &str = "sha256-v1";

/// A record's link as the line carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub seq: u64,
    pub prev: String,
}

/// The chain fields of a line, when it is a JSON object that has them.
#[derive(Deserialize)]
struct LinkFields {
    seq: Option<u64>,
    prev: Option<String>,
}

/// What one line of a session file is, to the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// A record with its link.
    Chained(Link),
    /// A JSON record without a link (written before the chain, or by an older toolgate).
    Unchained,
    /// Not a JSON object: a record cut short (or an empty line).
    Cut,
}

/// The `chain` field of a line: the rule its writer declared (see [`RULE`]).
#[derive(Deserialize)]
struct RuleField {
    chain: Option<String>,
}

/// Whether this line declares that its writer chains (it names a chain rule): true for
/// the `session_start` and `resumed` records of every toolgate since decision 0090.
pub fn declares_chain(line: &[u8]) -> bool {
    let trimmed = line.strip_suffix(b"\n").unwrap_or(line);
    trimmed.starts_with(b"{")
        && serde_json::from_slice::<RuleField>(trimmed).is_ok_and(|f| f.chain.is_some())
}

/// Classifies one line (its bytes, with or without the newline).
pub fn classify(line: &[u8]) -> LineKind {
    let trimmed = line.strip_suffix(b"\n").unwrap_or(line);
    if !trimmed.starts_with(b"{") {
        return LineKind::Cut;
    }
    match serde_json::from_slice::<LinkFields>(trimmed) {
        Ok(LinkFields {
            seq: Some(seq),
            prev: Some(prev),
        }) => LineKind::Chained(Link { seq, prev }),
        Ok(_) => LineKind::Unchained,
        Err(_) => LineKind::Cut,
    }
}

/// The hex SHA-256 the rule names.
pub fn hex_digest(hasher: &Sha256) -> String {
    hex::encode(hasher.clone().finalize())
}

/// The writer's view of one file's chain.
#[derive(Debug)]
pub struct Chain {
    head_path: PathBuf,
    /// Opened at the first record.
    head_file: Option<HeadFile>,
    /// Chained records in the file.
    records: u64,
    /// Where the last chained record's line starts (0 while there is none).
    last_start: u64,
    /// The file's length as this chain last saw it; None when it must look again.
    end: Option<u64>,
    /// The bytes from `last_start` to `end`.
    span: Sha256,
    /// Whether the file ends with a newline (or is empty).
    whole_lines: bool,
}

/// What the next record carries, and how it is written.
pub struct NextLink {
    pub link: Link,
    /// A newline to write first: the file ends in a record cut short.
    pub newline_first: bool,
}

impl Chain {
    /// The chain of the log at `log_path` (session `id` in `sessions`), picked up where the
    /// head says it ended, or read from the start when there is no usable head.
    pub fn open(file: &File, sessions: &Path, id: &str) -> std::io::Result<Chain> {
        let mut chain = Chain {
            head_path: head_path(sessions, id),
            head_file: None,
            records: 0,
            last_start: 0,
            end: None,
            span: Sha256::new(),
            whole_lines: true,
        };
        let len = file.metadata()?.len();
        if let Ok(Some(head)) = read_head(&chain.head_path)
            && head.records > 0
            && head.end <= len
            && head.last_start < head.end
        {
            chain.records = head.records;
            chain.last_start = head.last_start;
        }
        chain.catch_up(file, len)?;
        Ok(chain)
    }

    /// Brings the chain up to the file's current length: another writer appended (or the
    /// file changed under it, then it reads from the start).
    fn catch_up(&mut self, file: &File, len: u64) -> std::io::Result<()> {
        if self.end == Some(len) {
            return Ok(());
        }
        if len < self.last_start {
            self.records = 0;
            self.last_start = 0;
        }
        let from = self.last_start;
        self.span = Sha256::new();
        self.whole_lines = true;
        let mut reader = BufReader::new(file);
        reader.seek(SeekFrom::Start(from))?;
        let mut pos = from;
        let mut line = Vec::new();
        let mut first = true;
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            // The line at `last_start` is the last record itself; every later chained
            // line starts a new span.
            let starts_record = !(first && from > 0);
            if starts_record && let LineKind::Chained(link) = classify(&line) {
                self.records = link.seq;
                self.last_start = pos;
                self.span = Sha256::new();
            }
            first = false;
            self.span.update(&line);
            self.whole_lines = line.ends_with(b"\n");
            pos += n as u64;
        }
        self.end = Some(pos);
        Ok(())
    }

    /// The link of the record about to be written at the end of `file` (under the lock,
    /// see [`Chain::lock`]).
    pub fn next(&mut self, file: &File) -> std::io::Result<NextLink> {
        let len = file.metadata()?.len();
        self.catch_up(file, len)?;
        let newline_first = !self.whole_lines;
        if newline_first {
            self.span.update(b"\n");
        }
        Ok(NextLink {
            link: Link {
                seq: self.records + 1,
                prev: hex_digest(&self.span),
            },
            newline_first,
        })
    }

    /// Records that `next` was written: its line (with its newline, without the newline
    /// written first) ends the file now. Then writes the head.
    pub fn written(&mut self, next: &NextLink, line: &[u8]) -> std::io::Result<()> {
        let start = self.end.unwrap_or(0) + u64::from(next.newline_first);
        self.records = next.link.seq;
        self.last_start = start;
        let end = start + line.len() as u64;
        self.end = Some(end);
        self.span = Sha256::new();
        self.span.update(line);
        self.whole_lines = true;
        let head = Head {
            records: self.records,
            last: hex_digest(&self.span),
            last_start: self.last_start,
            end,
        };
        let file = match &mut self.head_file {
            Some(file) => file,
            empty @ None => empty.insert(HeadFile::open(&self.head_path)?),
        };
        file.write(&head)
    }

    /// Where the head is written.
    pub fn head_path(&self) -> &Path {
        &self.head_path
    }

    /// Forgets what it knew of the file's end (a write failed part way): the next record
    /// reads the tail again.
    pub fn lost_track(&mut self) {
        self.end = None;
    }

    /// Holds the file's `flock` while a record is linked and written.
    pub fn lock(file: &File) -> std::io::Result<lock::Locked<'_>> {
        lock::Locked::exclusive(file)
    }
}

#[cfg(test)]
mod tests;
