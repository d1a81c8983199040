//! Recording the workspace as one commit of the shadow repository.
//!
//! `git status` (porcelain v2, untracked cache on) finds what differs from the last
//! snapshot in one pass over the work tree, honouring the workspace's `.gitignore` files;
//! only those paths are handed to `update-index`, so a snapshot after a one-file change
//! costs one scan plus three small git calls (`update-index`, `write-tree`,
//! `commit-tree`); HEAD is written directly. Files over the size limit are left out
//! before git hashes them, and said so.

use std::path::{Path, PathBuf};

use super::CheckpointError;
use super::git::{Git, nul_list, path_from_git, single_line};

/// What a snapshot leaves out, and how much it takes on at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Files larger than this are not recorded (and so never restored).
    pub max_file_bytes: u64,
    /// More new or changed files than this in one snapshot is refused: a workspace that
    /// large without a `.gitignore` (a home folder, unignored build output) would take
    /// minutes to record.
    pub max_changed_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 10 * 1024 * 1024,
            max_changed_files: 100_000,
        }
    }
}

/// One recorded state of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Snapshot {
    pub commit: String,
    /// Files over the size limit, not recorded.
    pub skipped: Vec<PathBuf>,
    /// Folders that are git repositories of their own, not recorded.
    pub nested: Vec<PathBuf>,
}

/// One line of `git status --porcelain=v2 -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// The shadow index differs from the last snapshot (an interrupted earlier run).
    staged: bool,
    /// The file differs from the shadow index (changed, deleted, type changed).
    changed: bool,
    untracked: bool,
    path: Vec<u8>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Status {
    /// The last snapshot; None before the first.
    head: Option<String>,
    entries: Vec<Entry>,
}

fn parse_status(output: &[u8]) -> Status {
    let mut status = Status::default();
    let mut records = output.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let Some(record) = records.next() {
        let (kind, rest) = match record.split_first() {
            Some((kind, rest)) => (*kind, rest.strip_prefix(b" ").unwrap_or(rest)),
            None => continue,
        };
        match kind {
            b'#' => {
                if let Some(oid) = rest.strip_prefix(b"branch.oid ")
                    && oid != b"(initial)"
                {
                    status.head = Some(String::from_utf8_lossy(oid).into_owned());
                }
            }
            b'?' => status.entries.push(Entry {
                staged: false,
                changed: true,
                untracked: true,
                path: rest.to_vec(),
            }),
            // Ordinary (7 fields before the path), renamed (8, then the old path as its
            // own record; not produced with --no-renames), unmerged (10).
            b'1' | b'2' | b'u' => {
                let fields = match kind {
                    b'1' => 7,
                    b'2' => 8,
                    _ => 10,
                };
                let mut parts = rest.splitn(fields + 1, |b| *b == b' ');
                let xy = parts.next().unwrap_or_default();
                let Some(path) = parts.nth(fields - 1) else {
                    continue;
                };
                status.entries.push(Entry {
                    staged: xy.first().is_some_and(|x| *x != b'.'),
                    changed: xy.get(1).is_some_and(|y| *y != b'.'),
                    untracked: false,
                    path: path.to_vec(),
                });
                if kind == b'2' {
                    records.next();
                }
            }
            _ => {}
        }
    }
    status
}

/// Records the workspace as it is now; a commit whose parent is the previous snapshot
/// (or the previous snapshot itself when nothing changed).
pub(super) fn take(
    git: &Git,
    workspace: &Path,
    limits: &Limits,
    message: &str,
) -> Result<Snapshot, CheckpointError> {
    let output = git.run(
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--no-renames",
            "--untracked-files=all",
        ],
        None,
    )?;
    let status = parse_status(&output);
    let mut add = Vec::new();
    let mut forget = Vec::new();
    let mut skipped = Vec::new();
    let mut nested = Vec::new();
    let mut staged = false;
    for entry in status.entries {
        staged |= entry.staged;
        if !entry.changed {
            continue;
        }
        let path = path_from_git(&entry.path);
        // With every untracked file listed, a folder shows only when it is a repository
        // of its own.
        if entry.untracked && entry.path.ends_with(b"/") {
            nested.push(path);
            continue;
        }
        match std::fs::symlink_metadata(workspace.join(&path)) {
            Ok(meta) if meta.is_file() && meta.len() > limits.max_file_bytes => {
                if !entry.untracked {
                    // Recorded while it was small: forget it rather than keep a version
                    // that undo would bring back over the big one.
                    forget.push(path.clone());
                }
                skipped.push(path);
            }
            _ => add.push(path),
        }
    }
    if add.len() > limits.max_changed_files {
        return Err(CheckpointError::TooManyFiles {
            count: add.len(),
            limit: limits.max_changed_files,
        });
    }
    if !forget.is_empty() {
        let input = nul_list(forget.iter().map(PathBuf::as_path));
        git.run(
            &["update-index", "--force-remove", "-z", "--stdin"],
            Some(&input),
        )?;
    }
    if !add.is_empty() {
        let input = nul_list(add.iter().map(PathBuf::as_path));
        git.run(
            &["update-index", "--add", "--remove", "-z", "--stdin"],
            Some(&input),
        )?;
    }
    let unchanged = !staged && add.is_empty() && forget.is_empty();
    let commit = match status.head {
        Some(head) if unchanged => head,
        parent => {
            let tree = single_line(git.run(&["write-tree"], None)?);
            let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
            if let Some(parent) = &parent {
                args.extend(["-p", parent.as_str()]);
            }
            let commit = single_line(git.run(&args, None)?);
            git.set_head(&commit)
                .map_err(|source| CheckpointError::Io {
                    path: git.git_dir().join("HEAD"),
                    source,
                })?;
            commit
        }
    };
    skipped.sort();
    nested.sort();
    Ok(Snapshot {
        commit,
        skipped,
        nested,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_give_head_and_paths_with_spaces() {
        let output = b"# branch.oid 0123abcd\0# branch.head master\0\
1 .M N... 100644 100644 100644 aaa aaa notes and more.txt\0\
1 M. N... 100644 100644 100644 aaa bbb staged.txt\0\
? new file.txt\0? nested/\0";
        let status = parse_status(output);
        assert_eq!(status.head.as_deref(), Some("0123abcd"));
        let paths: Vec<(&[u8], bool, bool, bool)> = status
            .entries
            .iter()
            .map(|e| (e.path.as_slice(), e.staged, e.changed, e.untracked))
            .collect();
        assert_eq!(
            paths,
            [
                (&b"notes and more.txt"[..], false, true, false),
                (&b"staged.txt"[..], true, false, false),
                (&b"new file.txt"[..], false, true, true),
                (&b"nested/"[..], false, true, true),
            ]
        );
        assert_eq!(parse_status(b"# branch.oid (initial)\0").head, None);
    }
}
