//! Checkpoints of the workspace, so every turn's changes can be undone, whoever made them
//! (the file tools, a shell command, an MCP server).
//!
//! Each workspace gets a shadow git repository in the state dir,
//! `checkpoints/<hash of the canonical workspace path>/git`, whose work tree is the
//! workspace. The person's own repository (if the workspace is one) is never used: every
//! git call names the shadow `GIT_DIR` and `GIT_INDEX_FILE`, ignores system and global
//! config, and commits under toolgate's own identity. `.gitignore` files are honoured (and
//! the workspace's `.git/info/exclude`); `.git` folders are never recorded; files over
//! the size limit are left out and reported.
//!
//! The agent takes a checkpoint before a turn's first workspace-changing tool call, and a
//! snapshot when each such call starts and ends; `checkpoints.jsonl` beside the repository
//! records them (see [`log`]). A turn's own changes are what changed during its calls (a
//! file tool: only its target); what changed between calls or outside the turn is someone
//! else's (the person, another session). Undo puts back only the turn's own changes, and
//! a file changed again since the turn only when the caller says so (see [`conflict`]).

mod attribution;
mod beneath;
mod conflict;
mod git;
mod lock;
mod log;
mod restore;
mod snapshot;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::Utc;
use sha2::{Digest, Sha256};

pub use attribution::OwnChange;
pub use conflict::{ChangedSince, Since};
pub use git::GitError;
pub use log::{Blob, CallFile, CallInfo, Change, CheckpointInfo, FileChange};
pub use restore::{Restored, Unrestored};
pub use snapshot::Limits;

use git::Git;
use lock::DirLock;
use log::Event;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{count} new or changed files is more than a checkpoint takes ({limit}); add a .gitignore for generated files"
    )]
    TooManyFiles { count: usize, limit: usize },
    #[error("no checkpoint {0}")]
    Unknown(u64),
    #[error("checkpoint {0} was already undone")]
    AlreadyUndone(u64),
    /// The blocking task running git was lost (panicked or the runtime shut down).
    #[error("the checkpoint task stopped: {0}")]
    Task(String),
}

/// The state dir's folder of checkpoints: `state_dir()/checkpoints`.
pub fn default_root() -> Option<PathBuf> {
    crate::paths::state_dir().map(|d| d.join("checkpoints"))
}

/// A checkpoint just taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    pub id: u64,
    pub commit: String,
    /// Files over the size limit, not in the checkpoint (undo cannot restore them).
    pub skipped: Vec<PathBuf>,
    /// Folders that are repositories of their own, not in the checkpoint.
    pub nested: Vec<PathBuf>,
}

/// What an undo would restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPlan {
    pub checkpoint: CheckpointInfo,
    /// Every file the turn changed.
    pub files: Vec<FileChange>,
    /// The same, with the states undo restores from and compares against.
    pub own: Vec<OwnChange>,
    /// The files among them changed again since the turn: restoring them would lose that
    /// change.
    pub changed: Vec<ChangedSince>,
}

/// Which files an undo puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoScope {
    /// Only those still as the turn left them; files changed since stay as they are.
    Untouched,
    /// All of the turn's files, overwriting later changes (`--force`, or the person chose
    /// it after seeing the differences).
    All,
}

/// A tool call under way, between [`Shadow::begin_call`] and [`Shadow::end_call`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallMark {
    pub checkpoint: u64,
    pub call: u32,
    /// The workspace when the call started.
    pub before: String,
}

/// The checkpoints of one workspace.
#[derive(Debug, Clone)]
pub struct Shadow {
    dir: PathBuf,
    workspace: PathBuf,
    git: Git,
    limits: Limits,
}

impl Shadow {
    /// Opens the shadow repository of `workspace` under `root`, creating it on first use.
    pub fn open(root: &Path, workspace: &Path) -> Result<Shadow, CheckpointError> {
        let shadow = Shadow::locate(root, workspace)?;
        std::fs::create_dir_all(&shadow.dir).map_err(|e| shadow.io(&shadow.dir, e))?;
        let _lock = shadow.lock()?;
        if !shadow.git_dir().join("HEAD").is_file() {
            shadow.init()?;
        }
        Ok(shadow)
    }

    /// The shadow repository of `workspace` if one was ever created.
    pub fn existing(root: &Path, workspace: &Path) -> Result<Option<Shadow>, CheckpointError> {
        let shadow = Shadow::locate(root, workspace)?;
        Ok(shadow.git_dir().join("HEAD").is_file().then_some(shadow))
    }

    fn locate(root: &Path, workspace: &Path) -> Result<Shadow, CheckpointError> {
        let workspace = std::fs::canonicalize(workspace).map_err(|source| CheckpointError::Io {
            path: workspace.to_path_buf(),
            source,
        })?;
        let digest = Sha256::digest(git::path_to_git(&workspace));
        let dir = root.join(hex::encode(&digest[..8]));
        Ok(Shadow {
            git: Git::new(dir.join("git"), workspace.clone()),
            dir,
            workspace,
            limits: Limits::default(),
        })
    }

    pub fn with_limits(mut self, limits: Limits) -> Shadow {
        self.limits = limits;
        self
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The canonical workspace path.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The folder holding the shadow repository and the checkpoint log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn git_dir(&self) -> PathBuf {
        self.dir.join("git")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("checkpoints.jsonl")
    }

    fn io(&self, path: &Path, source: std::io::Error) -> CheckpointError {
        CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    fn lock(&self) -> Result<DirLock, CheckpointError> {
        let path = self.dir.join("lock");
        DirLock::acquire(&path).map_err(|e| self.io(&path, e))
    }

    fn init(&self) -> Result<(), CheckpointError> {
        let git_dir = self.git_dir();
        Git::init_bare(&git_dir)?;
        // Our own config, whole: a work tree (not bare), no line-ending or filter
        // conversions, the untracked cache (it keeps `status` fast in big workspaces; with
        // every untracked file listed it is only used when the config says `all`), a
        // split index v4 (small writes), no automatic gc.
        let config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n\
                      \tsymlinks = true\n\tautocrlf = false\n\tsafecrlf = false\n\
                      \tuntrackedCache = true\n\tsplitIndex = true\n\tfsmonitor = false\n\
                      [status]\n\tshowUntrackedFiles = all\n[index]\n\tversion = 4\n\
                      [gc]\n\tauto = 0\n[commit]\n\tgpgSign = false\n";
        let write =
            |path: PathBuf, text: &str| std::fs::write(&path, text).map_err(|e| self.io(&path, e));
        write(git_dir.join("config"), config)?;
        let info = git_dir.join("info");
        std::fs::create_dir_all(&info).map_err(|e| self.io(&info, e))?;
        // Bytes in, the same bytes out: the workspace's attributes must not make git
        // convert line endings or run filters (git-lfs) on its way in or out.
        write(
            info.join("attributes"),
            "* -text -filter -ident -working-tree-encoding\n",
        )?;
        write(
            self.dir.join("workspace"),
            &format!("{}\n", self.workspace.display()),
        )
    }

    /// The shadow's exclude file mirrors the workspace's own `.git/info/exclude`, so
    /// what the person keeps out of their repository stays out of checkpoints too; and it
    /// keeps out toolgate's own folders when they lie inside the workspace.
    fn sync_exclude(&self) -> Result<(), CheckpointError> {
        let mut own = std::fs::read(self.workspace.join(".git").join("info").join("exclude"))
            .unwrap_or_default();
        let folders = self.own_folders();
        if !folders.is_empty() {
            if !own.is_empty() && !own.ends_with(b"\n") {
                own.push(b'\n');
            }
            own.extend_from_slice(b"# toolgate's own folders\n");
            for folder in folders {
                own.extend_from_slice(folder.as_bytes());
                own.push(b'\n');
            }
        }
        let path = self.git_dir().join("info").join("exclude");
        // Rewriting an unchanged file would invalidate git's untracked cache.
        if std::fs::read(&path).ok().as_deref() != Some(own.as_slice()) {
            std::fs::write(&path, &own).map_err(|e| self.io(&path, e))?;
        }
        Ok(())
    }

    /// toolgate's own folders inside the workspace, as exclude patterns: its checkpoints
    /// and its state folder (sessions, logs), which lie inside a workspace that is a home
    /// folder. They change on every turn and are never the person's work.
    fn own_folders(&self) -> Vec<String> {
        let checkpoints = self.dir.parent().map(Path::to_path_buf);
        [checkpoints, crate::paths::state_dir()]
            .into_iter()
            .flatten()
            .filter_map(|folder| {
                let folder = std::fs::canonicalize(&folder).ok()?;
                let inside = folder.strip_prefix(&self.workspace).ok()?;
                let inside = inside.to_str()?;
                (!inside.is_empty()).then(|| format!("/{}/", exclude_pattern(inside)))
            })
            .collect()
    }

    fn snapshot(&self, message: &str) -> Result<snapshot::Snapshot, CheckpointError> {
        // Every git call on the shadow runs under our lock, so an index.lock found here
        // was left by a git that died with its toolgate; it would fail every later call.
        let stale = self.git_dir().join("index.lock");
        if stale.exists() {
            tracing::warn!("removing stale {}", stale.display());
            let _ = std::fs::remove_file(&stale);
        }
        self.sync_exclude()?;
        snapshot::take(&self.git, &self.workspace, &self.limits, message)
    }

    fn read_log(&self) -> Result<Vec<CheckpointInfo>, CheckpointError> {
        let path = self.log_path();
        log::read(&path).map_err(|e| self.io(&path, e))
    }

    fn append(&self, event: &Event) -> Result<(), CheckpointError> {
        let path = self.log_path();
        log::append(&path, event).map_err(|e| self.io(&path, e))
    }

    /// Records the workspace without making it a checkpoint, so that the first real
    /// checkpoint only has to add what changed since. Run at session start in the
    /// background: the first snapshot of a big workspace hashes and stores every file.
    pub fn prime(&self) -> Result<(), CheckpointError> {
        let _lock = self.lock()?;
        self.snapshot("snapshot at session start").map(drop)
    }

    /// Takes a checkpoint before turn `turn` of `session` changes the workspace; the
    /// whole window until the turn ends counts as the turn's (no calls are recorded).
    pub fn take(&self, session: &str, turn: usize) -> Result<Taken, CheckpointError> {
        let _lock = self.lock()?;
        self.take_locked(session, turn, false)
    }

    /// Takes a checkpoint before turn `turn` of `session` whose tool calls will be
    /// recorded, and starts its first call on the same snapshot.
    pub fn take_for_call(
        &self,
        session: &str,
        turn: usize,
    ) -> Result<(Taken, CallMark), CheckpointError> {
        let _lock = self.lock()?;
        let taken = self.take_locked(session, turn, true)?;
        let mark = CallMark {
            checkpoint: taken.id,
            call: 0,
            before: taken.commit.clone(),
        };
        self.append(&Event::CallStarted {
            id: taken.id,
            call: 0,
            commit: mark.before.clone(),
        })?;
        Ok((taken, mark))
    }

    fn take_locked(
        &self,
        session: &str,
        turn: usize,
        attributed: bool,
    ) -> Result<Taken, CheckpointError> {
        let path = self.log_path();
        let id = log::next_id(&path).map_err(|e| self.io(&path, e))?;
        let snapshot = self.snapshot(&format!(
            "checkpoint {id}: before turn {turn} of session {session}"
        ))?;
        self.append(&Event::Taken {
            id,
            time: Utc::now(),
            session: session.to_string(),
            turn,
            commit: snapshot.commit.clone(),
            skipped: snapshot
                .skipped
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            attributed,
        })?;
        Ok(Taken {
            id,
            commit: snapshot.commit,
            skipped: snapshot.skipped,
            nested: snapshot.nested,
        })
    }

    /// Records the workspace as call `call` of checkpoint `checkpoint` starts.
    pub fn begin_call(&self, checkpoint: u64, call: u32) -> Result<CallMark, CheckpointError> {
        let _lock = self.lock()?;
        let snapshot = self.snapshot(&format!("checkpoint {checkpoint}: call {call} starts"))?;
        self.append(&Event::CallStarted {
            id: checkpoint,
            call,
            commit: snapshot.commit.clone(),
        })?;
        Ok(CallMark {
            checkpoint,
            call,
            before: snapshot.commit,
        })
    }

    /// Records the workspace as the call of `mark` ends; returns the files taken as its
    /// own: what changed since it started, limited to `only` (a file tool's target).
    pub fn end_call(
        &self,
        mark: &CallMark,
        only: Option<&[PathBuf]>,
    ) -> Result<Vec<CallFile>, CheckpointError> {
        let _lock = self.lock()?;
        let after = self.snapshot(&format!(
            "checkpoint {}: call {} ended",
            mark.checkpoint, mark.call
        ))?;
        let files = restore::raw_changes(&self.git, &mark.before, &after.commit, only)?;
        self.append(&Event::CallEnded {
            id: mark.checkpoint,
            call: mark.call,
            commit: after.commit,
            files: files.clone(),
        })?;
        Ok(files)
    }

    /// Records the workspace after the turn of checkpoint `id`; returns what changed.
    pub fn finish(&self, id: u64) -> Result<Vec<FileChange>, CheckpointError> {
        let _lock = self.lock()?;
        let all = self.read_log()?;
        let info = all
            .iter()
            .find(|c| c.id == id)
            .ok_or(CheckpointError::Unknown(id))?;
        self.finish_locked(info)
    }

    fn finish_locked(&self, info: &CheckpointInfo) -> Result<Vec<FileChange>, CheckpointError> {
        if info.attributed {
            // The turn's own changes are known from its calls; the state it left is the
            // last call's end (no new snapshot: changes after it are not the turn's).
            let ended = attribution::ended_calls(&info.calls);
            let files: Vec<FileChange> = attribution::own_changes(&ended)
                .iter()
                .map(OwnChange::file_change)
                .collect();
            let commit = info
                .calls
                .iter()
                .rev()
                .find_map(|c| c.ended.as_ref().map(|(after, _)| after.clone()))
                .unwrap_or_else(|| info.before.clone());
            self.append(&Event::Finished {
                id: info.id,
                time: Utc::now(),
                commit,
                files: files.clone(),
            })?;
            return Ok(files);
        }
        let after = self.snapshot(&format!("checkpoint {}: after the turn", info.id))?;
        let files = restore::changes(&self.git, &info.before, &after.commit)?;
        self.append(&Event::Finished {
            id: info.id,
            time: Utc::now(),
            commit: after.commit,
            files: files.clone(),
        })?;
        Ok(files)
    }

    /// Every checkpoint, oldest first, with what its turn changed where that is known.
    pub fn list(&self) -> Result<Vec<CheckpointInfo>, CheckpointError> {
        let mut all = self.read_log()?;
        for info in &mut all {
            if info.attributed {
                continue;
            }
            if let (None, Some(after)) = (&info.files, &info.after) {
                info.files = Some(restore::changes(&self.git, &info.before, after)?);
            }
        }
        Ok(all)
    }

    /// The turn's own changes. Calls (or unattributed turns) that never ended are
    /// measured against `now`, the workspace as it is.
    fn own_changes(
        &self,
        info: &CheckpointInfo,
        now: &str,
    ) -> Result<Vec<OwnChange>, CheckpointError> {
        if !info.attributed {
            let after = info.after.as_deref().unwrap_or(now);
            let files = restore::raw_changes(&self.git, &info.before, after, None)?;
            return Ok(attribution::own_changes(&[(info.before.clone(), files)]));
        }
        let mut calls = Vec::new();
        for call in &info.calls {
            let files = match &call.ended {
                Some((_, files)) => files.clone(),
                None => restore::raw_changes(&self.git, &call.before, now, None)?,
            };
            calls.push((call.before.clone(), files));
        }
        Ok(attribution::own_changes(&calls))
    }

    /// How the files of `own` are in snapshot `now`.
    fn blobs_now(
        &self,
        own: &[OwnChange],
        now: &str,
    ) -> Result<HashMap<PathBuf, Blob>, CheckpointError> {
        let paths: Vec<PathBuf> = own.iter().map(|o| o.path.clone()).collect();
        restore::blobs_in(&self.git, now, &paths)
    }

    /// What undo would restore: the own changes of the most recent turn (of `session`,
    /// or of any session) that changed any and was not undone yet, and which of them were
    /// changed again since. A turn still without its end (running, or toolgate was
    /// killed) is measured against the workspace as it is now.
    pub fn plan_undo(&self, session: Option<&str>) -> Result<Option<UndoPlan>, CheckpointError> {
        let _lock = self.lock()?;
        let all = self.read_log()?;
        let now = self.snapshot("before planning an undo")?.commit;
        for info in all
            .iter()
            .rev()
            .filter(|c| c.undone.is_none())
            .filter(|c| session.is_none_or(|s| s == c.session))
        {
            let own = self.own_changes(info, &now)?;
            if own.is_empty() {
                continue;
            }
            let current = self.blobs_now(&own, &now)?;
            let changed = conflict::changed_since(&self.git, &own, &current)?;
            let files: Vec<FileChange> = own.iter().map(OwnChange::file_change).collect();
            let mut info = info.clone();
            info.files = Some(files.clone());
            return Ok(Some(UndoPlan {
                checkpoint: info,
                files,
                own,
                changed,
            }));
        }
        Ok(None)
    }

    /// Restores the files of `plan` that `scope` allows (checked again now, under the
    /// lock: a file changed since the plan was made counts as changed) and records the
    /// undo. The workspace as it was just before is kept as a snapshot too (its commit is
    /// in the log). A file that cannot be restored safely (a link where a folder of its
    /// path was) is left as it is and named in [`Restored::left`]; the others are
    /// restored. Nothing restored: nothing recorded, the turn stays undoable.
    pub fn undo(&self, plan: &UndoPlan, scope: UndoScope) -> Result<Restored, CheckpointError> {
        let _lock = self.lock()?;
        let id = plan.checkpoint.id;
        let current = self
            .read_log()?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or(CheckpointError::Unknown(id))?;
        if current.undone.is_some() {
            return Err(CheckpointError::AlreadyUndone(id));
        }
        let saved = self.snapshot(&format!("before undoing checkpoint {id}"))?;
        let now = self.blobs_now(&plan.own, &saved.commit)?;
        let chosen: Vec<&OwnChange> = plan
            .own
            .iter()
            .filter(|own| scope == UndoScope::All || conflict::untouched_since(own, &now))
            .collect();
        if chosen.is_empty() {
            return Ok(Restored::default());
        }
        // Each file comes back from the snapshot taken before the call that first changed
        // it; one restore per such snapshot.
        let mut by_origin: Vec<(&str, Vec<FileChange>)> = Vec::new();
        for own in &chosen {
            match by_origin.iter_mut().find(|(o, _)| *o == own.origin) {
                Some((_, files)) => files.push(own.file_change()),
                None => by_origin.push((own.origin.as_str(), vec![own.file_change()])),
            }
        }
        let mut done = Restored::default();
        for (origin, files) in by_origin {
            let part = restore::restore(&self.git, &self.workspace, origin, &files)?;
            done.files.extend(part.files);
            done.left.extend(part.left);
        }
        done.files.sort_by(|a, b| a.path.cmp(&b.path));
        done.left.sort_by(|a, b| a.path.cmp(&b.path));
        if done.files.is_empty() {
            return Ok(done);
        }
        self.append(&Event::Undone {
            id,
            time: Utc::now(),
            saved: saved.commit,
            restored: done.files.clone(),
        })?;
        Ok(done)
    }
}

/// The lines naming each file undo left as it is, and why.
pub fn unrestored_report(left: &[Unrestored]) -> String {
    let mut text = String::new();
    for file in left {
        text.push_str(&format!(
            "\n  not restored {}: {}",
            crate::sanitize::for_terminal(&file.path.display().to_string()),
            crate::sanitize::for_terminal(&file.why)
        ));
    }
    text
}

pub use crate::protocol::count_files;

/// Which turn a checkpoint belongs to, for people: "turn 2 of session ID (checkpoint 3)".
pub fn describe(info: &CheckpointInfo) -> String {
    format!(
        "turn {} of session {} (checkpoint {})",
        info.turn, info.session, info.id
    )
}

/// The person-facing report of an undo: one line per file.
pub fn restored_report(info: &CheckpointInfo, files: &[FileChange]) -> String {
    let mut text = format!("Undid {}: {}", describe(info), count_files(files.len()));
    for file in files {
        let what = match file.change {
            Change::Created => "removed",
            Change::Modified | Change::Deleted | Change::TypeChanged => "restored",
        };
        text.push_str(&format!(
            "\n  {what} {}",
            crate::sanitize::for_terminal(&file.path.display().to_string())
        ));
    }
    text
}

#[cfg(test)]
mod tests;

/// A path as an exclude pattern that matches only itself: git's pattern characters are
/// escaped.
fn exclude_pattern(path: &str) -> String {
    let mut pattern = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}
