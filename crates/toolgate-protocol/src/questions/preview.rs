//! What a question about a built-in shows instead of raw arguments: the unified diff of a
//! file change (write_file, edit_file), or a bash command to highlight. Worked out on the
//! agent's side when the question is built (file reads and the diff stay off the UI
//! thread); front ends only render it. The raw arguments stay in the card's details.

use similar::{ChangeTag, TextDiff};

/// Diff lines a preview keeps at most; the rest is counted in [`FileDiff::more`].
pub const MAX_DIFF_LINES: usize = 400;
/// How long the diff may search for the smallest edit.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);
/// Unchanged lines shown around each change.
const CONTEXT_LINES: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// A file write or edit as a unified diff.
    Diff(FileDiff),
    /// No diff can be shown (binary, too big, outside the workspace …): why, in one line.
    NoDiff {
        path: Option<String>,
        reason: String,
    },
    /// A bash command, to be shown highlighted as shell.
    Shell { command: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// `@@ -a,b +c,d @@`
    Hunk,
    Context,
    Removed,
    Added,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: DiffKind,
    /// The line without its sign and line ending (a hunk header in full).
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    /// The file does not exist yet: every line is an addition.
    pub new_file: bool,
    pub added: usize,
    pub removed: usize,
    /// At most [`MAX_DIFF_LINES`] lines.
    pub lines: Vec<DiffLine>,
    /// Diff lines left out by the cap.
    pub more: usize,
}

impl FileDiff {
    /// The unified diff from `before` (None: a new file) to `after`.
    pub fn between(path: &str, before: Option<&str>, after: &str) -> FileDiff {
        // Bounded: past the timeout the diff is coarser (bigger hunks), never late.
        let diff = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(before.unwrap_or(""), after);
        let mut lines = Vec::new();
        let (mut added, mut removed, mut total) = (0, 0, 0);
        let mut push = |line: DiffLine| {
            total += 1;
            if lines.len() < MAX_DIFF_LINES {
                lines.push(line);
            }
        };
        for hunk in diff
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .iter_hunks()
        {
            push(DiffLine {
                kind: DiffKind::Hunk,
                text: hunk.header().to_string(),
            });
            for change in hunk.iter_changes() {
                let kind = match change.tag() {
                    ChangeTag::Delete => {
                        removed += 1;
                        DiffKind::Removed
                    }
                    ChangeTag::Insert => {
                        added += 1;
                        DiffKind::Added
                    }
                    ChangeTag::Equal => DiffKind::Context,
                };
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                push(DiffLine {
                    kind,
                    text: text.to_string(),
                });
            }
        }
        let more = total - lines.len();
        FileDiff {
            path: path.to_string(),
            new_file: before.is_none(),
            added,
            removed,
            lines,
            more,
        }
    }

    /// "+3 -1" (what the inbox list shows beside the request).
    pub fn stat(&self) -> String {
        format!("+{} -{}", self.added, self.removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_a_hunk_of_removed_and_added_lines() {
        let diff = FileDiff::between("a.txt", Some("one\ntwo\nthree\n"), "one\n2\nthree\n");
        let shown: Vec<(DiffKind, &str)> = diff
            .lines
            .iter()
            .map(|l| (l.kind, l.text.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                (DiffKind::Hunk, "@@ -1,3 +1,3 @@"),
                (DiffKind::Context, "one"),
                (DiffKind::Removed, "two"),
                (DiffKind::Added, "2"),
                (DiffKind::Context, "three"),
            ]
        );
        assert_eq!(diff.stat(), "+1 -1");
    }

    #[test]
    fn a_new_file_is_all_additions_and_long_diffs_are_capped() {
        let content: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let diff = FileDiff::between("big.txt", None, &content);
        assert!(diff.new_file);
        assert_eq!(diff.added, 1000);
        assert_eq!(diff.lines.len(), MAX_DIFF_LINES);
        assert_eq!(diff.more, 1001 - MAX_DIFF_LINES);
        assert!(diff.lines[1..].iter().all(|l| l.kind == DiffKind::Added));
    }
}
