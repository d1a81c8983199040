//! read_file, write_file and edit_file. Text only: a file with NUL bytes or invalid UTF-8 is
//! refused rather than shown garbled or rewritten lossily.

use super::BuiltinOutput;
use super::args::{ArgError, Args};
use crate::beneath::{BeneathError, FileTarget};
use std::io::{self, Read};
use std::path::Path;

/// The names of the three tools implemented here (their handlers are in `tools/`).
pub(super) const READ_FILE: &str = "read_file";
pub(super) const WRITE_FILE: &str = "write_file";
pub(super) const EDIT_FILE: &str = "edit_file";

/// Lines read_file shows when the call gives no limit.
pub const DEFAULT_LINE_LIMIT: u64 = 2000;
/// Characters read_file returns at most (numbering included).
pub const READ_CHAR_LIMIT: usize = 50_000;
/// Bytes read from disk at most: enough for READ_CHAR_LIMIT characters of any width, so a
/// multi-gigabyte file costs no more than a small one.
const READ_BYTE_LIMIT: u64 = (READ_CHAR_LIMIT as u64) * 4 + 4;
/// How much of the start of a file is checked for NUL bytes (what `grep` and `git` do).
const BINARY_SNIFF_BYTES: usize = 8192;

#[derive(Debug, thiserror::Error)]
pub(super) enum FileError {
    #[error("Invalid input for {tool}: {source}")]
    Args {
        tool: &'static str,
        source: ArgError,
    },
    #[error("{tool}: {path} does not exist")]
    NotFound { tool: &'static str, path: String },
    #[error("{tool}: {path} is a directory, not a file; use glob or bash `ls` to list it")]
    IsDirectory { tool: &'static str, path: String },
    #[error("{tool}: {path} is not a text file ({why})")]
    NotText {
        tool: &'static str,
        path: String,
        why: &'static str,
    },
    #[error("{tool}: {path}: {source}")]
    Io {
        tool: &'static str,
        path: String,
        source: io::Error,
    },
    #[error("{0}")]
    Refused(String),
}

impl FileError {
    fn io(tool: &'static str, path: &str, source: io::Error) -> Self {
        match source.kind() {
            io::ErrorKind::NotFound => FileError::NotFound {
                tool,
                path: path.to_string(),
            },
            io::ErrorKind::IsADirectory => FileError::IsDirectory {
                tool,
                path: path.to_string(),
            },
            _ => FileError::Io {
                tool,
                path: path.to_string(),
                source,
            },
        }
    }
}

fn into_output(result: Result<String, FileError>) -> BuiltinOutput {
    match result {
        Ok(text) => BuiltinOutput::ok(text),
        Err(e) => BuiltinOutput::error(e.to_string()),
    }
}

/// What the call opens: the gate's resolved target when it decided one, else the path as
/// typed (beneath the workspace when relative). Never the input's text resolved again.
fn target_of(workspace: &Path, shown: &str, decided: Option<&FileTarget>) -> FileTarget {
    decided
        .cloned()
        .unwrap_or_else(|| FileTarget::requested(workspace, shown))
}

/// A beneath-open's failure as the tool's error: a path that leads out (or through a link
/// put there since the check) is refused and says so; other failures as I/O errors.
fn beneath_error(tool: &'static str, shown: &str, error: BeneathError) -> FileError {
    match error {
        BeneathError::Io { source, .. } => FileError::io(tool, shown, source),
        refused @ (BeneathError::Escapes { .. } | BeneathError::Link { .. }) => {
            FileError::Refused(format!(
                "{tool}: {shown} was not opened: {refused} (files are opened beneath the \
                 workspace, or exactly as approved, and a path that leads elsewhere is refused)"
            ))
        }
    }
}

/// Turns an argument error of `tool` into its "Invalid input" error.
fn invalid_input(tool: &'static str) -> impl FnOnce(ArgError) -> FileError {
    move |source| FileError::Args { tool, source }
}

/// Parses the input of a file tool that accepts `fields` and takes its non-empty `path`.
fn path_args<'a>(
    tool: &'static str,
    input: &'a serde_json::Value,
    fields: &[&str],
) -> Result<(Args<'a>, &'a str), FileError> {
    let args = Args::new(input, fields).map_err(invalid_input(tool))?;
    let path = args.string("path").map_err(invalid_input(tool))?;
    if path.is_empty() {
        return Err(FileError::Refused(format!(
            "Invalid input for {tool}: field 'path' must not be empty"
        )));
    }
    Ok((args, path))
}

/// File work is short but blocking; keep it off the async worker threads.
async fn blocking<T: Send + 'static>(
    tool: &'static str,
    work: impl FnOnce() -> Result<T, FileError> + Send + 'static,
) -> Result<T, FileError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(FileError::Refused(format!("{tool}: internal error: {e}"))))
}

// ---------------------------------------------------------------------------------------
// read_file

pub async fn read_file(
    input: &serde_json::Value,
    workspace: &Path,
    decided: Option<&FileTarget>,
) -> BuiltinOutput {
    const TOOL: &str = READ_FILE;
    let parsed = (|| {
        let (args, path) = path_args(TOOL, input, &["path", "limit"])?;
        let limit = args
            .positive_integer("limit")
            .map_err(invalid_input(TOOL))?
            .unwrap_or(DEFAULT_LINE_LIMIT);
        Ok((path.to_string(), limit))
    })();
    let (shown, limit) = match parsed {
        Ok(p) => p,
        Err(e) => return into_output(Err(e)),
    };
    let target = target_of(workspace, &shown, decided);
    let workspace = workspace.to_path_buf();
    into_output(
        blocking(TOOL, move || {
            let file = target
                .open_read(&workspace)
                .map_err(|e| beneath_error(TOOL, &shown, e))?;
            read_numbered(file, &shown, limit)
        })
        .await,
    )
}

fn read_numbered(file: std::fs::File, shown: &str, limit: u64) -> Result<String, FileError> {
    const TOOL: &str = READ_FILE;
    let meta = file.metadata().map_err(|e| FileError::io(TOOL, shown, e))?;
    if meta.is_dir() {
        return Err(FileError::IsDirectory {
            tool: TOOL,
            path: shown.to_string(),
        });
    }
    let mut bytes = Vec::new();
    file.take(READ_BYTE_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(TOOL, shown, e))?;
    let whole_file_read = (bytes.len() as u64) < READ_BYTE_LIMIT;
    let text = decode_text(&bytes, !whole_file_read).map_err(|why| FileError::NotText {
        tool: TOOL,
        path: shown.to_string(),
        why,
    })?;
    if text.is_empty() {
        return Ok(format!("[{shown} is empty]"));
    }

    let mut out = String::new();
    let mut out_chars = 0usize;
    let mut shown_lines = 0u64;
    let mut lines = text.lines().peekable();
    let mut cut_by_chars = false;
    while shown_lines < limit {
        let Some(line) = lines.next() else { break };
        let numbered = format!("{:>6}\t{line}\n", shown_lines + 1);
        let len = numbered.chars().count();
        if out_chars + len > READ_CHAR_LIMIT {
            if shown_lines == 0 {
                // A single huge line: show its start rather than nothing.
                out.extend(numbered.chars().take(READ_CHAR_LIMIT));
                out.push('\n');
                shown_lines = 1;
            }
            cut_by_chars = true;
            break;
        }
        out.push_str(&numbered);
        out_chars += len;
        shown_lines += 1;
        if lines.peek().is_none() && whole_file_read {
            return Ok(out);
        }
    }
    let more_lines = cut_by_chars || lines.peek().is_some() || !whole_file_read;
    if !more_lines {
        return Ok(out);
    }
    let total = if whole_file_read {
        format!("{} lines", text.lines().count())
    } else {
        format!("{} bytes", meta.len())
    };
    let reason = if cut_by_chars {
        format!("the {READ_CHAR_LIMIT}-character limit")
    } else if shown_lines == limit {
        format!("the limit of {limit} lines")
    } else {
        format!("the {READ_BYTE_LIMIT}-byte read limit")
    };
    out.push_str(&format!(
        "[showing lines 1-{shown_lines} of {shown} ({total}) because of {reason}; to read further \
         use bash, e.g. sed -n '{from},{to}p' {shown}]",
        from = shown_lines + 1,
        to = shown_lines + DEFAULT_LINE_LIMIT,
    ));
    Ok(out)
}

/// UTF-8 text or the reason it is not. `truncated` means `bytes` stops mid-file, where a
/// character cut in two is expected and not an error.
pub(super) fn decode_text(bytes: &[u8], truncated: bool) -> Result<&str, &'static str> {
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err("binary content");
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) if truncated && e.error_len().is_none() => {
            // The prefix up to valid_up_to was just checked as valid UTF-8.
            std::str::from_utf8(&bytes[..e.valid_up_to()]).map_err(|_| "not valid UTF-8")
        }
        Err(_) => Err("not valid UTF-8"),
    }
}

// ---------------------------------------------------------------------------------------
// write_file

pub async fn write_file(
    input: &serde_json::Value,
    workspace: &Path,
    decided: Option<&FileTarget>,
) -> BuiltinOutput {
    const TOOL: &str = WRITE_FILE;
    let parsed = write_args(input);
    let (shown, content) = match parsed {
        Ok(p) => p,
        Err(e) => return into_output(Err(e)),
    };
    let target = target_of(workspace, &shown, decided);
    let workspace = workspace.to_path_buf();
    into_output(
        blocking(TOOL, move || {
            // The folder is opened (made when missing) once, as a handle; the file is
            // written through it.
            let replaced = target
                .place(&workspace, true)
                .and_then(|place| place.replace(content.as_bytes()))
                .map_err(|e| beneath_error(TOOL, &shown, e))?;
            let what = if replaced.existed {
                "replaced"
            } else {
                "created"
            };
            Ok(format!(
                "Wrote {} bytes to {shown} ({what} the file)",
                content.len()
            ))
        })
        .await,
    )
}

/// write_file's path and content, checked.
pub(super) fn write_args(input: &serde_json::Value) -> Result<(String, String), FileError> {
    const TOOL: &str = WRITE_FILE;
    let (args, path) = path_args(TOOL, input, &["path", "content"])?;
    let content = args.string("content").map_err(invalid_input(TOOL))?;
    Ok((path.to_string(), content.to_string()))
}

// ---------------------------------------------------------------------------------------
// edit_file

pub async fn edit_file(
    input: &serde_json::Value,
    workspace: &Path,
    decided: Option<&FileTarget>,
) -> BuiltinOutput {
    const TOOL: &str = EDIT_FILE;
    let parsed = edit_args(input);
    let (shown, old, new) = match parsed {
        Ok(p) => p,
        Err(e) => return into_output(Err(e)),
    };
    let target = target_of(workspace, &shown, decided);
    let workspace = workspace.to_path_buf();
    into_output(blocking(TOOL, move || edit(&workspace, &target, &shown, &old, &new)).await)
}

/// edit_file's path, old_text and new_text, checked.
pub(super) fn edit_args(input: &serde_json::Value) -> Result<(String, String, String), FileError> {
    const TOOL: &str = EDIT_FILE;
    let (args, path) = path_args(TOOL, input, &["path", "old_text", "new_text"])?;
    let old = args.string("old_text").map_err(invalid_input(TOOL))?;
    let new = args.string("new_text").map_err(invalid_input(TOOL))?;
    if old.is_empty() {
        return Err(FileError::Refused(
            "Invalid input for edit_file: field 'old_text' must not be empty (use write_file \
             to create or overwrite a whole file)"
                .to_string(),
        ));
    }
    if old == new {
        return Err(FileError::Refused(
            "edit_file: old_text and new_text are identical; there is nothing to change"
                .to_string(),
        ));
    }
    Ok((path.to_string(), old.to_string(), new.to_string()))
}

fn edit(
    workspace: &Path,
    target: &FileTarget,
    shown: &str,
    old: &str,
    new: &str,
) -> Result<String, FileError> {
    const TOOL: &str = EDIT_FILE;
    // Read and written through the same folder handle: what was read is what is replaced.
    let place = target
        .place(workspace, false)
        .map_err(|e| beneath_error(TOOL, shown, e))?;
    let mut file = place.read().map_err(|e| beneath_error(TOOL, shown, e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(FileError::IsDirectory {
            tool: TOOL,
            path: shown.to_string(),
        });
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| FileError::io(TOOL, shown, e))?;
    let content = decode_text(&bytes, false).map_err(|why| FileError::NotText {
        tool: TOOL,
        path: shown.to_string(),
        why,
    })?;

    let (updated, line) = replaced(content, shown, old, new)?;
    place
        .replace(updated.as_bytes())
        .map_err(|e| beneath_error(TOOL, shown, e))?;
    Ok(format!(
        "Edited {shown}: replaced 1 occurrence starting at line {line}"
    ))
}

/// `content` with `old` replaced by `new`, exactly as edit_file does it, and the line the
/// replacement starts at; the approval preview shows the same result before it is written.
pub(super) fn replaced(
    content: &str,
    shown: &str,
    old: &str,
    new: &str,
) -> Result<(String, usize), FileError> {
    let (mut old, mut new) = (old.to_string(), new.to_string());
    let mut count = count_overlapping(content, &old);
    // read_file shows CRLF files without their `\r`, so a model's multi-line old_text uses
    // bare `\n`; match it against the file's own line endings.
    if count == 0 && content.contains("\r\n") && old.contains('\n') && !old.contains("\r\n") {
        let crlf_old = old.replace('\n', "\r\n");
        let crlf_count = count_overlapping(content, &crlf_old);
        if crlf_count > 0 {
            old = crlf_old;
            new = new.replace("\r\n", "\n").replace('\n', "\r\n");
            count = crlf_count;
        }
    }
    match count {
        0 => Err(FileError::Refused(format!(
            "edit_file: old_text was not found in {shown} (0 occurrences); the file is unchanged. \
             Read the file again and copy the text exactly, including whitespace, without the \
             line-number prefix."
        ))),
        1 => {
            let at = content.find(&old).unwrap_or(0);
            let line = content[..at].matches('\n').count() + 1;
            let updated = format!("{}{}{}", &content[..at], new, &content[at + old.len()..]);
            Ok((updated, line))
        }
        n => Err(FileError::Refused(format!(
            "edit_file: old_text occurs {n} times in {shown}; it must occur exactly once, so the \
             file is unchanged. Include more surrounding lines to make it unique."
        ))),
    }
}

/// Overlapping matches count too: replacing "aa" in "aaa" would be ambiguous.
fn count_overlapping(haystack: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(pos) = haystack[from..].find(needle) {
        count += 1;
        let start = from + pos;
        // Advance by one character, staying on a char boundary.
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
        if from > haystack.len() {
            break;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_occurrences_count() {
        assert_eq!(count_overlapping("aaa", "aa"), 2);
        assert_eq!(count_overlapping("abcabc", "abc"), 2);
        assert_eq!(count_overlapping("héllo", "l"), 2);
        assert_eq!(count_overlapping("abc", "x"), 0);
        assert_eq!(count_overlapping("€€", "€"), 2);
    }

    #[test]
    fn decode_rejects_binary_and_invalid_utf8() {
        assert_eq!(decode_text(b"a\0b", false), Err("binary content"));
        assert_eq!(decode_text(b"a\xffb", false), Err("not valid UTF-8"));
        // A character cut by the read limit is fine when the read stopped early.
        let euro = "a€".as_bytes();
        assert_eq!(decode_text(&euro[..2], true), Ok("a"));
        assert_eq!(decode_text(&euro[..2], false), Err("not valid UTF-8"));
    }
}
