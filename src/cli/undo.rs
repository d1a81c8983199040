//! `toolgate undo`: restore the files the last turn changed, list checkpoints, or show
//! what an undo would do. The person typing the command is the one deciding, so it does
//! not ask again (`--dry-run` shows the list first).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::agent::session::{self, Record, SessionLog};
use crate::checkpoint::{CheckpointInfo, Shadow, count_files, describe, restored_report};
use crate::error::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoAction {
    /// Restore the files of the last turn that changed any.
    Restore,
    /// Say what `Restore` would do.
    DryRun,
    /// Every checkpoint of the workspace.
    List,
}

/// Runs `toolgate undo` for `workspace` with checkpoints under `root` (None: no state
/// directory) and session logs under `sessions`; returns what to print.
pub fn run(
    root: Option<&Path>,
    sessions: Option<&Path>,
    workspace: &Path,
    action: UndoAction,
) -> Result<String, Failure> {
    let root = root.ok_or_else(|| {
        Failure::Run("no state directory for checkpoints (set TOOLGATE_STATE_DIR)".into())
    })?;
    let run_failure = |e: crate::checkpoint::CheckpointError| Failure::Run(e.to_string());
    let shadow = Shadow::existing(root, workspace).map_err(run_failure)?;
    let Some(shadow) = shadow else {
        return match action {
            UndoAction::List => Ok(format!("No checkpoints for {} yet.\n", workspace.display())),
            UndoAction::Restore | UndoAction::DryRun => Err(nothing_to_undo(workspace)),
        };
    };
    match action {
        UndoAction::List => Ok(list(
            &shadow.list().map_err(run_failure)?,
            shadow.workspace(),
        )),
        UndoAction::DryRun | UndoAction::Restore => {
            let plan = shadow
                .plan_undo()
                .map_err(run_failure)?
                .ok_or_else(|| nothing_to_undo(shadow.workspace()))?;
            if action == UndoAction::DryRun {
                return Ok(would_restore(&plan.checkpoint, &plan.files));
            }
            let restored = shadow.undo(&plan).map_err(run_failure)?;
            let mut out = restored_report(&plan.checkpoint, &restored);
            out.push('\n');
            if let Some(sessions) = sessions {
                record_in_session(sessions, &plan.checkpoint, restored);
            }
            Ok(out)
        }
    }
}

fn nothing_to_undo(workspace: &Path) -> Failure {
    Failure::Run(format!(
        "nothing to undo in {}: no turn has changed files there since its last undo",
        workspace.display()
    ))
}

fn would_restore(info: &CheckpointInfo, files: &[crate::checkpoint::FileChange]) -> String {
    let mut out = format!(
        "Would undo {}: {}\n",
        describe(info),
        count_files(files.len())
    );
    for file in files {
        let _ = writeln!(
            out,
            "  {} {}  ({} by the turn)",
            file.change.undo_verb(),
            crate::sanitize::for_terminal(&file.path.display().to_string()),
            file.change.past_tense()
        );
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
    let path: PathBuf = session::log_path(sessions, &info.session);
    if !path.is_file() {
        return;
    }
    let appended = SessionLog::open(sessions, &info.session).and_then(|mut log| {
        log.append(Record::Undo {
            checkpoint: info.id,
            restored,
        })
    });
    if let Err(e) = appended {
        tracing::warn!("recording the undo in the session log: {e}");
    }
}
