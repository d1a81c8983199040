//! `toolgate undo`: restore the files the last turn changed, list checkpoints, or show
//! what an undo would do. The person typing the command is the one deciding, so it does
//! not ask again (`--dry-run` shows the list first) — except that a file changed again
//! since the turn is never overwritten without `--force`: the undo is refused, naming
//! those files, and nothing changes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::checkpoint::{
    ChangedSince, CheckpointInfo, FileChange, Shadow, UndoScope, count_files, describe,
    restored_report, unrestored_report,
};
use crate::error::Failure;
use crate::journal::{self, Journal, SessionLog};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoAction {
    /// Restore the files of the last turn that changed any.
    Restore,
    /// Say what `Restore` would do.
    DryRun,
    /// Every checkpoint of the workspace.
    List,
}

/// What `toolgate undo` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoOptions {
    pub action: UndoAction,
    /// Only this session's turns (None: the last turn of any session).
    pub session: Option<String>,
    /// Restore files changed since the turn too.
    pub force: bool,
}

/// Runs `toolgate undo` for `workspace` with checkpoints under `root` (None: no state
/// directory) and session logs under `sessions`; returns what to print and the exit code
/// (1 when a file was left unrestored: the report says which and why).
pub fn run(
    root: Option<&Path>,
    sessions: Option<&Path>,
    workspace: &Path,
    options: UndoOptions,
) -> Result<(String, i32), Failure> {
    let action = options.action;
    let root = root.ok_or_else(|| {
        Failure::Run("no state directory for checkpoints (set TOOLGATE_STATE_DIR)".into())
    })?;
    let run_failure = |e: crate::checkpoint::CheckpointError| Failure::Run(e.to_string());
    let shadow = Shadow::existing(root, workspace).map_err(run_failure)?;
    let Some(shadow) = shadow else {
        return match action {
            UndoAction::List => Ok((
                format!("No checkpoints for {} yet.\n", workspace.display()),
                0,
            )),
            UndoAction::Restore | UndoAction::DryRun => Err(nothing_to_undo(workspace)),
        };
    };
    match action {
        UndoAction::List => Ok((
            list(&shadow.list().map_err(run_failure)?, shadow.workspace()),
            0,
        )),
        UndoAction::DryRun | UndoAction::Restore => {
            let plan = shadow
                .plan_undo(options.session.as_deref())
                .map_err(run_failure)?
                .ok_or_else(|| nothing_to_undo(shadow.workspace()))?;
            if action == UndoAction::DryRun {
                return Ok((
                    would_restore(&plan.checkpoint, &plan.files, &plan.changed),
                    0,
                ));
            }
            if !plan.changed.is_empty() && !options.force {
                return Err(refused(&plan.checkpoint, &plan.changed));
            }
            let scope = if options.force {
                UndoScope::All
            } else {
                UndoScope::Untouched
            };
            let done = shadow.undo(&plan, scope).map_err(run_failure)?;
            if done.files.is_empty() && done.left.is_empty() {
                // Every file changed between the plan and the undo; nothing was touched.
                return Err(Failure::Run(format!(
                    "not undoing {}: its files changed while undoing; nothing was changed",
                    describe(&plan.checkpoint)
                )));
            }
            let mut out = if done.files.is_empty() {
                format!(
                    "Not undoing {}: no file could be restored safely; nothing was changed",
                    describe(&plan.checkpoint)
                )
            } else {
                restored_report(&plan.checkpoint, &done.files)
            };
            // A file that cannot be restored safely is left as it is, and named with why.
            out.push_str(&unrestored_report(&done.left));
            out.push('\n');
            // A file changed between the plan and the undo stays as it is, and is named.
            let left = |f: &FileChange| done.left.iter().any(|l| l.path == f.path);
            for file in plan
                .files
                .iter()
                .filter(|f| !done.files.contains(f) && !left(f))
            {
                let _ = writeln!(
                    out,
                    "  kept {} (changed since the turn)",
                    crate::sanitize::for_terminal(&file.path.display().to_string())
                );
            }
            if let (Some(sessions), false) = (sessions, done.files.is_empty()) {
                record_in_session(sessions, &plan.checkpoint, done.files);
            }
            // Something left unrestored is a failure to report, after the report.
            let code = i32::from(!done.left.is_empty());
            Ok((out, code))
        }
    }
}

fn nothing_to_undo(workspace: &Path) -> Failure {
    Failure::Run(format!(
        "nothing to undo in {}: no turn has changed files there since its last undo",
        workspace.display()
    ))
}

/// The refusal: the files changed since the turn, and how to go on.
fn refused(info: &CheckpointInfo, changed: &[ChangedSince]) -> Failure {
    let names: Vec<String> = changed
        .iter()
        .map(|c| {
            format!(
                "{} ({})",
                crate::sanitize::for_terminal(&c.path.display().to_string()),
                c.reason()
            )
        })
        .collect();
    Failure::Run(format!(
        "not undoing {}: {} would overwrite changes made since: {}; nothing was changed \
         (`toolgate undo --dry-run` shows the differences, `toolgate undo --force` restores \
         them anyway)",
        describe(info),
        if changed.len() == 1 { "it" } else { "they" },
        names.join(", ")
    ))
}

fn would_restore(
    info: &CheckpointInfo,
    files: &[crate::checkpoint::FileChange],
    changed: &[ChangedSince],
) -> String {
    let mut out = format!(
        "Would undo {}: {}\n",
        describe(info),
        count_files(files.len())
    );
    for file in files {
        let _ = write!(
            out,
            "  {} {}  ({} by the turn)",
            file.change.undo_verb(),
            crate::sanitize::for_terminal(&file.path.display().to_string()),
            file.change.past_tense()
        );
        match changed.iter().find(|c| c.path == file.path) {
            Some(c) => {
                let _ = writeln!(out, "  [{}; only with --force]", c.reason());
                for line in c.diff.lines() {
                    let _ = writeln!(out, "      {}", crate::sanitize::for_terminal(line));
                }
            }
            None => out.push('\n'),
        }
    }
    out
}

fn list(all: &[CheckpointInfo], workspace: &Path) -> String {
    if all.is_empty() {
        return format!("No checkpoints for {} yet.\n", workspace.display());
    }
    let mut out = format!("Checkpoints of {} (newest last):\n", workspace.display());
    for info in all {
        let time = info
            .time
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M:%S");
        let changed = match &info.files {
            None => "changes not recorded yet (turn running or interrupted)".to_string(),
            Some(files) if files.is_empty() => "no files changed".to_string(),
            Some(files) => {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| crate::sanitize::for_terminal(&f.path.display().to_string()))
                    .collect();
                format!("{} changed: {}", count_files(files.len()), names.join(", "))
            }
        };
        let _ = write!(
            out,
            "#{:<4} {time}  session {}  turn {:<3} {changed}",
            info.id, info.session, info.turn
        );
        if !info.skipped.is_empty() {
            let skipped: Vec<String> = info
                .skipped
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let _ = write!(out, "  [skipped, too big: {}]", skipped.join(", "));
        }
        if info.undone.is_some() {
            out.push_str("  [undone]");
        }
        out.push('\n');
    }
    out
}

/// The session the undone turn belongs to gets an `undo` record, as `/undo` writes one.
fn record_in_session(
    sessions: &Path,
    info: &CheckpointInfo,
    restored: Vec<crate::checkpoint::FileChange>,
) {
    let path: PathBuf = journal::log_path(sessions, &info.session);
    if !path.is_file() {
        return;
    }
    let appended = SessionLog::open(sessions, &info.session).and_then(|mut log| {
        log.append(Journal::Undo {
            checkpoint: info.id,
            restored,
        })
    });
    if let Err(e) = appended {
        tracing::warn!("recording the undo in the session log: {e}");
    }
}
