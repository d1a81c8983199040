//! The README's picture (docs/images/console.svg) is drawn from docs/images/console.txt,
//! the screen scripts/screenshot.py captured from the real binary. These tests drive the
//! real binary in a real pty the same way (the scripted demo, `deploy web`, the deploy
//! question) and wait for the same screen, so a change to what the console draws fails
//! here until the picture is taken again. They also check the first screen teaches: the
//! demo names what to type, a real model's names the servers and rules in force.

use std::path::Path;

use crate::support::model_api::ModelApi;
use crate::support::pty;

/// The size scripts/screenshot.py uses (ROWS, COLS there): keep them equal.
const ROWS: u16 = 30;
const COLS: u16 = 130;

fn expected_screen() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/images/console.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The screen without what differs from run to run or page edit to page edit: the session
/// id (a long run of digits), the docs corpus hash (`+` and 12 hex digits, which changes
/// with every edit of assets/docs/), the status line's spinner frame, trailing blanks.
fn stable(screen: &str) -> String {
    const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let mut out = String::new();
    for line in screen.trim_end().lines() {
        let line = without_docs_hash(line.trim_end());
        let mut digits = String::new();
        let flush = |digits: &mut String, out: &mut String| {
            if digits.len() >= 6 {
                out.push_str("<id>");
            } else {
                out.push_str(digits);
            }
            digits.clear();
        };
        for c in line.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            flush(&mut digits, &mut out);
            out.push(if SPINNER.contains(&c) { '⠋' } else { c });
        }
        flush(&mut digits, &mut out);
        out.push('\n');
    }
    out
}

/// `docs 1.0.0+7386d0cc773c` as `docs 1.0.0+<hash>`.
fn without_docs_hash(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('+') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let hex = rest
            .chars()
            .take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            .count();
        if hex == 12 {
            out.push_str("<hash>");
            rest = &rest[12..];
        }
    }
    out.push_str(rest);
    out
}

/// The demo console as the script runs it: its own home, state, config and a workspace.
fn demo(home: &Path) -> portable_pty::CommandBuilder {
    let workspace = home.join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    let mut cmd = pty::toolgate(&home.join("state"), &home.join("config"));
    cmd.cwd(&workspace);
    cmd.env("HOME", home);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd.env_remove("TOOLGATE_SCENARIO");
    cmd
}

#[test]
fn the_readme_picture_is_what_the_console_draws() {
    let expected = stable(&expected_screen());
    assert!(expected.contains("Permission required"), "{expected}");
    let home = tempfile::tempdir().unwrap();
    let (mut child, mut screen, mut keys) = pty::spawn(demo(home.path()), ROWS, COLS);
    screen.row_per_line = true;
    screen.wait_text("Try typing");
    keys.enter_line(&screen, "deploy web");
    pty::wait_question(&screen, "mcp__deploy__trigger");
    let deadline = std::time::Instant::now() + pty::WAIT;
    loop {
        let now = stable(&screen.text());
        if now == expected {
            break;
        }
        if std::time::Instant::now() > deadline {
            let diff = similar::TextDiff::from_lines(&expected, &now)
                .unified_diff()
                .header("docs/images/console.txt", "the console now")
                .to_string();
            panic!(
                "the console no longer draws the README's picture; run scripts/screenshot.py \
                 (see its header) and commit docs/images/:\n{diff}"
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    keys.press(b"n");
    screen.wait_text("Permission denied");
    pty::quit(&screen, &mut keys, &mut child);
}

/// The comparison can fail: a screen that differs in one word is not the picture; it
/// ignores only the session id and the docs hash.
#[test]
fn the_picture_comparison_sees_a_changed_word() {
    let expected = expected_screen();
    let changed = expected.replacen("Permission required", "Permission requested", 1);
    assert_ne!(stable(&expected), stable(&changed));
    let id_at = expected
        .char_indices()
        .find(|&(at, _)| {
            expected[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .count()
                >= 8
        })
        .map(|(at, _)| at)
        .expect("the session id on the status line");
    let mut other_id = expected.clone();
    other_id.replace_range(id_at..id_at + 8, "19991231");
    assert_ne!(other_id, expected);
    assert_eq!(stable(&expected), stable(&other_id));
    assert_eq!(
        without_docs_hash("docs 1.0.0+7386d0cc773c (13 pages"),
        "docs 1.0.0+<hash> (13 pages"
    );
    assert_eq!(without_docs_hash("a+b c+1"), "a+b c+1");
}

#[test]
fn the_demo_first_screen_names_what_to_type() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, screen, mut keys) = pty::spawn(demo(home.path()), ROWS, COLS);
    screen.wait_text("Try typing");
    let text = screen.text();
    for suggestion in ["deploy web", "what can you do?", "/help"] {
        assert!(
            text.contains(suggestion),
            "{suggestion} not suggested:\n{text}"
        );
    }
    // A suggestion is something the demo understands: typing it starts the deploy walk.
    keys.enter_line(&screen, "what can you do?");
    pty::wait_question(&screen, "mcp__deploy__trigger");
    keys.press(b"n");
    screen.wait_text("Permission denied");
    pty::quit(&screen, &mut keys, &mut child);
}

#[test]
fn a_real_models_first_screen_names_the_servers_and_rules_in_force() {
    let home = pty::Home::new();
    std::fs::write(
        home.path("config/config.toml"),
        "[permissions]\ndeny = [\"write_file\"]\n",
    )
    .unwrap();
    let api = ModelApi::start(vec![]);
    let (mut child, screen, mut keys) = pty::spawn(home.console(&api.url), 36, 160);
    screen.wait_text("Servers: docs, deploy, fs");
    // The rules are counted from the pool's verdicts, which arrive with the first pool
    // event, a moment after the first frame.
    screen.wait_text("ask, 1 deny (");
    let text = screen.text();
    assert!(!text.contains("Try typing"), "{text}");
    pty::quit(&screen, &mut keys, &mut child);
}
