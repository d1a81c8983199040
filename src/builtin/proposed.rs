//! What a write_file or edit_file call would leave in its file, worked out without writing
//! anything: the approval question shows it as a diff before the person answers. The
//! content comes from the tools' own argument checks and replacement (files.rs), so the
//! preview is what the call would write, byte for byte.

use std::path::{Component, Path, PathBuf};

use super::BuiltinTool;
use super::files::{FileError, decode_text, edit_args, replaced, resolve, write_args};

/// Files larger than this are not read for a preview (the diff would not be readable).
pub const PREVIEW_BYTE_LIMIT: u64 = 1024 * 1024;

/// A file as it is and as the call would leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedWrite {
    /// The path as the call names it.
    pub path: String,
    /// The file today; None when the call creates it.
    pub before: Option<String>,
    pub after: String,
}

/// Why no preview can be shown, in one line (never an error that blocks the answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoPreview {
    /// The path as the call names it, when the arguments name one.
    pub path: Option<String>,
    pub reason: String,
}

/// The change `tool` (write_file or edit_file) would make with `input` in `workspace`.
pub fn proposed_write(
    tool: BuiltinTool,
    input: &serde_json::Value,
    workspace: &Path,
) -> Result<ProposedWrite, NoPreview> {
    let no_args = |e: FileError| NoPreview {
        path: None,
        reason: e.to_string(),
    };
    match tool {
        BuiltinTool::WriteFile => {
            let (path, content) = write_args(input).map_err(no_args)?;
            let before = current(workspace, &path, true)?;
            Ok(ProposedWrite {
                path,
                before,
                after: content,
            })
        }
        BuiltinTool::EditFile => {
            let (path, old, new) = edit_args(input).map_err(no_args)?;
            let before = current(workspace, &path, false)?;
            let Some(content) = before else {
                return Err(NoPreview {
                    reason: format!("{path} does not exist, so the edit would fail"),
                    path: Some(path),
                });
            };
            let (after, _) = replaced(&content, &path, &old, &new).map_err(|e| NoPreview {
                path: Some(path.clone()),
                reason: e.to_string(),
            })?;
            Ok(ProposedWrite {
                path,
                before: Some(content),
                after,
            })
        }
        other => Err(NoPreview {
            path: None,
            reason: format!("{} changes no file", other.name()),
        }),
    }
}

/// The file's text today; Ok(None) when it does not exist and `may_be_new`.
fn current(workspace: &Path, shown: &str, may_be_new: bool) -> Result<Option<String>, NoPreview> {
    let refuse = |reason: String| NoPreview {
        path: Some(shown.to_string()),
        reason,
    };
    let full = resolve(workspace, shown);
    if !inside(workspace, &full) {
        return Err(refuse(format!(
            "{shown} is outside the workspace: its content is not shown"
        )));
    }
    let meta = match std::fs::metadata(&full) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && may_be_new => return Ok(None),
        Err(e) => return Err(refuse(format!("{shown} cannot be read: {e}"))),
    };
    if meta.is_dir() {
        return Err(refuse(format!("{shown} is a directory")));
    }
    if meta.len() > PREVIEW_BYTE_LIMIT {
        return Err(refuse(format!(
            "{shown} is too big to preview ({} bytes)",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&full).map_err(|e| refuse(format!("{shown} cannot be read: {e}")))?;
    let text = decode_text(&bytes, false)
        .map_err(|why| refuse(format!("{shown} is not a text file ({why})")))?;
    Ok(Some(text.to_string()))
}

/// Whether `full` lies in `workspace`, symbolic links followed as far as they exist (a link
/// inside the workspace may point out of it).
fn inside(workspace: &Path, full: &Path) -> bool {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    real_path(full).starts_with(root)
}

/// `path` with its longest existing prefix resolved, `..` and `.` folded in the rest.
fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for part in rest.iter().rev() {
        for component in Path::new(part).components() {
            match component {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_is_previewed_as_the_tool_would_apply_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
        let input = json!({"path": "a.txt", "old_text": "one\ntwo", "new_text": "1\n2"});
        let proposed = proposed_write(BuiltinTool::EditFile, &input, dir.path()).unwrap();
        assert_eq!(proposed.after, "1\r\n2\r\nthree\r\n");
        assert_eq!(proposed.before.as_deref(), Some("one\r\ntwo\r\nthree\r\n"));
    }

    #[test]
    fn unreadable_files_give_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.bin"), b"a\0b").unwrap();
        let write = |path: &str| {
            proposed_write(
                BuiltinTool::WriteFile,
                &json!({"path": path, "content": "x"}),
                dir.path(),
            )
        };
        assert!(
            write("b.bin")
                .unwrap_err()
                .reason
                .contains("not a text file")
        );
        assert!(
            write("../out.txt")
                .unwrap_err()
                .reason
                .contains("outside the workspace")
        );
        assert_eq!(write("new/c.txt").unwrap().before, None);
    }
}
