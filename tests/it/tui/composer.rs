//! The composer's history (↑/↓ at its edges, the Ctrl+R search) and the model's thinking
//! in the conversation (issue 27, decision 0079), through `update` and the view.

use super::*;

fn send(app: &mut App, text: &str) {
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            key_mod(app, KeyCode::Enter, KeyModifiers::SHIFT);
        }
        type_text(app, line);
    }
    let (commands, _) = perform(key(app, KeyCode::Enter));
    assert!(matches!(&commands[..], [UiCommand::Submit(t)] if t == text));
    agent(
        app,
        AgentEvent::Fact(Fact::TurnFinished {
            usage: Usage::default(),
            cancelled: false,
            exit_code: None,
            model_calls: None,
        }),
    );
}

#[test]
fn up_and_down_walk_the_history_from_an_empty_composer_only_at_its_edges() {
    let mut app = started_app();
    send(&mut app, "first prompt");
    send(&mut app, "second\nprompt");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "second\nprompt");
    // The cursor is at its start: ↑ goes on to the older one.
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "first prompt");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "first prompt", "nothing older");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.composer_text(), "second\nprompt");
    // The cursor is at its end, on the last line: ↓ goes past the newest, to an empty
    // composer.
    key(&mut app, KeyCode::Down);
    assert_eq!(app.composer_text(), "");

    // Text being written (or a recalled prompt once edited) is never swapped out.
    type_text(&mut app, "a draft");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "a draft");
    ctrl_c(&mut app);
    key(&mut app, KeyCode::Up);
    type_text(&mut app, " (edited)");
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Down);
    assert!(
        app.composer_text().contains("(edited)"),
        "{}",
        app.composer_text()
    );
}

#[test]
fn ctrl_r_lists_matches_and_esc_gives_back_the_composer() {
    let mut app = started_app();
    send(&mut app, "deploy web");
    send(&mut app, "run the tests");
    type_text(&mut app, "unsent");
    key_mod(&mut app, KeyCode::Char('r'), KeyModifiers::CONTROL);
    type_text(&mut app, "dep");
    let shown = screen(&mut app, 110, 30);
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("search: dep"))
        .unwrap_or_else(|| panic!("no search line:\n{shown}"));
    assert!(lines[at + 1].contains("deploy web"), "{shown}");
    assert!(
        !lines[at + 2].contains("run the tests"),
        "only the match: {shown}"
    );
    // Esc closes the search, not the turn or anything else.
    let (commands, _) = perform(key(&mut app, KeyCode::Esc));
    assert!(commands.is_empty());
    assert_eq!(app.composer_text(), "unsent");
    assert!(!screen(&mut app, 110, 30).contains("search:"));
}

#[test]
fn thinking_shows_collapsed_while_it_streams_and_ctrl_o_expands_it() {
    let mut app = started_app();
    type_text(&mut app, "go");
    perform(key(&mut app, KeyCode::Enter));
    agent(
        &mut app,
        AgentEvent::Live(Live::ThinkingDelta("The user wants ".into())),
    );
    agent(
        &mut app,
        AgentEvent::Live(Live::ThinkingDelta("a deploy plan".into())),
    );
    let shown = screen(&mut app, 110, 30);
    assert!(
        shown.contains("✻ thinking… 6 words · Ctrl+O shows it"),
        "{shown}"
    );
    assert!(!shown.contains("a deploy plan"), "collapsed: {shown}");
    agent(
        &mut app,
        AgentEvent::Live(Live::TextDelta("Here is the plan.".into())),
    );
    let shown = screen(&mut app, 110, 30);
    assert!(shown.contains("✻ thought 6 words"), "{shown}");
    assert!(shown.contains("Here is the plan."), "{shown}");
    key_mod(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let shown = screen(&mut app, 110, 30);
    assert!(shown.contains("The user wants a deploy plan"), "{shown}");
}
