//! Keys outside the permission dialog: quitting, the composer, slash commands, help,
//! paste and the pool's focus.

use super::*;

#[test]
fn ctrl_c_cancels_a_turn_then_quits_and_twice_when_idle_quits() {
    let mut app = started_app();
    type_text(&mut app, "hello");
    perform(key(&mut app, KeyCode::Enter));
    let (commands, quit) = perform(ctrl_c(&mut app));
    assert!(matches!(&commands[..], [UiCommand::Cancel]));
    assert!(!quit);
    agent(
        &mut app,
        AgentEvent::Fact(Fact::TurnFinished {
            usage: Usage::default(),
            cancelled: true,
            exit_code: None,
            model_calls: None,
        }),
    );
    assert!(screen(&mut app, 110, 30).contains("turn cancelled"));

    // Idle, after the quit window ran out: the first press only warns.
    advance(&mut app, Duration::from_secs(3));
    let (commands, quit) = perform(ctrl_c(&mut app));
    assert!(commands.is_empty() && !quit);
    assert!(screen(&mut app, 110, 30).contains("press Ctrl+C again to quit"));
    advance(&mut app, Duration::from_millis(500));
    let (_, quit) = perform(ctrl_c(&mut app));
    assert!(quit);
}

#[test]
fn ctrl_c_presses_far_apart_do_not_quit_and_ctrl_d_does() {
    let mut app = started_app();
    perform(ctrl_c(&mut app));
    advance(&mut app, Duration::from_secs(5));
    let (_, quit) = perform(ctrl_c(&mut app));
    assert!(!quit);
    let (_, quit) = perform(key_mod(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL));
    assert!(quit);
}

#[test]
fn composer_enter_sends_and_shift_enter_adds_a_line() {
    let mut app = started_app();
    type_text(&mut app, "first");
    key_mod(&mut app, KeyCode::Enter, KeyModifiers::SHIFT);
    type_text(&mut app, "second");
    key_mod(&mut app, KeyCode::Enter, KeyModifiers::ALT);
    type_text(&mut app, "third");
    assert_eq!(app.composer_text(), "first\nsecond\nthird");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(matches!(&commands[..], [UiCommand::Submit(t)] if t == "first\nsecond\nthird"));
    assert_eq!(app.composer_text(), "");
    assert!(screen(&mut app, 110, 30).contains("› first"));
}

#[test]
fn slash_commands_send_the_right_commands() {
    let mut app = started_app();
    let run = |app: &mut App, text: &str| {
        type_text(app, text);
        perform(key(app, KeyCode::Enter))
    };
    assert!(
        matches!(&run(&mut app, "/connect docs").0[..], [UiCommand::Connect(n)] if n == "docs")
    );
    assert!(
        matches!(&run(&mut app, "/disconnect docs").0[..], [UiCommand::Disconnect(n)] if n == "docs")
    );
    assert!(matches!(&run(&mut app, "/clear").0[..], [UiCommand::Clear]));
    assert!(run(&mut app, "/connect").0.is_empty());
    assert!(
        screen(&mut app, 110, 30)
            .contains("usage: /connect NAME — configured servers: docs, deploy, fs")
    );
    assert!(run(&mut app, "/frobnicate").0.is_empty());
    assert!(screen(&mut app, 110, 30).contains("unknown command /frobnicate"));
    run(&mut app, "/help");
    assert_eq!(app.overlay, Overlay::Help);
    assert!(screen(&mut app, 110, 30).contains("Keys and commands"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, Overlay::None);
    assert!(run(&mut app, "/quit").1);
}

#[test]
fn mcp_enable_and_disable_switch_a_server_for_the_session_or_in_its_file() {
    let mut app = started_app();
    let run = |app: &mut App, text: &str| {
        type_text(app, text);
        perform(key(app, KeyCode::Enter))
    };
    assert!(matches!(
        &run(&mut app, "/mcp disable fs --save").0[..],
        [UiCommand::SetServerEnabled { server, enabled: false, save: true }] if server == "fs"
    ));
    assert!(matches!(
        &run(&mut app, "/mcp enable docs").0[..],
        [UiCommand::SetServerEnabled { server, enabled: true, save: false }] if server == "docs"
    ));
    assert!(run(&mut app, "/mcp disable").0.is_empty());
    assert!(screen(&mut app, 110, 30).contains("usage: /mcp disable NAME [--save]"));
    assert!(!screen(&mut app, 110, 30).contains("fs ⊘ disabled"));
    agent(
        &mut app,
        AgentEvent::View(View::ServerEnabled {
            server: "fs".into(),
            enabled: false,
        }),
    );
    assert!(screen(&mut app, 110, 30).contains("fs ⊘ disabled"));
}

#[test]
fn question_mark_opens_help_only_when_the_composer_is_empty() {
    let mut app = started_app();
    ch(&mut app, '?');
    assert_eq!(app.overlay, Overlay::Help);
    key(&mut app, KeyCode::Esc);
    type_text(&mut app, "why?");
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.composer_text(), "why?");
}

#[test]
fn bracketed_paste_goes_into_the_composer_cleaned() {
    let mut app = started_app();
    let _ = update(
        &mut app,
        Msg::Terminal(Event::Paste("line one\nline \u{1b}[31mtwo\u{7}".into())),
    );
    assert_eq!(app.composer_text(), "line one\nline two");
}

#[test]
fn tab_focuses_the_pool_and_selecting_a_tool_shows_its_details() {
    let mut app = started_app();
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Pool);
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let text = screen(&mut app, 110, 30);
    assert!(
        text.contains("raw name: MCP server 'docs', tool 'search'"),
        "{text}"
    );
    assert!(
        text.contains("policy: allow — rule `mcp__docs__search` (default)"),
        "{text}"
    );
    assert!(
        text.contains("server claims (not verified, never used to allow): readOnlyHint=true"),
        "{text}"
    );
    assert!(text.contains("\"query\""), "schema missing:\n{text}");
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Composer);
}
