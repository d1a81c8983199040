//! What a write_file or edit_file call would leave in its file, worked out without writing
//! anything: the approval question shows it as a diff before the person answers. The
//! content comes from the tools' own argument checks and replacement (files.rs), so the
//! preview is what the call would write, byte for byte.

use std::io::Read;
use std::path::Path;

use super::BuiltinId;
use super::files::{FileError, decode_text, edit_args, replaced, write_args};
use crate::beneath::{Beneath, BeneathError, FileTarget};

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
    tool: BuiltinId,
    input: &serde_json::Value,
    workspace: &Path,
) -> Result<ProposedWrite, NoPreview> {
    tool.handler().proposed_write(input, workspace)
}

fn no_args(e: FileError) -> NoPreview {
    NoPreview {
        path: None,
        reason: e.to_string(),
    }
}

/// write_file's change: the file (if any) replaced by `content`.
pub(super) fn written(
    input: &serde_json::Value,
    workspace: &Path,
) -> Result<ProposedWrite, NoPreview> {
    let (path, content) = write_args(input).map_err(no_args)?;
    let before = current(workspace, &path, true)?;
    Ok(ProposedWrite {
        path,
        before,
        after: content,
    })
}

/// edit_file's change: the one replacement in the existing file.
pub(super) fn edited(
    input: &serde_json::Value,
    workspace: &Path,
) -> Result<ProposedWrite, NoPreview> {
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

/// The file's text today; Ok(None) when it does not exist and `may_be_new`. Read beneath
/// the workspace's handle: a path that leads out of it is not shown.
fn current(workspace: &Path, shown: &str, may_be_new: bool) -> Result<Option<String>, NoPreview> {
    let refuse = |reason: String| NoPreview {
        path: Some(shown.to_string()),
        reason,
    };
    let outside = || {
        refuse(format!(
            "{shown} is outside the workspace: its content is not shown"
        ))
    };
    let FileTarget::Workspace(rel) = FileTarget::requested(workspace, shown) else {
        return Err(outside());
    };
    let opened = Beneath::open_root(workspace).and_then(|root| root.open_read(&rel));
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) && may_be_new => {
            return Ok(None);
        }
        Err(BeneathError::Escapes { .. } | BeneathError::Link { .. }) => return Err(outside()),
        Err(e) => return Err(refuse(format!("{shown} cannot be read: {e}"))),
    };
    let meta = file
        .metadata()
        .map_err(|e| refuse(format!("{shown} cannot be read: {e}")))?;
    if meta.is_dir() {
        return Err(refuse(format!("{shown} is a directory")));
    }
    if meta.len() > PREVIEW_BYTE_LIMIT {
        return Err(refuse(format!(
            "{shown} is too big to preview ({} bytes)",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(PREVIEW_BYTE_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(format!("{shown} cannot be read: {e}")))?;
    let text = decode_text(&bytes, false)
        .map_err(|why| refuse(format!("{shown} is not a text file ({why})")))?;
    Ok(Some(text.to_string()))
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
        let proposed =
            proposed_write(super::super::tools::edit_file::ID, &input, dir.path()).unwrap();
        assert_eq!(proposed.after, "1\r\n2\r\nthree\r\n");
        assert_eq!(proposed.before.as_deref(), Some("one\r\ntwo\r\nthree\r\n"));
    }

    #[test]
    fn unreadable_files_give_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.bin"), b"a\0b").unwrap();
        let write = |path: &str| {
            proposed_write(
                super::super::tools::write_file::ID,
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
