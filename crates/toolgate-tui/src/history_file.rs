//! The prompt history on disk: one file per workspace in the state folder
//! (`history/<16 hex of SHA-256 of the workspace path>.jsonl`), one JSON string per line,
//! oldest first. The runtime reads it once when the console starts and appends each prompt
//! the person sends (decision 0079).
//!
//! Appends are one `write` of one whole line on a file opened for appending, so two
//! consoles in the same workspace interleave lines, never bytes. A line that does not read
//! (a torn write, an edit by hand) is skipped and counted; the others are kept. The file is
//! bounded: past [`COMPACT_AT`] lines it is rewritten (atomically) with the newest
//! [`KEEP`] prompts.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Prompts kept after a compaction, and the most the console walks through.
pub const KEEP: usize = 1000;
/// Lines in the file that trigger a compaction at start-up.
const COMPACT_AT: usize = 2 * KEEP;
/// A prompt longer than this (a large paste) is not kept: the history stays small to read.
pub const MAX_PROMPT_BYTES: usize = 64 * 1024;

/// The open history of one workspace.
#[derive(Debug)]
pub struct HistoryFile {
    path: PathBuf,
    /// The file does not end with a newline (a torn last write): the next append starts
    /// a new line first, so the damage stays in that one line.
    needs_newline: bool,
}

/// What reading the file found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Oldest first, at most [`KEEP`].
    pub prompts: Vec<String>,
    /// Something the person should know once (damaged lines, an unreadable file).
    pub problem: Option<String>,
}

/// The history file of `workspace` under `state_dir`.
pub fn path_for(state_dir: &Path, workspace: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    state_dir
        .join("history")
        .join(format!("{}.jsonl", hex::encode(&digest[..8])))
}

/// What the console starts with: the file (None without a state folder) and its prompts.
#[derive(Debug)]
pub struct Opened {
    pub file: Option<HistoryFile>,
    pub prompts: Vec<String>,
    pub problem: Option<String>,
}

/// Opens the history of `workspace` in the state folder.
pub fn open_for(workspace: &Path) -> Opened {
    let Some(state_dir) = crate::paths::state_dir() else {
        return Opened {
            file: None,
            prompts: Vec::new(),
            problem: None,
        };
    };
    let (file, loaded) = HistoryFile::open(path_for(&state_dir, workspace));
    Opened {
        file: Some(file),
        prompts: loaded.prompts,
        problem: loaded.problem,
    }
}

impl HistoryFile {
    /// Reads the history at `path` (a missing file is an empty history).
    pub fn open(path: PathBuf) -> (HistoryFile, Loaded) {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                let problem = format!(
                    "prompt history {} could not be read ({e}); new prompts are still added",
                    path.display()
                );
                let file = HistoryFile {
                    path,
                    needs_newline: false,
                };
                return (
                    file,
                    Loaded {
                        prompts: Vec::new(),
                        problem: Some(problem),
                    },
                );
            }
        };
        let needs_newline = bytes.last().is_some_and(|b| *b != b'\n');
        let mut prompts = Vec::new();
        let mut damaged = 0usize;
        let mut lines = 0usize;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            lines += 1;
            match serde_json::from_slice::<String>(line) {
                Ok(prompt) => prompts.push(prompt),
                Err(_) => damaged += 1,
            }
        }
        let mut file = HistoryFile {
            path,
            needs_newline,
        };
        let mut problem = (damaged > 0).then(|| {
            format!(
                "prompt history {}: {damaged} damaged line(s) skipped; the other {} prompt(s) are kept",
                file.path.display(),
                prompts.len()
            )
        });
        let cut = prompts.len().saturating_sub(KEEP);
        prompts.drain(..cut);
        if lines > COMPACT_AT
            && let Err(e) = file.rewrite(&prompts)
        {
            problem.get_or_insert(format!(
                "prompt history {} could not be compacted ({e})",
                file.path.display()
            ));
        }
        (file, Loaded { prompts, problem })
    }

    /// Replaces the file with `prompts` (temporary file and rename).
    fn rewrite(&mut self, prompts: &[String]) -> std::io::Result<()> {
        let mut out = Vec::new();
        for prompt in prompts {
            out.extend_from_slice(&line_of(prompt)?);
        }
        crate::paths::write_atomically(&self.path, &out)?;
        self.needs_newline = false;
        Ok(())
    }

    /// Adds one prompt at the end, in one write.
    pub fn append(&mut self, prompt: &str) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut line = Vec::new();
        if self.needs_newline {
            line.push(b'\n');
        }
        line.extend_from_slice(&line_of(prompt)?);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(&line)?;
        self.needs_newline = false;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn line_of(prompt: &str) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(prompt)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_survive_a_damaged_line_and_a_torn_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        std::fs::write(&path, b"\"first\"\nnot json\n\"second\\nline\"\n\"torn").unwrap();
        let (mut file, loaded) = HistoryFile::open(path.clone());
        assert_eq!(loaded.prompts, ["first", "second\nline"]);
        let problem = loaded.problem.unwrap();
        assert!(problem.contains("2 damaged line(s)"), "{problem}");
        file.append("third").unwrap();
        let (_, again) = HistoryFile::open(path);
        assert_eq!(again.prompts, ["first", "second\nline", "third"]);
    }

    #[test]
    fn a_long_history_is_cut_to_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let (mut file, _) = HistoryFile::open(path.clone());
        for i in 0..=COMPACT_AT {
            file.append(&format!("p{i}")).unwrap();
        }
        let (_, loaded) = HistoryFile::open(path.clone());
        assert_eq!(loaded.prompts.len(), KEEP);
        assert_eq!(
            loaded.prompts.last().map(String::as_str),
            Some(format!("p{COMPACT_AT}").as_str())
        );
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines, KEEP, "the file was compacted");
    }
}
