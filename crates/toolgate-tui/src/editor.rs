//! Handing the terminal to the person's editor (decision 0079): `$VISUAL`, else `$EDITOR`,
//! else `vi`, run through `sh -c` like git does (so `code --wait` works), on the real tty.
//! Raw mode, the alternate screen, mouse capture and bracketed paste are undone first and
//! redone after, whatever the editor did.
//!
//! [`edit_text`] edits a string through a temporary file (Ctrl+G in the composer);
//! [`open_file`] opens an existing file. Both block until the editor exits. The caller must
//! have stopped reading terminal events (the runtime drops its event stream first), or the
//! keys meant for the editor would reach the console.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What to open in the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditTarget {
    /// The composer's text; the edited text comes back.
    Composer(String),
    /// A file, edited in place.
    File(PathBuf),
}

/// How it went, for `update` (the reason as words: the screen shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    Composer(Result<String, String>),
    File(Result<(), String>),
}

#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("could not start the editor `{editor}`: {source}")]
    Start {
        editor: String,
        source: std::io::Error,
    },
    #[error("the editor `{editor}` exited with {status}")]
    Failed {
        editor: String,
        status: std::process::ExitStatus,
    },
    #[error("the temporary file for the editor: {0}")]
    TempFile(std::io::Error),
}

/// `$VISUAL`, else `$EDITOR`, else `vi` (empty values count as unset).
pub fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .map(|value| value.trim().to_string())
        .find(|value| !value.is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Edits `text` in the editor and returns what the file holds when it exits. On failure
/// the caller keeps `text`.
pub fn edit_text(text: &str) -> Result<String, EditorError> {
    let path = temp_path();
    write_new(&path, text).map_err(EditorError::TempFile)?;
    let result = open_file(&path)
        .and_then(|()| std::fs::read_to_string(&path).map_err(EditorError::TempFile));
    let _ = std::fs::remove_file(&path);
    result
}

/// Opens `path` in the editor and waits for it to exit.
pub fn open_file(path: &Path) -> Result<(), EditorError> {
    let editor = editor_command();
    super::terminal::release_terminal();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg("toolgate-editor")
        .arg(path)
        .status();
    // Taken back whatever happened: the console must not stay on a cooked terminal.
    let _ = super::terminal::take_terminal();
    match status {
        Err(source) => Err(EditorError::Start { editor, source }),
        Ok(status) if !status.success() => Err(EditorError::Failed { editor, status }),
        Ok(_) => Ok(()),
    }
}

/// Runs the editor for `target` off the runtime's threads, then has the whole screen
/// drawn again (the editor drew over it).
pub(super) async fn hand_over(
    term: &mut super::terminal::TerminalGuard,
    target: EditTarget,
) -> Edited {
    let outcome = tokio::task::spawn_blocking(move || match target {
        EditTarget::Composer(text) => Edited::Composer(edit_text(&text).map_err(|e| e.to_string())),
        EditTarget::File(path) => Edited::File(open_file(&path).map_err(|e| e.to_string())),
    })
    .await;
    // The screen was cleared when the console took it back; with the last frame
    // forgotten, the next draw writes every cell. (Not `Terminal::clear`: it asks the
    // terminal for the cursor position first and gives up without an answer.)
    term.terminal.swap_buffers();
    outcome.unwrap_or_else(|e| Edited::Composer(Err(format!("the editor task failed: {e}"))))
}

/// A fresh file name in the temporary folder (the message may be private: only the
/// person can read it).
fn temp_path() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    std::env::temp_dir().join(format!(
        "toolgate-message-{}-{nanos}.md",
        std::process::id()
    ))
}

fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}
