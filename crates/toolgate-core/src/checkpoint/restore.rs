//! What a turn changed (two snapshots compared) and putting it back.

use std::path::{Path, PathBuf};

use std::collections::HashMap;

use super::CheckpointError;
use super::beneath::{Beneath, Kind, Refusal};
use super::git::{Git, path_from_git};
use super::log::{Blob, CallFile, Change, FileChange};

/// The files that differ between two snapshots, as `before` → `after`.
pub(super) fn changes(
    git: &Git,
    before: &str,
    after: &str,
) -> Result<Vec<FileChange>, CheckpointError> {
    if before == after {
        return Ok(Vec::new());
    }
    Ok(parse_name_status(&diff_tree(
        git,
        "--name-status",
        before,
        after,
    )?))
}

/// `git diff-tree` of two snapshots, NUL-separated, renames as a removal and an addition.
fn diff_tree(
    git: &Git,
    format: &str,
    before: &str,
    after: &str,
) -> Result<Vec<u8>, CheckpointError> {
    Ok(git.run(
        &[
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            format,
            before,
            after,
        ],
        None,
    )?)
}

/// The files that differ between two snapshots with both sides' mode and object id,
/// limited to `only` when given (a file tool's target).
pub(super) fn raw_changes(
    git: &Git,
    before: &str,
    after: &str,
    only: Option<&[PathBuf]>,
) -> Result<Vec<CallFile>, CheckpointError> {
    if before == after {
        return Ok(Vec::new());
    }
    let output = diff_tree(git, "--raw", before, after)?;
    let mut files = parse_raw(&output);
    if let Some(only) = only {
        // A path named covers itself and, for a folder, what is in it.
        files.retain(|f| only.iter().any(|p| f.path.starts_with(p)));
    }
    Ok(files)
}

/// `:MODE MODE OID OID STATUS\0PATH\0` records; a zero mode is a side where the file
/// does not exist.
fn parse_raw(output: &[u8]) -> Vec<CallFile> {
    let mut files = Vec::new();
    let mut fields = output.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, ..] = parts.as_slice() else {
            continue;
        };
        let side = |mode: &str, oid: &str| {
            let mode = u32::from_str_radix(mode, 8).unwrap_or(0);
            (mode != 0).then(|| Blob {
                mode,
                oid: oid.to_string(),
            })
        };
        files.push(CallFile {
            path: path_from_git(path),
            from: side(old_mode, old_oid),
            to: side(new_mode, new_oid),
        });
    }
    files
}

/// How `paths` are in snapshot `commit` (a path missing from the answer is not there).
pub(super) fn blobs_in(
    git: &Git,
    commit: &str,
    paths: &[PathBuf],
) -> Result<HashMap<PathBuf, Blob>, CheckpointError> {
    let mut found = HashMap::new();
    // Paths go as arguments (ls-tree reads no pathspec file); a few hundred at a time
    // keeps the command line short.
    for chunk in paths.chunks(256) {
        let mut args: Vec<String> = ["ls-tree", "-r", "-z", "--full-tree", commit, "--"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(chunk.iter().map(|p| p.to_string_lossy().into_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = git.run(&args, None)?;
        for record in output.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let Some(tab) = record.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let meta = String::from_utf8_lossy(&record[..tab]);
            let mut parts = meta.split(' ');
            let (Some(mode), Some(_kind), Some(oid)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            found.insert(
                path_from_git(&record[tab + 1..]),
                Blob {
                    mode: u32::from_str_radix(mode, 8).unwrap_or(0),
                    oid: oid.to_string(),
                },
            );
        }
    }
    Ok(found)
}

/// The bytes of one recorded file.
pub(super) fn blob_bytes(git: &Git, oid: &str) -> Result<Vec<u8>, CheckpointError> {
    Ok(git.run(&["cat-file", "blob", oid], None)?)
}

fn parse_name_status(output: &[u8]) -> Vec<FileChange> {
    let mut files = Vec::new();
    let mut fields = output.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let (Some(letter), Some(path)) = (fields.next(), fields.next()) {
        let change = match letter.first() {
            Some(b'A') => Change::Created,
            Some(b'D') => Change::Deleted,
            Some(b'T') => Change::TypeChanged,
            _ => Change::Modified,
        };
        files.push(FileChange {
            path: path_from_git(path),
            change,
        });
    }
    files
}

/// A file undo left as it is, and why (in words for the person).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrestored {
    pub path: PathBuf,
    pub why: String,
}

/// What a restore did: the files put back, and those it could not put back safely.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    pub files: Vec<FileChange>,
    pub left: Vec<Unrestored>,
}

/// Puts `files` back as they were in snapshot `before`: created files are removed (and
/// the folders that only they filled), the others are written from the snapshot with
/// their recorded type and executable bit. Every write goes through the handle of the
/// folder that holds the file, reached from the workspace without following a link
/// ([`super::beneath`]): a path with a link (or a file) where a folder belongs is left as
/// it is and named, and the rest is restored.
pub(super) fn restore(
    git: &Git,
    workspace: &Path,
    before: &str,
    files: &[FileChange],
) -> Result<Restored, CheckpointError> {
    let beneath = Beneath::open(workspace).map_err(|source| CheckpointError::Io {
        path: workspace.to_path_buf(),
        source,
    })?;
    let mut done = Restored::default();
    let mut leave = |file: &FileChange, why: String| {
        done.left.push(Unrestored {
            path: file.path.clone(),
            why,
        })
    };
    let mut restored = Vec::new();
    for file in files.iter().filter(|f| f.change == Change::Created) {
        match remove_created(&beneath, &file.path) {
            Ok(()) => restored.push(file.clone()),
            Err(refusal) => leave(file, refusal.to_string()),
        }
    }
    let back: Vec<&FileChange> = files
        .iter()
        .filter(|f| f.change != Change::Created)
        .collect();
    let paths: Vec<PathBuf> = back.iter().map(|f| f.path.clone()).collect();
    let recorded = if paths.is_empty() {
        HashMap::new()
    } else {
        blobs_in(git, before, &paths)?
    };
    for file in back {
        let Some(blob) = recorded.get(&file.path) else {
            leave(file, "it is not in the checkpoint".to_string());
            continue;
        };
        match put_back(git, &beneath, &file.path, blob, file.change) {
            Ok(()) => restored.push(file.clone()),
            Err(Failed::Refused(refusal)) => leave(file, refusal.to_string()),
            Err(Failed::Checkpoint(e)) => return Err(e),
        }
    }
    restored.sort_by(|a, b| a.path.cmp(&b.path));
    done.files = restored;
    Ok(done)
}

enum Failed {
    /// This path cannot be written safely: named, the others go on.
    Refused(Refusal),
    /// The checkpoint itself cannot be read: the undo stops.
    Checkpoint(CheckpointError),
}

/// Removes a file the turn created, then the folders that only it filled.
fn remove_created(beneath: &Beneath, path: &Path) -> Result<(), Refusal> {
    let Some(entry) = beneath.entry(path, false)? else {
        return Ok(());
    };
    match entry.kind()? {
        Kind::Missing | Kind::Folder => return Ok(()),
        Kind::Link | Kind::File(_) => entry.remove(false)?,
    }
    let mut folder = path.parent();
    while let Some(current) = folder.filter(|p| !p.as_os_str().is_empty()) {
        match beneath.entry(current, false) {
            Ok(Some(entry)) if entry.remove(true).is_ok() => folder = current.parent(),
            _ => break,
        }
    }
    Ok(())
}

/// Writes one file back from its recorded blob.
fn put_back(
    git: &Git,
    beneath: &Beneath,
    path: &Path,
    blob: &Blob,
    change: Change,
) -> Result<(), Failed> {
    let entry = beneath
        .entry(path, true)
        .map_err(Failed::Refused)?
        .ok_or_else(|| Failed::Refused(Refusal::NotPlain(path.to_path_buf())))?;
    let now = entry.kind().map_err(Failed::Refused)?;
    if now == Kind::Folder {
        // A folder where the file was (the turn replaced it): empty after the created
        // files in it were removed, so it can go.
        entry.remove(true).map_err(Failed::Refused)?;
    }
    let bytes = blob_bytes(git, &blob.oid).map_err(Failed::Checkpoint)?;
    let written = match blob.mode & 0o170000 {
        0o120000 => entry.write_link(&bytes),
        0o100000 => {
            let executable = blob.mode & 0o100 != 0;
            // A file the turn only edited keeps the permissions it has (a 0600 secret
            // stays 0600) unless its executable bit was recorded otherwise.
            let mode = match now {
                Kind::File(mode)
                    if change == Change::Modified && (mode & 0o100 != 0) == executable =>
                {
                    mode
                }
                _ if executable => 0o755,
                _ => 0o644,
            };
            entry.write_file(&bytes, mode)
        }
        _ => Err(Refusal::NotPlain(path.to_path_buf())),
    };
    written.map_err(Failed::Refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_give_both_sides_and_absent_sides_are_none() {
        let a = "a".repeat(40);
        let z = "0".repeat(40);
        let output = format!(":000000 100644 {z} {a} A\0new.txt\0:100755 000000 {a} {z} D\0gone\0");
        let files = parse_raw(output.as_bytes());
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, PathBuf::from("new.txt"));
        assert_eq!(files[0].from, None);
        assert_eq!(files[0].to.as_ref().map(|b| b.mode), Some(0o100644));
        assert_eq!(files[1].from.as_ref().map(|b| b.mode), Some(0o100755));
        assert_eq!(files[1].to, None);
    }

    #[test]
    fn name_status_maps_letters_to_changes() {
        let files = parse_name_status(b"A\0new.txt\0D\0gone dir/x\0M\0notes.txt\0T\0link\0");
        let got: Vec<(String, Change)> = files
            .into_iter()
            .map(|f| (f.path.display().to_string(), f.change))
            .collect();
        assert_eq!(
            got,
            [
                ("new.txt".to_string(), Change::Created),
                ("gone dir/x".to_string(), Change::Deleted),
                ("notes.txt".to_string(), Change::Modified),
                ("link".to_string(), Change::TypeChanged),
            ]
        );
    }
}
