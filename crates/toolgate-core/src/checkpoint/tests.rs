//! Real git, real files: checkpoints taken, turns simulated by changing files, undone.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

struct Fixture {
    _base: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("checkpoints");
    let ws = base.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    Fixture {
        root,
        ws,
        _base: base,
    }
}

fn write(ws: &Path, rel: &str, text: &str) {
    let path = ws.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn read(ws: &Path, rel: &str) -> Option<String> {
    fs::read_to_string(ws.join(rel)).ok()
}

fn changes(files: &[FileChange]) -> Vec<(String, Change)> {
    let mut out: Vec<(String, Change)> = files
        .iter()
        .map(|f| (f.path.display().to_string(), f.change))
        .collect();
    out.sort();
    out
}

/// The person's own git, with the person's usual environment (no isolation).
/// Plans the undo of the last turn that changed something, carries it out and returns the plan.
fn undo_last(shadow: &Shadow) -> UndoPlan {
    let plan = shadow.plan_undo(None).unwrap().unwrap();
    shadow.undo(&plan, UndoScope::Untouched).unwrap();
    plan
}

fn user_git(ws: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_AUTHOR_NAME", "person")
        .env("GIT_AUTHOR_EMAIL", "person@example.com")
        .env("GIT_COMMITTER_NAME", "person")
        .env("GIT_COMMITTER_EMAIL", "person@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
#[test]
fn undo_restores_modified_deleted_and_created_files_with_their_modes() {
    let f = fixture();
    write(&f.ws, "notes.txt", "my notes\n");
    write(&f.ws, "src/main.rs", "fn main() {}\n");
    write(&f.ws, "run.sh", "#!/bin/sh\necho hi\n");
    set_mode(&f.ws.join("run.sh"), 0o755);
    write(&f.ws, "secret.env", "TOKEN=1\n");
    set_mode(&f.ws.join("secret.env"), 0o600);
    std::os::unix::fs::symlink("notes.txt", f.ws.join("link")).unwrap();

    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    let taken = shadow.take("s1", 1).unwrap();
    assert_eq!(taken.id, 1);
    assert!(taken.skipped.is_empty() && taken.nested.is_empty());

    // The "turn": every kind of change.
    fs::remove_file(f.ws.join("notes.txt")).unwrap();
    fs::remove_dir_all(f.ws.join("src")).unwrap();
    write(&f.ws, "secret.env", "TOKEN=2\n");
    set_mode(&f.ws.join("run.sh"), 0o644);
    write(&f.ws, "new/deep/file.txt", "created\n");
    fs::remove_file(f.ws.join("link")).unwrap();
    write(&f.ws, "link", "now a file\n");

    let files = shadow.finish(1).unwrap();
    let expected = vec![
        ("link".to_string(), Change::TypeChanged),
        ("new/deep/file.txt".to_string(), Change::Created),
        ("notes.txt".to_string(), Change::Deleted),
        ("run.sh".to_string(), Change::Modified),
        ("secret.env".to_string(), Change::Modified),
        ("src/main.rs".to_string(), Change::Deleted),
    ];
    assert_eq!(changes(&files), expected);

    let plan = shadow.plan_undo(None).unwrap().unwrap();
    assert_eq!(plan.checkpoint.id, 1);
    assert_eq!(plan.checkpoint.session, "s1");
    assert_eq!(changes(&plan.files), expected);
    let restored = shadow.undo(&plan, UndoScope::Untouched).unwrap();
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    assert_eq!(changes(&restored.files), expected);

    assert_eq!(read(&f.ws, "notes.txt").as_deref(), Some("my notes\n"));
    assert_eq!(
        read(&f.ws, "src/main.rs").as_deref(),
        Some("fn main() {}\n")
    );
    assert_eq!(read(&f.ws, "secret.env").as_deref(), Some("TOKEN=1\n"));
    assert_eq!(mode(&f.ws.join("secret.env")), 0o600, "permissions kept");
    assert_eq!(
        mode(&f.ws.join("run.sh")) & 0o111,
        0o111,
        "executable again"
    );
    assert_eq!(
        fs::read_link(f.ws.join("link")).unwrap(),
        PathBuf::from("notes.txt")
    );
    assert!(!f.ws.join("new").exists(), "created folders are gone too");

    // Nothing left to undo, and the undo is recorded.
    assert_eq!(shadow.plan_undo(None).unwrap(), None);
    let listed = shadow.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].undone.is_some());
    assert!(matches!(
        shadow.undo(&plan, UndoScope::Untouched),
        Err(CheckpointError::AlreadyUndone(1))
    ));
}

#[test]
fn the_persons_repository_is_never_touched_and_ignored_files_stay_out() {
    let f = fixture();
    user_git(&f.ws, &["init", "-q"]);
    write(&f.ws, ".gitignore", "build/\n*.log\n");
    write(&f.ws, "tracked.txt", "v1\n");
    user_git(&f.ws, &["add", "-A"]);
    user_git(&f.ws, &["commit", "-q", "-m", "first"]);
    write(&f.ws, "untracked.txt", "draft\n");
    write(&f.ws, "build/out.bin", "generated\n");
    write(&f.ws, "debug.log", "log v1\n");
    fs::write(f.ws.join(".git/info/exclude"), "private.txt\n").unwrap();
    write(&f.ws, "private.txt", "mine\n");
    let head = user_git(&f.ws, &["rev-parse", "HEAD"]);
    let index = fs::read(f.ws.join(".git/index")).unwrap();
    let config = fs::read(f.ws.join(".git/config")).unwrap();
    let status = user_git(&f.ws, &["status", "--porcelain", "--ignored"]);

    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    shadow.take("s1", 1).unwrap();
    // A turn that cleans everything and rewrites a tracked file and an ignored one.
    user_git(&f.ws, &["clean", "-fdxq"]);
    write(&f.ws, "tracked.txt", "v2\n");
    write(&f.ws, "debug.log", "log v2\n");
    let files = shadow.finish(1).unwrap();
    assert_eq!(
        changes(&files),
        [
            ("tracked.txt".to_string(), Change::Modified),
            ("untracked.txt".to_string(), Change::Deleted),
        ],
        "ignored and excluded files are not in checkpoints"
    );
    undo_last(&shadow);

    assert_eq!(read(&f.ws, "tracked.txt").as_deref(), Some("v1\n"));
    assert_eq!(read(&f.ws, "untracked.txt").as_deref(), Some("draft\n"));
    assert_eq!(read(&f.ws, "debug.log").as_deref(), Some("log v2\n"));
    assert_eq!(read(&f.ws, "build/out.bin"), None);
    assert_eq!(read(&f.ws, "private.txt"), None);
    assert_eq!(user_git(&f.ws, &["rev-parse", "HEAD"]), head);
    assert_eq!(fs::read(f.ws.join(".git/index")).unwrap(), index);
    assert_eq!(fs::read(f.ws.join(".git/config")).unwrap(), config);
    let after = user_git(&f.ws, &["status", "--porcelain", "--ignored"]);
    let lost: Vec<&str> = status.lines().filter(|l| !after.contains(l)).collect();
    assert_eq!(
        lost,
        ["!! build/", "!! private.txt"],
        "only ignored files stay lost: {after}"
    );
    assert_eq!(user_git(&f.ws, &["log", "--oneline"]).lines().count(), 1);
    assert!(!f.ws.join(".git/toolgate").exists());
}

/// A workspace that is a home folder holds toolgate's own checkpoints (and state): a
/// turn's changes list the person's files, never the shadow repository's.
#[test]
fn toolgate_s_own_folders_inside_the_workspace_stay_out() {
    let f = fixture();
    let root = f.ws.join(".local/state/toolgate/checkpoints");
    write(&f.ws, "notes.txt", "my notes\n");
    let shadow = Shadow::open(&root, &f.ws).unwrap();
    shadow.take("s1", 1).unwrap();
    write(&f.ws, "notes.txt", "more notes\n");
    let files = shadow.finish(1).unwrap();
    assert_eq!(
        changes(&files),
        vec![("notes.txt".to_string(), Change::Modified)]
    );
    // Nor is the shadow recorded by a later checkpoint.
    shadow.take("s1", 2).unwrap();
    write(&f.ws, "todo.txt", "x\n");
    let files = shadow.finish(2).unwrap();
    assert_eq!(
        changes(&files),
        vec![("todo.txt".to_string(), Change::Created)]
    );
}

#[test]
fn files_over_the_limit_are_skipped_and_left_alone() {
    let f = fixture();
    write(&f.ws, "small.txt", "small\n");
    write(&f.ws, "big.bin", &"x".repeat(2048));
    let shadow = Shadow::open(&f.root, &f.ws).unwrap().with_limits(Limits {
        max_file_bytes: 1024,
        max_changed_files: 100,
    });
    let taken = shadow.take("s1", 1).unwrap();
    assert_eq!(taken.skipped, [PathBuf::from("big.bin")]);
    fs::remove_file(f.ws.join("big.bin")).unwrap();
    write(&f.ws, "small.txt", &"y".repeat(4096));
    let files = shadow.finish(1).unwrap();
    // small.txt grew past the limit: it is forgotten rather than restored over the big one.
    assert_eq!(
        changes(&files),
        [("small.txt".to_string(), Change::Deleted)]
    );
    let listed = shadow.list().unwrap();
    assert_eq!(listed[0].skipped, [PathBuf::from("big.bin")]);
}

#[test]
fn an_unchanged_workspace_reuses_the_snapshot_and_a_crashed_turn_ends_at_the_next() {
    let f = fixture();
    write(&f.ws, "a.txt", "a\n");
    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    let first = shadow.take("s1", 1).unwrap();
    // The turn changes a file, then toolgate dies before the turn's end is recorded.
    write(&f.ws, "a.txt", "changed\n");
    let second = shadow.take("s2", 1).unwrap();
    assert_ne!(first.commit, second.commit);
    let third = shadow.take("s2", 2).unwrap();
    assert_eq!(second.commit, third.commit, "nothing changed in between");
    let listed = shadow.list().unwrap();
    assert_eq!(listed.iter().map(|c| c.id).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(
        changes(listed[0].files.as_ref().unwrap()),
        [("a.txt".to_string(), Change::Modified)]
    );
    assert_eq!(listed[1].files.as_deref(), Some(&[][..]));
    assert_eq!(listed[2].files, None, "the last turn is still open");

    // Undo skips the turns that changed nothing and finds the crashed one.
    assert_eq!(undo_last(&shadow).checkpoint.id, 1);
    assert_eq!(read(&f.ws, "a.txt").as_deref(), Some("a\n"));
}

#[test]
fn a_file_replaced_by_a_folder_comes_back() {
    let f = fixture();
    write(&f.ws, "data", "a file\n");
    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    shadow.take("s", 1).unwrap();
    fs::remove_file(f.ws.join("data")).unwrap();
    write(&f.ws, "data/inside.txt", "now a folder\n");
    shadow.finish(1).unwrap();
    undo_last(&shadow);
    assert_eq!(read(&f.ws, "data").as_deref(), Some("a file\n"));
}

#[test]
fn nested_repositories_are_reported_not_recorded() {
    let f = fixture();
    write(&f.ws, "top.txt", "top\n");
    let inner = f.ws.join("vendor/lib");
    fs::create_dir_all(&inner).unwrap();
    user_git(&inner, &["init", "-q"]);
    write(&inner, "lib.rs", "lib\n");
    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    let taken = shadow.take("s", 1).unwrap();
    assert_eq!(taken.nested, [PathBuf::from("vendor/lib/")]);
}

#[test]
fn separate_workspaces_get_separate_shadows() {
    let f = fixture();
    let other = f.ws.parent().unwrap().join("other");
    fs::create_dir_all(&other).unwrap();
    let a = Shadow::open(&f.root, &f.ws).unwrap();
    let b = Shadow::open(&f.root, &other).unwrap();
    assert_ne!(a.dir(), b.dir());
    assert_eq!(
        Shadow::existing(&f.root, &f.ws)
            .unwrap()
            .map(|s| s.dir().to_path_buf()),
        Some(a.dir().to_path_buf())
    );
    let never = f.ws.parent().unwrap().join("never");
    fs::create_dir_all(&never).unwrap();
    assert!(Shadow::existing(&f.root, &never).unwrap().is_none());
    assert!(
        !f.ws.join(".git").exists(),
        "no repository in the workspace"
    );
}

/// A call that writes `rel` as the agent.
fn agent_call(shadow: &Shadow, mark: CallMark, ws: &Path, rel: &str, text: &str) {
    write(ws, rel, text);
    shadow.end_call(&mark, None).unwrap();
}

#[test]
fn only_the_calls_changes_are_the_turns_and_later_changes_are_kept_unless_forced() {
    let f = fixture();
    write(&f.ws, "notes.txt", "my notes\n");
    write(&f.ws, "shared.txt", "v0\n");
    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    // Outside any call, before the turn's first: the person's.
    write(&f.ws, "early.txt", "person\n");
    let (taken, first) = shadow.take_for_call("s1", 1).unwrap();
    agent_call(&shadow, first, &f.ws, "agent.txt", "agent\n");
    // Between the calls: the person's.
    write(&f.ws, "notes.txt", "my notes, edited\n");
    write(&f.ws, "user.txt", "mine\n");
    let second = shadow.begin_call(taken.id, 1).unwrap();
    agent_call(&shadow, second, &f.ws, "shared.txt", "agent\n");
    // After the turn: the person edits a file the agent wrote.
    let files = shadow.finish(taken.id).unwrap();
    assert_eq!(
        changes(&files),
        [
            ("agent.txt".to_string(), Change::Created),
            ("shared.txt".to_string(), Change::Modified),
        ]
    );
    write(&f.ws, "shared.txt", "agent, then person\n");

    let plan = shadow.plan_undo(None).unwrap().unwrap();
    assert_eq!(changes(&plan.files), changes(&files));
    assert_eq!(plan.changed.len(), 1);
    assert_eq!(plan.changed[0].path, PathBuf::from("shared.txt"));
    assert_eq!(plan.changed[0].since, Since::AfterTheTurn);
    assert!(
        plan.changed[0].diff.contains("+agent, then person"),
        "{}",
        plan.changed[0].diff
    );
    // Only what is untouched since: agent.txt goes, shared.txt stays the person's.
    let restored = shadow.undo(&plan, UndoScope::Untouched).unwrap();
    assert_eq!(
        changes(&restored.files),
        [("agent.txt".to_string(), Change::Created)]
    );
    assert_eq!(read(&f.ws, "agent.txt"), None);
    assert_eq!(
        read(&f.ws, "shared.txt").as_deref(),
        Some("agent, then person\n")
    );
    assert_eq!(
        read(&f.ws, "notes.txt").as_deref(),
        Some("my notes, edited\n")
    );
    assert_eq!(read(&f.ws, "user.txt").as_deref(), Some("mine\n"));
    assert_eq!(read(&f.ws, "early.txt").as_deref(), Some("person\n"));
    assert_eq!(shadow.plan_undo(None).unwrap(), None);
}

#[test]
fn forcing_restores_a_file_changed_since_and_sessions_keep_their_own_chains() {
    let f = fixture();
    write(&f.ws, "a.txt", "a0\n");
    let shadow = Shadow::open(&f.root, &f.ws).unwrap();
    let (one, mark) = shadow.take_for_call("s1", 1).unwrap();
    agent_call(&shadow, mark, &f.ws, "a.txt", "a1\n");
    shadow.finish(one.id).unwrap();
    let (two, mark) = shadow.take_for_call("s2", 1).unwrap();
    agent_call(&shadow, mark, &f.ws, "b.txt", "b1\n");
    shadow.finish(two.id).unwrap();

    // s1's chain: b.txt is s2's and stays.
    let plan = shadow.plan_undo(Some("s1")).unwrap().unwrap();
    assert_eq!(plan.checkpoint.id, one.id);
    write(&f.ws, "a.txt", "a1 and the person\n");
    let plan = shadow.plan_undo(Some("s1")).unwrap().unwrap();
    assert_eq!(plan.changed.len(), 1);
    let restored = shadow.undo(&plan, UndoScope::Untouched).unwrap();
    assert!(restored.files.is_empty() && restored.left.is_empty());
    assert_eq!(read(&f.ws, "a.txt").as_deref(), Some("a1 and the person\n"));
    shadow.undo(&plan, UndoScope::All).unwrap();
    assert_eq!(read(&f.ws, "a.txt").as_deref(), Some("a0\n"));
    assert_eq!(read(&f.ws, "b.txt").as_deref(), Some("b1\n"));
    assert_eq!(shadow.plan_undo(Some("s1")).unwrap(), None);
    assert_eq!(
        shadow.plan_undo(None).unwrap().unwrap().checkpoint.id,
        two.id
    );
}
