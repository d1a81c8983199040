use super::*;
use std::io::Read;
use std::os::unix::fs::symlink;

/// A workspace `ws` beside an outside folder holding `secret.txt`.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    std::fs::write(ws.join("sub/a.txt"), "inside").unwrap();
    (dir, ws, outside)
}

fn read(file: std::fs::File) -> String {
    let mut text = String::new();
    let mut file = file;
    file.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn the_escape_message_is_the_one_cap_std_gives() {
    let (_dir, ws, _) = setup();
    let root = Dir::open_ambient_dir(&ws, ambient_authority()).unwrap();
    // An absolute path is an escape whichever way cap-std resolves it.
    let err = root.open("/etc/passwd").unwrap_err();
    assert!(
        err.to_string() == ESCAPE_MESSAGE || err.raw_os_error() == Some(libc::EXDEV),
        "{err}"
    );
}

#[test]
fn paths_inside_open_and_dotdot_or_absolute_ones_out_are_refused() {
    let (_dir, ws, outside) = setup();
    let root = Beneath::open_root(&ws).unwrap();
    assert_eq!(
        read(root.open_read(Path::new("sub/a.txt")).unwrap()),
        "inside"
    );
    assert_eq!(
        read(root.open_read(Path::new("sub/../sub/./a.txt")).unwrap()),
        "inside"
    );
    for out in ["../outside/secret.txt", "sub/../../outside/secret.txt"] {
        assert!(
            matches!(
                root.open_read(Path::new(out)),
                Err(BeneathError::Escapes { .. })
            ),
            "{out}"
        );
    }
    let absolute = outside.join("secret.txt");
    assert!(matches!(
        root.open_read(&absolute),
        Err(BeneathError::Escapes { .. })
    ));
    assert!(matches!(
        root.open_read(Path::new("missing.txt")),
        Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound)
    ));
}

#[test]
fn links_inside_are_followed_and_links_out_refused() {
    let (_dir, ws, outside) = setup();
    symlink("sub", ws.join("alias")).unwrap();
    symlink("sub/a.txt", ws.join("a-link.txt")).unwrap();
    symlink(&outside, ws.join("out-abs")).unwrap();
    symlink("../outside", ws.join("out-rel")).unwrap();
    symlink(outside.join("secret.txt"), ws.join("sub/key")).unwrap();
    let root = Beneath::open_root(&ws).unwrap();
    assert_eq!(
        read(root.open_read(Path::new("alias/a.txt")).unwrap()),
        "inside"
    );
    assert_eq!(
        read(root.open_read(Path::new("a-link.txt")).unwrap()),
        "inside"
    );
    for out in ["out-abs/secret.txt", "out-rel/secret.txt", "sub/key"] {
        assert!(
            matches!(
                root.open_read(Path::new(out)),
                Err(BeneathError::Escapes { .. })
            ),
            "{out}"
        );
    }
    // A folder opened through a link that points out is refused too, and so is a write
    // through it.
    assert!(matches!(
        root.dir(Path::new("out-rel"), false),
        Err(BeneathError::Escapes { .. })
    ));
    let target = FileTarget::Workspace(PathBuf::from("out-abs/new.txt"));
    assert!(matches!(
        target.place(&ws, true),
        Err(BeneathError::Escapes { .. })
    ));
    assert!(!outside.join("new.txt").exists());
}

#[test]
fn magic_links_are_refused() {
    let (_dir, ws, _) = setup();
    // /proc/self/cwd is a magic link: beneath `/proc` it must not lead anywhere.
    let proc_dir = Beneath::open_root(Path::new("/proc")).unwrap();
    let got = proc_dir.open_read(Path::new("self/cwd/Cargo.toml"));
    assert!(matches!(got, Err(BeneathError::Escapes { .. })), "{got:?}");
    // A link inside the workspace to /proc/self/root is refused like any link out.
    symlink("/proc/self/root", ws.join("rootlink")).unwrap();
    let root = Beneath::open_root(&ws).unwrap();
    assert!(matches!(
        root.open_read(Path::new("rootlink/etc/passwd")),
        Err(BeneathError::Escapes { .. })
    ));
}

#[test]
fn approved_outside_paths_open_with_no_link_on_the_way() {
    let (_dir, ws, outside) = setup();
    let approved = FileTarget::Approved(outside.join("secret.txt"));
    assert_eq!(read(approved.open_read(&ws).unwrap()), "SECRET");
    // The same path with a link put on its way since is refused, not followed.
    let moved = outside.with_file_name("moved");
    std::fs::rename(&outside, &moved).unwrap();
    symlink(&moved, &outside).unwrap();
    assert!(matches!(
        approved.open_read(&ws),
        Err(BeneathError::Link { .. })
    ));
    assert!(matches!(
        FileTarget::Approved(outside.join("new.txt")).place(&ws, true),
        Err(BeneathError::Link { .. })
    ));
    assert!(!moved.join("new.txt").exists());
}

#[test]
fn replace_writes_through_the_folder_handle_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, ws, _) = setup();
    let target = FileTarget::Workspace(PathBuf::from("new/deeper/file.txt"));
    let place = target.place(&ws, true).unwrap();
    assert_eq!(place.replace(b"one").unwrap(), Replaced { existed: false });
    assert_eq!(
        std::fs::read_to_string(ws.join("new/deeper/file.txt")).unwrap(),
        "one"
    );
    let script = ws.join("run.sh");
    std::fs::write(&script, "old").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
    let place = FileTarget::Workspace(PathBuf::from("run.sh"))
        .place(&ws, false)
        .unwrap();
    assert_eq!(place.replace(b"new").unwrap(), Replaced { existed: true });
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "new");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o751);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().contains(".toolgate-")),
        "{names:?}"
    );
    // A folder at the name is not replaced.
    let place = FileTarget::Workspace(PathBuf::from("sub"))
        .place(&ws, false)
        .unwrap();
    assert!(matches!(
        place.replace(b"x"),
        Err(e) if e.io_kind() == Some(io::ErrorKind::IsADirectory)
    ));
}

#[test]
fn a_folder_held_open_stays_the_folder_that_was_checked() {
    let (_dir, ws, outside) = setup();
    let place = FileTarget::Workspace(PathBuf::from("sub/b.txt"))
        .place(&ws, false)
        .unwrap();
    // The folder is swapped for a link to the outside after the place was opened: the
    // write still lands in the real folder, wherever its name went.
    std::fs::rename(ws.join("sub"), ws.join("real")).unwrap();
    symlink(&outside, ws.join("sub")).unwrap();
    place.replace(b"kept inside").unwrap();
    assert!(!outside.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("real/b.txt")).unwrap(),
        "kept inside"
    );
}

#[test]
fn requested_paths_stay_beneath_the_workspace_unless_absolute_outside() {
    let ws = Path::new("/w/s");
    assert_eq!(
        FileTarget::requested(ws, "a/b.txt"),
        FileTarget::Workspace("a/b.txt".into())
    );
    assert_eq!(
        FileTarget::requested(ws, "/w/s/a.txt"),
        FileTarget::Workspace("a.txt".into())
    );
    assert_eq!(
        FileTarget::requested(ws, "/etc/hosts"),
        FileTarget::Approved("/etc/hosts".into())
    );
}
