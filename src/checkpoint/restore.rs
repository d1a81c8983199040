//! What a turn changed (two snapshots compared) and putting it back.

use std::path::{Path, PathBuf};

use std::collections::HashMap;

use super::CheckpointError;
use super::git::{Git, nul_list, path_from_git};
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

/// Puts `files` back as they were in snapshot `before`: created files are removed (and
/// the folders that only they filled), the others are written from the snapshot with
/// their recorded type and executable bit. `scratch_index` is a file name git may use
/// for the duration; the snapshot index is not touched.
pub(super) fn restore(
    git: &Git,
    scratch_index: PathBuf,
    workspace: &Path,
    before: &str,
    files: &[FileChange],
) -> Result<Vec<FileChange>, CheckpointError> {
    let io_error = |path: &Path, source: std::io::Error| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    };
    for file in files.iter().filter(|f| f.change == Change::Created) {
        let full = workspace.join(&file.path);
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => std::fs::remove_file(&full).map_err(|e| io_error(&full, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&full, e)),
        }
        prune_empty_parents(workspace, &full);
    }
    let back: Vec<&FileChange> = files
        .iter()
        .filter(|f| f.change != Change::Created)
        .collect();
    if back.is_empty() {
        return Ok(files.to_vec());
    }
    // git writes a restored file anew with the umask's permissions; a file the turn only
    // edited keeps the permissions it has (a 0600 secret stays 0600).
    let kept: Vec<(PathBuf, u32)> = back
        .iter()
        .filter(|f| f.change == Change::Modified)
        .filter_map(|f| {
            let full = workspace.join(&f.path);
            let meta = std::fs::symlink_metadata(&full).ok()?;
            meta.is_file().then(|| (full, permissions_of(&meta)))
        })
        .collect();
    for file in &back {
        // A folder where the file was (the turn replaced it): empty after the created
        // files in it were removed, so it can go.
        let full = workspace.join(&file.path);
        if std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
            std::fs::remove_dir(&full).map_err(|e| io_error(&full, e))?;
        }
    }
    let source = format!("--source={before}");
    let input = nul_list(back.iter().map(|f| f.path.as_path()));
    let result = git.with_index(scratch_index.clone()).run(
        &[
            "restore",
            &source,
            "--worktree",
            "--overlay",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ],
        Some(&input),
    );
    let _ = std::fs::remove_file(&scratch_index);
    result?;
    for (full, mode) in kept {
        keep_permissions(&full, mode);
    }
    Ok(files.to_vec())
}

/// Removes the folders above `file` that are empty now, up to the workspace.
fn prune_empty_parents(workspace: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(current) = dir {
        if current == workspace || !current.starts_with(workspace) {
            break;
        }
        if std::fs::remove_dir(current).is_err() {
            break;
        }
        dir = current.parent();
    }
}

#[cfg(unix)]
fn permissions_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn permissions_of(_meta: &std::fs::Metadata) -> u32 {
    0
}

/// Sets the earlier permissions again unless the restored file's executable bit says
/// the checkpoint had it otherwise.
#[cfg(unix)]
fn keep_permissions(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    let restored = meta.permissions().mode() & 0o7777;
    let executable = |m: u32| m & 0o100 != 0;
    if meta.is_file() && executable(restored) == executable(mode) && restored != mode {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    }
}

#[cfg(not(unix))]
fn keep_permissions(_path: &Path, _mode: u32) {}

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
