//! Checks a session file against its chain and head (`toolgate audit verify`).

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::{Head, HeadError, LineKind, classify, declares_chain, hex_digest};

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every chained record links to the one before it and the head matches the end.
    Intact {
        records: u64,
        /// Lines before the chain starts (a session written before the chain, resumed
        /// since): not checkable one by one, but covered as a whole by the first link.
        unchained_lines: usize,
        /// Records cut short by a crash, covered by the next link.
        cut_lines: usize,
    },
    /// Written before the chain existed: there is nothing to check.
    Unchained { lines: usize },
    /// Written chained (line `declared_at` names the chain rule), yet no line carries a
    /// link and there is no head: the chain was removed, so nothing in the file can be
    /// checked. Not "unchained": that verdict is only for files that predate the chain.
    NotVerifiable { lines: usize, declared_at: usize },
    /// The first place the chain does not hold.
    Broken(Break),
}

/// The first broken place: a 1-based line of the file and what broke there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    pub line: usize,
    pub what: Breakage,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breakage {
    /// The line (or what lies between it and the next record) is not what was written:
    /// its hash does not match the next record's `prev` (or the head's).
    HashMismatch,
    /// Records `from..=to` are missing before this line.
    Deleted { from: u64, to: u64 },
    /// This line holds record `found` where record `expected` belongs, and `expected`
    /// comes later in the file.
    Reordered { expected: u64, found: u64 },
    /// The file ends after `records` records; the head counts `head_records`.
    Truncated { records: u64, head_records: u64 },
    /// The records from this line on were appended after the head was last written.
    BeyondHead { head_records: u64 },
    /// A record without a link inside the chain: inserted, or rewritten without it.
    Unlinked,
    /// The file has chained records but no head: a truncation could not be seen.
    HeadMissing,
    /// The head cannot be read.
    HeadUnreadable(String),
}

impl std::fmt::Display for Breakage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Breakage::HashMismatch => write!(
                f,
                "hash mismatch: the line was changed after it was written (the next link names another hash)"
            ),
            Breakage::Deleted { from, to } if from == to => {
                write!(f, "deleted: record {from} is missing before this line")
            }
            Breakage::Deleted { from, to } => {
                write!(
                    f,
                    "deleted: records {from} to {to} are missing before this line"
                )
            }
            Breakage::Reordered { expected, found } => write!(
                f,
                "reordered: this line holds record {found} where record {expected} belongs"
            ),
            Breakage::Truncated {
                records,
                head_records,
            } => write!(
                f,
                "missing line (truncated): the file ends after record {records}, its head counts {head_records}"
            ),
            Breakage::BeyondHead { head_records } => write!(
                f,
                "appended after the head: the head counts {head_records} records"
            ),
            Breakage::Unlinked => write!(
                f,
                "a record without a link inside the chain (inserted, or rewritten)"
            ),
            Breakage::HeadMissing => write!(
                f,
                "the chain's head is missing, so a truncation could not be seen"
            ),
            Breakage::HeadUnreadable(why) => write!(f, "the chain's head cannot be read: {why}"),
        }
    }
}

/// One line as the check sees it.
struct Seen {
    /// 1-based.
    number: usize,
    kind: LineKind,
}

/// Checks `file` (a session file's bytes) against `head` (as [`super::read_head`] read it).
pub fn verify(file: &[u8], head: Result<Option<Head>, HeadError>) -> Verdict {
    let lines = split_lines(file);
    let seen: Vec<Seen> = lines
        .iter()
        .enumerate()
        .map(|(i, bytes)| Seen {
            number: i + 1,
            kind: classify(bytes),
        })
        .collect();
    let head = match head {
        Ok(head) => head,
        Err(why) => {
            return Verdict::Broken(Break {
                line: 1,
                what: Breakage::HeadUnreadable(why.to_string()),
            });
        }
    };
    // Where each record first appears, to tell a reordering from a deletion.
    let mut first_line_of: HashMap<u64, usize> = HashMap::new();
    for s in &seen {
        if let LineKind::Chained(link) = &s.kind {
            first_line_of.entry(link.seq).or_insert(s.number);
        }
    }

    let mut span = Sha256::new();
    let mut records = 0u64;
    let mut last_record_line = 0usize;
    let mut last_record_offset = 0usize;
    let mut offset = 0usize;
    let mut unchained_lines = 0usize;
    let mut cut_lines = 0usize;
    for (s, bytes) in seen.iter().zip(&lines) {
        match &s.kind {
            LineKind::Chained(link) => {
                let expected = records + 1;
                if link.seq != expected {
                    let what = match first_line_of.get(&expected) {
                        Some(&later) if later > s.number => Breakage::Reordered {
                            expected,
                            found: link.seq,
                        },
                        _ if link.seq > expected => Breakage::Deleted {
                            from: expected,
                            to: link.seq - 1,
                        },
                        _ => Breakage::Reordered {
                            expected,
                            found: link.seq,
                        },
                    };
                    return broken(s.number, what);
                }
                if link.prev != hex_digest(&span) {
                    // The span before this record changed: its first line is the record
                    // before (or, for the first record, the file's first line).
                    return broken(last_record_line.max(1), Breakage::HashMismatch);
                }
                records = link.seq;
                last_record_line = s.number;
                last_record_offset = offset;
                span = Sha256::new();
            }
            LineKind::Unchained if records > 0 => return broken(s.number, Breakage::Unlinked),
            LineKind::Unchained => unchained_lines += 1,
            LineKind::Cut => cut_lines += 1,
        }
        span.update(bytes);
        offset += bytes.len();
    }
    let Some(head) = head else {
        if records == 0 {
            let declared = lines.iter().position(|line| declares_chain(line));
            return match declared {
                Some(index) => Verdict::NotVerifiable {
                    lines: lines.len(),
                    declared_at: index + 1,
                },
                None => Verdict::Unchained { lines: lines.len() },
            };
        }
        return broken(lines.len() + 1, Breakage::HeadMissing);
    };
    if records < head.records {
        return broken(
            lines.len() + 1,
            Breakage::Truncated {
                records,
                head_records: head.records,
            },
        );
    }
    if records > head.records {
        let line = first_line_of
            .get(&(head.records + 1))
            .copied()
            .unwrap_or(lines.len());
        return broken(
            line,
            Breakage::BeyondHead {
                head_records: head.records,
            },
        );
    }
    if hex_digest(&span) != head.last && !cut_after_head(file, last_record_offset, &head) {
        return broken(last_record_line.max(1), Breakage::HashMismatch);
    }
    Verdict::Intact {
        records,
        unchained_lines,
        cut_lines,
    }
}

/// Whether the file is what the head sealed plus a record cut short at the end (the
/// session stopped part way through a write): the head covers everything before it.
fn cut_after_head(file: &[u8], last_record_offset: usize, head: &Head) -> bool {
    let Ok(end) = usize::try_from(head.end) else {
        return false;
    };
    let (Some(sealed), Some(tail)) = (file.get(last_record_offset..end), file.get(end..)) else {
        return false;
    };
    !tail.is_empty()
        && !tail.contains(&b'\n')
        && classify(tail) == LineKind::Cut
        && hex::encode(Sha256::digest(sealed)) == head.last
}

fn broken(line: usize, what: Breakage) -> Verdict {
    Verdict::Broken(Break { line, what })
}

/// The file's lines, each with its newline (the last may have none).
fn split_lines(file: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut rest = file;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        lines.push(line);
        rest = tail;
    }
    lines
}
