//! `toolgate hooks import claude`: copies Claude Code's hooks into toolgate's config files
//! (decision 0086): `~/.claude/settings.json` into the user's `config.toml`,
//! `.claude/settings.json` into the workspace's `.toolgate/config.toml`. Says what was
//! copied; a file that cannot be read changes nothing.

use std::path::{Path, PathBuf};

use crate::settings::hooks_import::{ImportReport, import_claude_hooks};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum HooksCommand {
    /// Copy hooks from another tool's settings (`claude`: ~/.claude/settings.json into your
    /// config.toml, .claude/settings.json into the project's .toolgate/config.toml).
    Import {
        #[arg(value_enum)]
        from: HooksSource,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum HooksSource {
    Claude,
}

/// Runs it: the report, and the exit code (1 when a file could not be read or written).
pub fn run(
    command: &HooksCommand,
    workspace: &Path,
    home: Option<&Path>,
    user_config_dir: Option<&Path>,
) -> (String, i32) {
    let HooksCommand::Import {
        from: HooksSource::Claude,
    } = command;
    let mut pairs: Vec<(PathBuf, PathBuf)> = Vec::new();
    if let (Some(home), Some(config)) = (home, user_config_dir) {
        pairs.push((
            home.join(".claude").join("settings.json"),
            config.join("config.toml"),
        ));
    }
    pairs.push((
        workspace.join(".claude").join("settings.json"),
        crate::settings::project_config_path(workspace),
    ));
    let mut out = String::new();
    let mut code = 0;
    for (from, into) in pairs {
        match copy(&from, &into) {
            Ok(None) => out.push_str(&format!("{}: not found\n", from.display())),
            Ok(Some(report)) => out.push_str(&shown(&from, &into, &report)),
            Err(e) => {
                code = 1;
                out.push_str(&format!("{}: {e}\n", from.display()));
            }
        }
    }
    (out, code)
}

fn copy(from: &Path, into: &Path) -> Result<Option<ImportReport>, String> {
    let json = match std::fs::read_to_string(from) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    let toml = match std::fs::read_to_string(into) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", into.display())),
    };
    let (text, report) = import_claude_hooks(&json, &toml)?;
    if !report.copied.is_empty() {
        crate::paths::write_atomically(into, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {}", into.display(), e.source))?;
    }
    Ok(Some(report))
}

fn shown(from: &Path, into: &Path, report: &ImportReport) -> String {
    let mut out = format!(
        "{}: {} hook{} copied into {}\n",
        from.display(),
        report.copied.len(),
        if report.copied.len() == 1 { "" } else { "s" },
        into.display()
    );
    for line in &report.copied {
        out.push_str(&format!("  + {line}\n"));
    }
    for line in &report.skipped {
        out.push_str(&format!("  - not copied: {line}\n"));
    }
    out
}
