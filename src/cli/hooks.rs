//! `toolgate hooks import claude`: copies Claude Code's hooks into toolgate's config files
//! (decision 0086): `~/.claude/settings.json` into the user's `config.toml`,
//! `.claude/settings.json` into the workspace's `.toolgate/config.toml`. Says what was
//! copied and how each will run; a file that cannot be read changes nothing.
//!
//! Claude Code runs hooks unsandboxed. The user's own hooks are copied `sandbox = false`
//! (as they were written to run) unless `--sandbox` is given; a project's hooks always run
//! in the sandbox (a project file may not say otherwise), and the output says both.

use std::path::{Path, PathBuf};

use crate::settings::hooks_import::{CopiedHooksRun, ImportReport, copy_claude_hooks};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum HooksCommand {
    /// Copy hooks from another tool's settings (`claude`: ~/.claude/settings.json into your
    /// config.toml, .claude/settings.json into the project's .toolgate/config.toml).
    Import {
        #[arg(value_enum)]
        from: HooksSource,
        /// Run your own copied hooks in the sandbox too (by default they are copied with
        /// `sandbox = false`, as Claude Code ran them; a project's hooks always run in it).
        #[arg(long)]
        sandbox: bool,
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
        sandbox,
    } = command;
    let own = if *sandbox {
        CopiedHooksRun::Sandboxed
    } else {
        CopiedHooksRun::Unsandboxed
    };
    let mut pairs: Vec<(PathBuf, PathBuf, CopiedHooksRun)> = Vec::new();
    if let (Some(home), Some(config)) = (home, user_config_dir) {
        pairs.push((
            home.join(".claude").join("settings.json"),
            config.join("config.toml"),
            own,
        ));
    }
    pairs.push((
        workspace.join(".claude").join("settings.json"),
        crate::settings::project_config_path(workspace),
        CopiedHooksRun::Sandboxed,
    ));
    let mut out = String::new();
    let mut code = 0;
    for (from, into, run) in pairs {
        match copy_claude_hooks(&from, &into, run) {
            Ok(None) => out.push_str(&format!("{}: not found\n", from.display())),
            Ok(Some(report)) => out.push_str(&shown(&from, &into, &report, run)),
            Err(e) => {
                code = 1;
                out.push_str(&format!("{}: {e}\n", from.display()));
            }
        }
    }
    (out, code)
}

fn shown(from: &Path, into: &Path, report: &ImportReport, run: CopiedHooksRun) -> String {
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
    if !report.copied.is_empty() {
        out.push_str(why(run));
    }
    out
}

/// Why the copied hooks run the way they do (Claude Code runs every hook unsandboxed).
fn why(run: CopiedHooksRun) -> &'static str {
    match run {
        CopiedHooksRun::Unsandboxed => {
            "  Claude Code runs hooks unsandboxed, so these keep sandbox = false; \
             import with --sandbox (or delete that key) to confine them. See assets/docs/hooks.md.\n"
        }
        CopiedHooksRun::Sandboxed => {
            "  These run in toolgate's sandbox (a project's hooks always do): a hook that \
             writes outside the workspace and temp, or uses the network, fails, and the call \
             it guards asks you. See assets/docs/hooks.md.\n"
        }
    }
}
