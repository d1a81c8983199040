//! The agent's side of checkpoints: one before a turn first changes the workspace, a
//! snapshot as each workspace-changing call starts and ends (so the turn owns only what
//! changed under its own calls), the turn's summary when it ends, and `/undo` of this
//! session's turns (asked through the inbox, then done). Git runs on the blocking pool; a
//! failing checkpoint is reported and never stops the tool call it precedes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::conversation::Conversation;
use crate::checkpoint::{
    CallMark, CheckpointError, Shadow, Taken, UndoPlan, UndoScope, count_files,
};
use crate::journal::Journal;
use crate::pool::ToolOrigin;
use crate::protocol::AgentEvent;
use crate::protocol::Event;
use crate::protocol::questions::{Origin, Reply, Request, RestoreAnswer, RestoreFiles};
use crate::sandbox::WriteLog;

/// Names listed in one notice before "and N more".
const LISTED: usize = 5;

/// Checkpoint state of one agent.
#[derive(Debug, Default)]
pub(super) struct Checkpoints {
    /// `state_dir/checkpoints`; None: checkpoints are off.
    root: Option<PathBuf>,
    /// Opened when the session starts, by the background snapshot in `prime`.
    shadow: Option<Shadow>,
    /// The session-start snapshot, running on the blocking pool until the first
    /// checkpoint needs the shadow.
    prime: Option<tokio::task::JoinHandle<Result<Shadow, CheckpointError>>>,
    /// Turns of this session so far, the running one included.
    turn: usize,
    /// This turn's checkpoint, once taken.
    current: Option<u64>,
    /// The number the next recorded call of this turn gets.
    next_call: u32,
    /// This turn already tried (a failure is reported once per turn, not per call).
    attempted: bool,
    /// Skipped files and nested repositories already reported this session.
    announced: HashSet<PathBuf>,
    /// The workspace the checkpoints are of.
    workspace: PathBuf,
}

impl Checkpoints {
    pub(super) fn new(root: Option<PathBuf>, workspace: PathBuf) -> Self {
        Checkpoints {
            root,
            workspace,
            ..Default::default()
        }
    }

    /// A resumed session continues its turn count.
    pub(super) fn resume_after(&mut self, turns: usize) {
        self.turn = turns;
    }

    pub(super) fn begin_turn(&mut self) {
        self.turn += 1;
        self.current = None;
        self.next_call = 0;
        self.attempted = false;
    }
}

/// A workspace-changing call under way, whose changes are being recorded.
#[derive(Debug)]
pub(super) struct CallWatch {
    mark: CallMark,
    /// A file tool's target: only it can be the call's change.
    only: Option<Vec<PathBuf>>,
    /// What a confined bash command asked to change, recorded while it runs.
    trace: WriteLog,
}

impl CallWatch {
    pub(super) fn trace(&self) -> &WriteLog {
        &self.trace
    }
}

/// The file a write/edit call targets, relative to the workspace (None: the call is not a
/// file tool; an empty list: its target is outside the workspace).
fn file_tool_target(origin: &ToolOrigin, input: &Value, workspace: &Path) -> Option<Vec<PathBuf>> {
    let ToolOrigin::Builtin(kind) = origin else {
        return None;
    };
    if !kind.writes_files() {
        return None;
    }
    let Some(path) = input.get("path").and_then(Value::as_str) else {
        return Some(Vec::new());
    };
    let full = crate::paths::lexically_normal(&workspace.join(path));
    Some(
        full.strip_prefix(crate::paths::lexically_normal(workspace))
            .ok()
            .map(Path::to_path_buf)
            .into_iter()
            .collect(),
    )
}

/// Whether a call may change the workspace: the shell, the file-writing tools, and any
/// MCP tool (a server can write files; what it claims about itself is not trusted).
pub(super) fn may_change_workspace(origin: &ToolOrigin) -> bool {
    match origin {
        ToolOrigin::Builtin(kind) => kind.is_shell() || kind.writes_files(),
        ToolOrigin::Mcp { .. } => true,
    }
}

fn blocking_failed(e: tokio::task::JoinError) -> CheckpointError {
    CheckpointError::Task(e.to_string())
}

/// "a, b, c and 2 more".
fn listed(paths: impl IntoIterator<Item = PathBuf>) -> String {
    let paths: Vec<String> = paths
        .into_iter()
        .map(|p| crate::sanitize::for_terminal(&p.display().to_string()))
        .collect();
    let mut text = paths
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > LISTED {
        text.push_str(&format!(" and {} more", paths.len() - LISTED));
    }
    text
}

/// "10 MiB", "512 KiB", "100 bytes".
fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

impl Checkpoints {
    /// At session start: opens the shadow repository and records the workspace in the
    /// background, so the turn that first changes something does not wait for every file
    /// of a big workspace to be hashed (a few seconds for 10,000 files).
    pub(super) fn prime(&mut self) {
        let Some(root) = self.root.clone() else {
            return;
        };
        let workspace = self.workspace.clone();
        self.prime = Some(tokio::task::spawn_blocking(move || {
            let shadow = Shadow::open(&root, &workspace)?;
            shadow.prime()?;
            Ok(shadow)
        }));
    }

    /// The shadow repository, opened on first use (or by the session-start snapshot).
    async fn shadow(&mut self) -> Result<Option<Shadow>, CheckpointError> {
        if let Some(shadow) = &self.shadow {
            return Ok(Some(shadow.clone()));
        }
        if let Some(prime) = self.prime.take() {
            // A failed start (too many files, no git) is reported by the checkpoint that
            // tries again below.
            match prime.await {
                Ok(Ok(shadow)) => {
                    self.shadow = Some(shadow.clone());
                    return Ok(Some(shadow));
                }
                Ok(Err(e)) => tracing::warn!("session-start snapshot: {e}"),
                Err(e) => tracing::warn!("session-start snapshot: {e}"),
            }
        }
        let Some(root) = self.root.clone() else {
            return Ok(None);
        };
        let workspace = self.workspace.clone();
        let shadow = tokio::task::spawn_blocking(move || Shadow::open(&root, &workspace))
            .await
            .map_err(blocking_failed)??;
        self.shadow = Some(shadow.clone());
        Ok(Some(shadow))
    }

    /// Before a call that may change the workspace: the turn's checkpoint (the first
    /// time), and the workspace as the call starts. None: nothing is recorded (checkpoints
    /// off, or failing; said once per turn).
    pub(super) async fn before_call(
        &mut self,
        origin: &ToolOrigin,
        input: &Value,
        conv: &mut Conversation,
    ) -> Option<CallWatch> {
        if self.current.is_none() && self.attempted {
            return None;
        }
        self.attempted = true;
        let only = file_tool_target(origin, input, &self.workspace);
        let (session, turn, call) = (conv.session_id.clone(), self.turn, self.next_call);
        let started = match (self.shadow().await, self.current) {
            (Ok(None), _) => return None,
            (Ok(Some(shadow)), None) => {
                tokio::task::spawn_blocking(move || shadow.take_for_call(&session, turn))
                    .await
                    .map_err(blocking_failed)
                    .and_then(|taken| taken)
                    .map(|(taken, mark)| (Some(taken), mark))
            }
            (Ok(Some(shadow)), Some(id)) => {
                tokio::task::spawn_blocking(move || shadow.begin_call(id, call))
                    .await
                    .map_err(blocking_failed)
                    .and_then(|mark| mark)
                    .map(|mark| (None, mark))
            }
            (Err(e), _) => Err(e),
        };
        match started {
            Ok((taken, mark)) => {
                if let Some(taken) = taken {
                    self.taken(taken, conv).await;
                }
                self.next_call += 1;
                Some(CallWatch {
                    mark,
                    only,
                    trace: WriteLog::new(),
                })
            }
            Err(e) if self.current.is_none() => {
                conv.emit(AgentEvent::Fact(Event::Notice {
                    message: format!(
                        "No checkpoint for this turn ({e}); its changes cannot be undone."
                    ),
                }))
                .await;
                None
            }
            Err(e) => {
                conv.emit(AgentEvent::Fact(Event::Notice { message: format!(
                    "Could not record the workspace before this call ({e}); undo leaves its changes in place."
                ) }))
                .await;
                None
            }
        }
    }

    /// After the call of `watch`: the workspace as it ended, and so the call's changes.
    pub(super) async fn after_call(&mut self, watch: Option<CallWatch>, conv: &mut Conversation) {
        let (Some(watch), Some(shadow)) = (watch, self.shadow.clone()) else {
            return;
        };
        // A traced command owns only what it asked to change (paths relative to the
        // workspace; a folder it renamed or removed covers the files in it).
        let only = watch.only.or_else(|| {
            watch.trace.written().map(|paths| {
                paths
                    .iter()
                    .filter_map(|p| p.strip_prefix(shadow.workspace()).ok())
                    .map(Path::to_path_buf)
                    .collect()
            })
        });
        let mark = watch.mark;
        let ended = tokio::task::spawn_blocking(move || shadow.end_call(&mark, only.as_deref()))
            .await
            .map_err(blocking_failed)
            .and_then(|files| files);
        if let Err(e) = ended {
            conv.emit(AgentEvent::Fact(Event::Notice { message: format!(
                "Could not record what this call changed ({e}); undo compares with the workspace as it will be then."
            ) }))
            .await;
        }
    }

    async fn taken(&mut self, taken: Taken, conv: &mut Conversation) {
        self.current = Some(taken.id);
        conv.record(Journal::Checkpoint {
            checkpoint: taken.id,
            turn: self.turn,
            commit: taken.commit,
            skipped: taken
                .skipped
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
        })
        .await;
        let new_skipped = self.not_yet_announced(taken.skipped);
        if !new_skipped.is_empty() {
            let limit = self
                .shadow
                .as_ref()
                .map_or(0, |s| s.limits().max_file_bytes);
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: format!(
                    "Checkpoint {}: skipped {} over {}, which undo cannot restore: {}",
                    taken.id,
                    count_files(new_skipped.len()),
                    human_size(limit),
                    listed(new_skipped)
                ),
            }))
            .await;
        }
        let new_nested = self.not_yet_announced(taken.nested);
        if !new_nested.is_empty() {
            conv.emit(AgentEvent::Fact(Event::Notice { message: format!(
                "Checkpoint {}: left out nested git repositories, which undo cannot restore: {}",
                taken.id,
                listed(new_nested)
            ) }))
            .await;
        }
    }

    /// The paths not reported yet this session (taken as reported now).
    fn not_yet_announced(&mut self, paths: Vec<PathBuf>) -> Vec<PathBuf> {
        paths
            .into_iter()
            .filter(|p| self.announced.insert(p.clone()))
            .collect()
    }

    /// At the end of a turn that took a checkpoint: what it changed, recorded and said.
    pub(super) async fn finish(&mut self, conv: &mut Conversation) {
        let (Some(id), Some(shadow)) = (self.current.take(), self.shadow.clone()) else {
            return;
        };
        let finished = tokio::task::spawn_blocking(move || shadow.finish(id))
            .await
            .map_err(blocking_failed)
            .and_then(|files| files);
        match finished {
            Ok(files) if files.is_empty() => {}
            Ok(files) => {
                let notice = format!(
                    "This turn changed {}: {} (checkpoint {id}; /undo or `toolgate undo` restores {})",
                    count_files(files.len()),
                    listed(files.iter().map(|f| f.path.clone())),
                    if files.len() == 1 { "it" } else { "them" }
                );
                conv.record(Journal::TurnChanges {
                    checkpoint: id,
                    files,
                })
                .await;
                conv.emit(AgentEvent::Fact(Event::Notice { message: notice }))
                    .await;
            }
            Err(e) => {
                conv.emit(AgentEvent::Fact(Event::Notice { message: format!(
                    "Could not record what this turn changed ({e}); undo compares with the workspace as it will be then."
                ) }))
                .await;
            }
        }
    }

    /// `/undo`: finds the last turn that changed files, asks the person with the list,
    /// and restores them when they agree.
    pub(super) async fn undo_last_turn(
        &mut self,
        cancel: CancellationToken,
        conv: &mut Conversation,
    ) {
        if self.root.is_none() {
            let off = "Undo is unavailable: checkpoints are off (no state directory; set TOOLGATE_STATE_DIR).";
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: off.to_string(),
            }))
            .await;
            return;
        }
        let notice = match self.plan_undo(conv.session_id.clone()).await {
            Ok(Some(plan)) => self.confirm_and_undo(plan, &cancel, conv).await,
            Ok(None) => {
                "Nothing to undo: no turn of this session has changed files in this workspace since its last undo."
                    .to_string()
            }
            Err(e) => format!("Undo failed: {e}"),
        };
        conv.emit(AgentEvent::Fact(Event::Notice { message: notice }))
            .await;
    }

    /// The undo of this session's last turn that changed files: sessions in one
    /// workspace keep separate chains, so `/undo` never undoes another session's turn.
    async fn plan_undo(&mut self, session: String) -> Result<Option<UndoPlan>, CheckpointError> {
        let Some(root) = self.root.clone() else {
            return Ok(None);
        };
        let workspace = self.workspace.clone();
        tokio::task::spawn_blocking(move || match Shadow::existing(&root, &workspace)? {
            Some(shadow) => shadow.plan_undo(Some(&session)),
            None => Ok(None),
        })
        .await
        .map_err(blocking_failed)?
    }

    async fn confirm_and_undo(
        &mut self,
        plan: UndoPlan,
        cancel: &CancellationToken,
        conv: &mut Conversation,
    ) -> String {
        let info = &plan.checkpoint;
        let (request, answer) = Request::new(
            Origin::Console {
                folder: self.workspace.clone(),
            },
            RestoreFiles {
                checkpoint: info.id,
                session: info.session.clone(),
                turn: info.turn,
                taken: info.time,
                workspace: self.workspace.clone(),
                files: plan.files.clone(),
                changed: plan.changed.clone(),
            },
            Instant::now(),
            None,
        );
        let scope = match crate::gate::ask(conv.events(), request, answer, Some(cancel)).await {
            Some(Reply::Person(RestoreAnswer::Restore)) => UndoScope::All,
            Some(Reply::Person(RestoreAnswer::RestoreUntouched)) => UndoScope::Untouched,
            _ => return "Undo cancelled; no file was changed.".to_string(),
        };
        let shadow = match self.shadow().await {
            Ok(Some(shadow)) => shadow,
            Ok(None) => return "Undo failed: checkpoints are off.".to_string(),
            Err(e) => return format!("Undo failed: {e}"),
        };
        let (id, info) = (info.id, info.clone());
        let files = plan.files.clone();
        let restored = tokio::task::spawn_blocking(move || shadow.undo(&plan, scope))
            .await
            .map_err(blocking_failed)
            .and_then(|restored| restored);
        match restored {
            Ok(done) if done.files.is_empty() && done.left.is_empty() => {
                "Undo left every file as it is: they all changed since the turn.".to_string()
            }
            Ok(done) if done.files.is_empty() => format!(
                "Undo restored nothing; no file was changed.{}",
                crate::checkpoint::unrestored_report(&done.left)
            ),
            Ok(done) => {
                let mut text = crate::checkpoint::restored_report(&info, &done.files);
                text.push_str(&crate::checkpoint::unrestored_report(&done.left));
                let left =
                    |f: &crate::checkpoint::FileChange| done.left.iter().any(|l| l.path == f.path);
                for kept in files.iter().filter(|f| !done.files.contains(f) && !left(f)) {
                    text.push_str(&format!(
                        "\n  kept {} (changed since the turn)",
                        crate::sanitize::for_terminal(&kept.path.display().to_string())
                    ));
                }
                conv.record(Journal::Undo {
                    checkpoint: id,
                    restored: done.files,
                })
                .await;
                text
            }
            Err(e) => format!("Undo failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::BuiltinId;

    #[test]
    fn the_shell_the_writing_tools_and_every_mcp_tool_may_change_the_workspace() {
        let changing: Vec<&str> = BuiltinId::all()
            .filter(|kind| may_change_workspace(&ToolOrigin::Builtin(*kind)))
            .map(BuiltinId::name)
            .collect();
        assert_eq!(changing, ["bash", "write_file", "edit_file"]);
        assert!(may_change_workspace(&ToolOrigin::Mcp {
            server: "docs".into(),
            tool: "search".into(),
        }));
    }

    #[test]
    fn a_file_tools_target_is_its_only_possible_change() {
        let ws = Path::new("/w/project");
        let write = ToolOrigin::Builtin(crate::builtin::tools::write_file::ID);
        let target =
            |path: &str| file_tool_target(&write, &serde_json::json!({ "path": path }), ws);
        assert_eq!(
            target("a/./b/../c.txt"),
            Some(vec![PathBuf::from("a/c.txt")])
        );
        assert_eq!(
            target("/w/project/x.txt"),
            Some(vec![PathBuf::from("x.txt")])
        );
        assert_eq!(target("../elsewhere.txt"), Some(vec![]));
        let bash = ToolOrigin::Builtin(crate::builtin::tools::bash::ID);
        assert_eq!(file_tool_target(&bash, &serde_json::json!({}), ws), None);
    }

    #[test]
    fn notices_name_a_few_files_then_count_the_rest() {
        let paths = (1..=7).map(|i| PathBuf::from(format!("f{i}.txt")));
        assert_eq!(
            listed(paths),
            "f1.txt, f2.txt, f3.txt, f4.txt, f5.txt and 2 more"
        );
        assert_eq!(human_size(10 * 1024 * 1024), "10 MiB");
        assert_eq!(human_size(1024), "1 KiB");
        assert_eq!(human_size(1000), "1000 bytes");
    }
}
