//! Working while a turn runs (decision 0076): what is sent during a turn is queued, shown,
//! editable and removable, and sent in order when the turn ends; Esc interrupts the turn
//! (never when it closes a dialog) and holds the queue until the next Enter.

use super::*;

fn send(app: &mut App, text: &str) -> Vec<UiCommand> {
    type_text(app, text);
    perform(key(app, KeyCode::Enter)).0
}

fn finished(app: &mut App, cancelled: bool) -> Vec<UiCommand> {
    perform(agent(
        app,
        AgentEvent::Fact(Fact::TurnFinished {
            usage: Usage::default(),
            cancelled,
            exit_code: None,
            model_calls: None,
        }),
    ))
    .0
}

fn submitted(commands: &[UiCommand]) -> Vec<&str> {
    commands
        .iter()
        .filter_map(|c| match c {
            UiCommand::Submit(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A turn runs: "first" was sent.
fn running_app() -> App {
    let mut app = started_app();
    assert_eq!(submitted(&send(&mut app, "first")), ["first"]);
    app
}

#[test]
fn a_message_sent_during_a_turn_is_queued_shown_and_sent_when_it_ends() {
    let mut app = running_app();
    assert!(
        send(&mut app, "second").is_empty(),
        "nothing reaches the agent yet"
    );
    assert_eq!(app.composer_text(), "", "the composer is free again");
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("queued › second"), "{text}");
    assert!(text.contains("working 0.0s · 1 queued"), "{text}");
    assert!(text.contains("esc to interrupt"), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with("› second")),
        "not in the conversation yet:\n{text}"
    );

    let commands = finished(&mut app, false);
    assert_eq!(submitted(&commands), ["second"]);
    assert!(app.turn.is_running(), "the queued message is the next turn");
    let text = screen(&mut app, 110, 30);
    assert!(!text.contains("queued"), "{text}");
    assert!(text.contains("› second"), "{text}");
}

#[test]
fn queued_messages_go_one_turn_at_a_time_in_order_also_after_an_error() {
    let mut app = running_app();
    send(&mut app, "a");
    send(&mut app, "b");
    agent(
        &mut app,
        AgentEvent::Fact(Fact::Error {
            message: "HTTP 500".into(),
        }),
    );
    assert_eq!(submitted(&finished(&mut app, false)), ["a"]);
    assert_eq!(app.queue.len(), 1);
    assert_eq!(submitted(&finished(&mut app, false)), ["b"]);
    assert!(finished(&mut app, false).is_empty());
    assert!(!app.turn.is_running());
}

#[test]
fn up_takes_the_last_queued_back_to_edit_and_delete_drops_it() {
    let mut app = running_app();
    send(&mut app, "one");
    send(&mut app, "two");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "two");
    assert_eq!(app.queue.len(), 1);
    // Up in a composer with text moves in the text, not through the queue.
    key(&mut app, KeyCode::Up);
    assert_eq!((app.composer_text().as_str(), app.queue.len()), ("two", 1));
    type_text(&mut app, " (edited)");
    send(&mut app, "");
    assert!(screen(&mut app, 110, 30).contains("queued › two (edited)"));

    key(&mut app, KeyCode::Delete);
    assert_eq!(app.queue.len(), 1);
    assert!(screen(&mut app, 110, 30).contains("dropped the last queued message"));
    send(&mut app, "three");
    assert_eq!(submitted(&finished(&mut app, false)), ["one"]);
    assert_eq!(submitted(&finished(&mut app, false)), ["three"]);
}

#[test]
fn esc_interrupts_the_turn_and_holds_the_queue_until_enter() {
    let mut app = running_app();
    agent(
        &mut app,
        AgentEvent::Live(Live::TextDelta("Half of the".into())),
    );
    send(&mut app, "next");
    let (commands, quit) = perform(key(&mut app, KeyCode::Esc));
    assert!(matches!(&commands[..], [UiCommand::Cancel]), "{commands:?}");
    assert!(!quit);
    assert!(screen(&mut app, 110, 30).contains("interrupting… queue held"));
    // A second Esc while the interrupt is on its way sends nothing more.
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());

    assert!(finished(&mut app, true).is_empty(), "the queue is held");
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("Half of the"), "what was said stays:\n{text}");
    assert!(text.contains("turn cancelled"), "{text}");
    assert!(
        text.contains("queued, held after the interrupt (Enter sends) › next"),
        "{text}"
    );
    // A message typed now goes after the held one.
    assert_eq!(submitted(&send(&mut app, "after")), ["next"]);
    assert_eq!(submitted(&finished(&mut app, false)), ["after"]);

    // Or Enter on the empty composer lets the held queue go.
    send(&mut app, "later");
    perform(ctrl_c(&mut app));
    assert!(finished(&mut app, true).is_empty(), "Ctrl+C holds it too");
    assert_eq!(submitted(&send(&mut app, "")), ["later"]);
}

#[test]
fn sending_again_after_esc_means_go_on() {
    let mut app = running_app();
    perform(key(&mut app, KeyCode::Esc));
    assert!(send(&mut app, "do this instead").is_empty());
    assert_eq!(submitted(&finished(&mut app, true)), ["do this instead"]);
}

#[test]
fn esc_while_idle_does_nothing() {
    let mut app = started_app();
    type_text(&mut app, "draft");
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());
    assert_eq!(app.composer_text(), "draft");
}

#[test]
fn esc_that_closes_a_dialog_does_not_interrupt_the_turn() {
    let mut app = running_app();
    // The question takes Esc (its safe answer), and an Esc right after it is the
    // person's second press at the dialog, not a wish to stop.
    let rx = open_trigger_modal(&mut app);
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());
    assert_eq!(answer_of(rx), Some(UserDecision::Deny));
    advance(&mut app, GUARD_WINDOW - Duration::from_millis(1));
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());

    // A question withdrawn just as the person presses Esc to close it.
    let rx = open_trigger_modal(&mut app);
    drop(rx);
    tick(&mut app);
    assert!(app.inbox.is_empty());
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());

    // An overlay, opened during the turn (it runs at once), closes on Esc.
    advance(&mut app, GUARD_WINDOW);
    assert!(send(&mut app, "/help").is_empty());
    assert_eq!(app.overlay, Overlay::Help);
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());
    assert_eq!(app.overlay, Overlay::None);

    // The pool's focus: Esc goes back to the composer.
    advance(&mut app, GUARD_WINDOW);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Pool);
    assert!(perform(key(&mut app, KeyCode::Esc)).0.is_empty());
    assert_eq!(app.focus, Focus::Composer);

    advance(&mut app, GUARD_WINDOW);
    let (commands, _) = perform(key(&mut app, KeyCode::Esc));
    assert!(matches!(&commands[..], [UiCommand::Cancel]), "{commands:?}");
}

#[test]
fn commands_that_change_the_session_wait_in_order_and_the_others_run_at_once() {
    let mut app = running_app();
    assert!(send(&mut app, "/connect docs").is_empty());
    assert!(send(&mut app, "after connect").is_empty());
    assert!(send(&mut app, "/undo").is_empty());
    // Mistakes are shown now, not queued.
    assert!(send(&mut app, "/frobnicate").is_empty());
    assert!(screen(&mut app, 110, 30).contains("unknown command /frobnicate"));
    // Answered beside the turn.
    assert!(matches!(
        &send(&mut app, "/roots")[..],
        [UiCommand::ListRoots]
    ));
    assert_eq!(app.queue.len(), 3);
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("queued › /connect docs"), "{text}");

    // The turn ends: the connect, then the message (a turn); /undo waits for that one.
    let commands = finished(&mut app, false);
    assert!(
        matches!(&commands[..], [UiCommand::Connect(n), UiCommand::Submit(m)]
            if n == "docs" && m == "after connect"),
        "{commands:?}"
    );
    let commands = finished(&mut app, false);
    assert!(matches!(&commands[..], [UiCommand::Undo]), "{commands:?}");

    // /quit does not wait.
    send(&mut app, "again");
    assert!(perform(key(&mut app, KeyCode::Enter)).0.is_empty());
    type_text(&mut app, "/quit");
    assert!(perform(key(&mut app, KeyCode::Enter)).1);
}

#[test]
fn a_queue_is_never_sent_to_an_agent_that_stopped() {
    let mut app = running_app();
    send(&mut app, "kept");
    let _ = update(&mut app, Msg::AgentGone);
    assert!(finished(&mut app, false).is_empty());
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "kept", "still the person's text");
}
