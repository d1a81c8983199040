//! What the project brings to the model besides its files: the instruction files
//! (AGENTS.md, CLAUDE.md, and what they import) that go into the system prompt, the
//! file-based slash commands (`.toolgate/commands/*.md` and their kin), and `@path`
//! attachments of workspace files. Read once when a session starts (the workspace listing
//! for completion too, beside the session); pure apart from reading files, and knows
//! nothing of the agent or the front ends.

pub mod commands;
pub mod files;
mod imports;
pub mod instructions;

use std::path::{Path, PathBuf};

pub use commands::{FileCommand, Typed};
pub use imports::{InstructionFile, Refused};
pub use instructions::{InstructionScope, Instructions, LoadedFile};

/// `/init`: what the model is asked (a normal turn, so writing the file passes the gate
/// like any other write, and an existing AGENTS.md is improved, not silently replaced).
pub const INIT_PROMPT: &str = "Draft an AGENTS.md for this workspace: the instructions a coding agent \
needs to work here. Look around first (the README, the build and test setup, the folder layout, the \
conventions the code follows). Keep it short and concrete: how to build, test and lint; the layout; \
the conventions and the pitfalls. If an AGENTS.md (or CLAUDE.md) exists already, read it and improve \
it rather than starting over. Then write it to AGENTS.md at the workspace's root with write_file \
(the person is asked before a file is written, as for any write).";

/// The project's context for one session, as loaded at its start.
#[derive(Debug, Clone, Default)]
pub struct ProjectContext {
    pub instructions: Instructions,
    pub commands: Vec<FileCommand>,
    /// Whether the person trusts the project (`--trust-project`, or yes in the console);
    /// the instruction files are reported as a trusted or an untrusted project's.
    pub trusted: bool,
}

pub use crate::protocol::ProjectView;

impl ProjectContext {
    /// Reads the instruction files and the command files. `user_dir`: the user config
    /// folder (`~/.config/toolgate`); `reserved`: command words the file commands must not
    /// take (the built-in commands). The problems found (a clash, an import refused, a cut)
    /// come back as notices for the person; nothing in them stops the session.
    pub fn load(
        workspace: &Path,
        user_dir: Option<&Path>,
        reserved: &[&str],
    ) -> (ProjectContext, Vec<String>) {
        let instructions = instructions::load(workspace, user_dir);
        let mut notices = instructions.problems.clone();
        if let Some(cut) = &instructions.cut {
            notices.push(cut.clone());
        }
        let (commands, problems) = commands::load(workspace, user_dir, reserved);
        notices.extend(problems);
        (
            ProjectContext {
                instructions,
                commands,
                trusted: false,
            },
            notices,
        )
    }

    pub fn view(&self) -> ProjectView {
        ProjectView {
            files: self.instructions.files.clone(),
            cut: self.instructions.cut.clone(),
            commands: self.commands.clone(),
        }
    }
}

/// The project's root: the nearest folder at or above `workspace` that holds `.git` (a
/// folder, or the file a worktree has), else the workspace itself.
pub fn project_root(workspace: &Path) -> PathBuf {
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(workspace)
        .to_path_buf()
}

/// A path as the person reads it: relative to `base` when inside it.
pub fn shown(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// A file's text if it is text: None for a file that holds a NUL byte in its first 8 KB
/// or is not UTF-8 (read as binary, and refused by the callers).
pub fn read_text(path: &Path) -> std::io::Result<Option<String>> {
    read_text_from(std::fs::File::open(path)?)
}

/// [`read_text`] of a file already opened (beneath a directory handle).
pub fn read_text_from(mut file: std::fs::File) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Ok(None);
    }
    Ok(String::from_utf8(bytes).ok())
}
