//! Edit and bash questions as the person sees them: a file change as a coloured unified
//! diff with its path (the raw arguments one key away), a long diff capped and scrollable,
//! a file that cannot be shown as a one-line reason, a bash command highlighted as shell.

use super::*;
use toolgate::protocol::questions::{FileDiff, Preview};

fn builtin_ask(kind: BuiltinId) -> PoolEntry {
    PoolEntry {
        tool: PoolTool::builtin(kind.name(), "", object_schema(json!({}))),
        verdict: ask(kind.name(), "rule asks before every change"),
    }
}

/// Opens the question about `kind` with `preview` and waits out the guard window.
fn open(
    app: &mut App,
    kind: BuiltinId,
    input: serde_json::Value,
    preview: Preview,
) -> oneshot::Receiver<Reply<UserDecision>> {
    let now = app.now;
    let entry = builtin_ask(kind);
    let (ev, rx) = previewed_request("c1", &entry, input, Some(preview), now, None);
    agent(app, ev);
    advance(app, GUARD_WINDOW + Duration::from_millis(1));
    rx
}

fn edit_input() -> serde_json::Value {
    json!({"path": "notes.txt", "old_text": "old line", "new_text": "new line"})
}

fn edit_preview() -> Preview {
    Preview::Diff(FileDiff::between(
        "notes.txt",
        Some("alpha\nold line\nomega\n"),
        "alpha\nnew line\nomega\n",
    ))
}

#[test]
fn an_edit_question_shows_a_coloured_diff_and_the_json_on_a_key() {
    let mut app = started_app();
    let rx = open(&mut app, tools::edit_file::ID, edit_input(), edit_preview());
    let terminal = render(&mut app, 100, 30);
    let text = screen_of(&terminal);
    for needle in [
        "diff notes.txt (+1 -1)",
        "@@ -1,3 +1,3 @@",
        " alpha",
        "v preview/JSON",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    assert_eq!(colours_of(&terminal, "-old line"), [Color::Red].into());
    assert_eq!(colours_of(&terminal, "+new line"), [Color::Green].into());
    assert!(!text.contains("\"old_text\""), "{text}");
    insta::assert_snapshot!("approval_edit_diff", text);

    ch(&mut app, 'v');
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("\"old_text\": \"old line\""), "{text}");
    assert!(!text.contains("+new line"), "{text}");
    ch(&mut app, 'v');
    assert!(screen(&mut app, 100, 30).contains("+new line"));

    // The toggle is no answer; `y` still is.
    ch(&mut app, 'y');
    assert_eq!(answer_of(rx), Some(UserDecision::AllowOnce));
}

#[test]
fn a_long_diff_is_capped_with_a_note_and_scrolls() {
    let mut app = started_app();
    let content: String = (1..=1000).map(|i| format!("row {i}\n")).collect();
    let preview = Preview::Diff(FileDiff::between("big.txt", None, &content));
    let input = json!({"path": "big.txt", "content": content});
    let _rx = open(&mut app, tools::write_file::ID, input, preview);
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("new file big.txt (+1000 -0)"), "{text}");
    assert!(
        text.contains("+row 1\n") || text.contains("+row 1 "),
        "{text}"
    );
    for _ in 0..50 {
        key(&mut app, KeyCode::PageDown);
    }
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("… 601 more lines"), "{text}");
    assert!(text.contains("+row 399"), "{text}");
    assert!(!text.contains("+row 1\n"), "{text}");
}

#[test]
fn a_file_that_cannot_be_shown_gives_its_reason_and_can_still_be_answered() {
    let mut app = started_app();
    let preview = Preview::NoDiff {
        path: Some("logo.png".into()),
        reason: "logo.png is not a text file (binary content)".into(),
    };
    let input = json!({"path": "logo.png", "content": "x"});
    let rx = open(&mut app, tools::write_file::ID, input, preview);
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("no diff: logo.png is not a text file (binary content)"),
        "{text}"
    );
    ch(&mut app, 'n');
    assert_eq!(answer_of(rx), Some(UserDecision::Deny));
}

#[test]
fn a_bash_question_shows_the_command_highlighted_as_shell() {
    let mut app = started_app();
    let command = "for f in *.txt; do echo \"found $f\" | wc -c; done";
    let preview = Preview::Shell {
        command: command.into(),
    };
    let _rx = open(
        &mut app,
        tools::bash::ID,
        json!({"command": command}),
        preview,
    );
    let terminal = render(&mut app, 100, 30);
    let text = screen_of(&terminal);
    assert!(text.contains("command · v: arguments as JSON"), "{text}");
    let colours = colours_of(&terminal, command);
    assert!(
        colours.len() >= 3,
        "keywords, strings, words: {colours:?}\n{text}"
    );
    // The list of waiting requests names the command.
    let _second = open(
        &mut app,
        tools::bash::ID,
        json!({"command": "ls"}),
        Preview::Shell {
            command: "ls".into(),
        },
    );
    ch(&mut app, 'l');
    let text = screen(&mut app, 100, 30);
    assert!(text.contains(&format!("$ {command}")), "{text}");
}

/// A question arriving after the terminal reported losing the focus asks the runtime to
/// notify, naming it; after the focus came back, none does.
#[test]
fn a_question_in_the_background_asks_for_a_notification_and_none_in_front() {
    let mut app = started_app();
    let _ = update(&mut app, Msg::Terminal(Event::FocusLost));
    let (ev, _rx) = permission(
        "c1",
        &builtin_ask(tools::bash::ID),
        json!({"command": "ls"}),
    );
    let notified: Vec<(String, String)> = agent(&mut app, ev)
        .into_iter()
        .filter_map(|e| match e {
            Effect::Notify { title, body } => Some((title, body)),
            _ => None,
        })
        .collect();
    assert_eq!(
        notified,
        [(
            "toolgate: Permission required".to_string(),
            "The agent wants to call bash".to_string()
        )]
    );
    let _ = update(&mut app, Msg::Terminal(Event::FocusGained));
    let (ev, _rx2) = permission(
        "c2",
        &builtin_ask(tools::bash::ID),
        json!({"command": "ls"}),
    );
    let effects = agent(&mut app, ev);
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Notify { .. })),
        "{effects:?}"
    );
}
