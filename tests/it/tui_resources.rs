//! The console's `@` and `/mcp__…` completion and the prompt-argument questions: keys fed
//! to `update`, screens drawn on ratatui's TestBackend (what a person sees), commands
//! read from the effects (what the agent receives).

use crate::support::console_view::screen;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
// crossterm's `Event` is the terminal's in this file; the agent's facts are `Fact`.
use toolgate::protocol::Event as Fact;

use toolgate::mcp::catalog::{PromptArg, PromptEntry, ResourceEntry, TemplateEntry};
use toolgate::mcp::{Catalog, CompletionTarget, ServerStatus};
use toolgate::protocol::{AgentEvent, UiCommand};
use toolgate::protocol::{Reply, View};
use toolgate::tui::{App, ConsoleInfo, Effect, Msg, update};

fn catalog() -> Catalog {
    Catalog {
        server: "fx".into(),
        has_resources: true,
        has_prompts: true,
        completions: true,
        resources: vec![
            ResourceEntry {
                uri: "fixture://readme".into(),
                name: "readme".into(),
                title: Some("Read me".into()),
                description: None,
                mime_type: Some("text/markdown".into()),
                size: None,
            },
            ResourceEntry {
                uri: "fixture://logo".into(),
                name: "logo".into(),
                title: None,
                description: None,
                mime_type: Some("image/png".into()),
                size: None,
            },
        ],
        templates: vec![TemplateEntry {
            uri_template: "fixture://pages/{name}".into(),
            name: "page".into(),
            title: None,
            description: Some("A page".into()),
            mime_type: None,
        }],
        prompts: vec![PromptEntry {
            name: "review".into(),
            title: None,
            description: Some("Review a file".into()),
            arguments: vec![
                PromptArg {
                    name: "file".into(),
                    description: Some("the file to review".into()),
                    required: true,
                },
                PromptArg {
                    name: "language".into(),
                    description: None,
                    required: false,
                },
            ],
        }],
        problems: vec![],
    }
}

fn app_with_catalog() -> App {
    let mut app = App::new(ConsoleInfo::default(), Instant::now());
    agent(
        &mut app,
        AgentEvent::View(View::Catalog {
            server: "fx".into(),
            catalog: Arc::new(catalog()),
        }),
    );
    app
}

fn agent(app: &mut App, event: AgentEvent) -> Vec<Effect> {
    update(app, Msg::Agent(event)).effects
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    update(
        app,
        Msg::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
    )
    .effects
}

fn type_text(app: &mut App, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| key(app, KeyCode::Char(c)))
        .collect()
}

fn commands(effects: Vec<Effect>) -> Vec<UiCommand> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::SendCommand(c) => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn at_lists_resources_and_templates_and_tab_inserts_the_chosen_one() {
    let mut app = app_with_catalog();
    type_text(&mut app, "compare @");
    let shown = screen(&mut app, 80, 16);
    assert!(shown.contains("@fx:fixture://readme  Read me"), "{shown}");
    assert!(shown.contains("@fx:fixture://logo  logo"), "{shown}");
    assert!(
        shown.contains("@fx:fixture://pages/{name}  template: A page"),
        "{shown}"
    );
    insta::assert_snapshot!("at_popup", shown);

    type_text(&mut app, "lo");
    let shown = screen(&mut app, 80, 16);
    assert!(!shown.contains("readme"), "filtered: {shown}");
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer_text(), "compare @fx:fixture://logo ");
    assert!(app.assist.popup.is_none(), "closed after inserting");

    // Enter sends the message with the mention as typed; the agent reads it.
    let sent = commands(key(&mut app, KeyCode::Enter));
    assert!(
        matches!(&sent[..], [UiCommand::Submit(t)] if t == "compare @fx:fixture://logo"),
        "{sent:?}"
    );
}

#[test]
fn a_template_variable_is_completed_by_the_server() {
    let mut app = app_with_catalog();
    type_text(&mut app, "@pag");
    let mut sent = commands(key(&mut app, KeyCode::Tab));
    assert_eq!(app.composer_text(), "@fx:fixture://pages/");
    sent.extend(commands(type_text(&mut app, "in")));
    // One request per distinct value typed, each with the template and variable.
    let asked: Vec<(u64, String)> = sent
        .iter()
        .filter_map(|c| match c {
            UiCommand::Complete {
                id,
                server,
                target,
                argument,
                value,
                ..
            } => {
                assert_eq!(server, "fx");
                assert_eq!(
                    *target,
                    CompletionTarget::Template("fixture://pages/{name}".into())
                );
                assert_eq!(argument, "name");
                Some((*id, value.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        asked.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>(),
        ["", "i", "in"]
    );
    assert!(screen(&mut app, 80, 12).contains("asking the server…"));

    // A late answer for an older value is dropped; the one for "in" is shown.
    agent(
        &mut app,
        AgentEvent::Reply(Reply::Completions {
            id: asked[0].0,
            values: vec!["usage".into()],
        }),
    );
    assert!(!screen(&mut app, 80, 12).contains("usage"));
    agent(
        &mut app,
        AgentEvent::Reply(Reply::Completions {
            id: asked[2].0,
            values: vec!["intro".into(), "install".into()],
        }),
    );
    let shown = screen(&mut app, 80, 12);
    assert!(
        shown.contains("intro  name of fx") && shown.contains("install  name of fx"),
        "{shown}"
    );
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.composer_text(), "@fx:fixture://pages/install");
}

#[test]
fn esc_closes_the_popup_and_a_gone_server_offers_nothing() {
    let mut app = app_with_catalog();
    type_text(&mut app, "@read");
    assert!(app.assist.popup.is_some());
    key(&mut app, KeyCode::Esc);
    assert!(app.assist.popup.is_none());
    assert!(!screen(&mut app, 80, 12).contains("Read me"));
    // Typing on opens it again for the new word.
    type_text(&mut app, "m");
    assert!(app.assist.popup.is_some());

    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerStatus {
            server: "fx".into(),
            status: ServerStatus::Failed {
                reason: "server exited".into(),
                stderr_tail: vec![],
            },
        }),
    );
    key(&mut app, KeyCode::Backspace);
    assert!(app.assist.popup.is_none(), "no catalog, no choices");
}

#[test]
fn a_prompt_command_asks_for_its_missing_required_argument() {
    let mut app = app_with_catalog();
    type_text(&mut app, "/rev");
    let shown = screen(&mut app, 80, 12);
    assert!(
        shown.contains("/mcp__fx__review <file> [language]  Review a file"),
        "{shown}"
    );
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer_text(), "/mcp__fx__review ");
    let sent = commands(key(&mut app, KeyCode::Enter));
    assert!(
        !sent
            .iter()
            .any(|c| matches!(c, UiCommand::RunPrompt { .. })),
        "{sent:?}"
    );
    // The question's answer is completed by the server (`ref/prompt`).
    let asked = sent
        .iter()
        .find_map(|c| match c {
            UiCommand::Complete {
                id,
                target: CompletionTarget::Prompt(p),
                argument,
                value,
                ..
            } if p == "review" && argument == "file" && value.is_empty() => Some(*id),
            _ => None,
        })
        .expect("a completion request for the asked argument");
    let shown = screen(&mut app, 80, 12);
    assert!(
        shown.contains("/mcp__fx__review — file (required): the file to review"),
        "{shown}"
    );
    insta::assert_snapshot!("prompt_question", shown);

    // Enter on an empty answer keeps asking.
    key(&mut app, KeyCode::Enter);
    assert!(app.assist.form.is_some());
    agent(
        &mut app,
        AgentEvent::Reply(Reply::Completions {
            id: asked,
            values: vec!["src/lib.rs".into()],
        }),
    );
    assert!(screen(&mut app, 80, 12).contains("src/lib.rs  file of fx"));
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer_text(), "src/lib.rs");
    for _ in 0.."src/lib.rs".len() {
        key(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "src/main.rs");
    let sent = commands(key(&mut app, KeyCode::Enter));
    let run = sent
        .into_iter()
        .find_map(|c| match c {
            UiCommand::RunPrompt {
                server,
                prompt,
                arguments,
            } => Some((server.into_string(), prompt, arguments)),
            _ => None,
        })
        .expect("the prompt runs once its required argument is given");
    assert_eq!(
        run,
        (
            "fx".to_string(),
            "review".to_string(),
            HashMap::from([("file".to_string(), "src/main.rs".to_string())])
        )
    );
    assert!(screen(&mut app, 80, 12).contains("/mcp__fx__review file=src/main.rs"));
}

#[test]
fn a_prompt_command_with_its_arguments_runs_at_once_and_esc_cancels_a_question() {
    let mut app = app_with_catalog();
    type_text(&mut app, "/mcp__fx__review a.rs language=rust");
    key(&mut app, KeyCode::Esc); // closes the popup, keeps the text
    let sent = commands(key(&mut app, KeyCode::Enter));
    assert!(
        matches!(&sent[..], [UiCommand::RunPrompt { arguments, .. }]
        if arguments == &HashMap::from([
            ("file".to_string(), "a.rs".to_string()),
            ("language".to_string(), "rust".to_string()),
        ])),
        "{sent:?}"
    );

    let mut app = app_with_catalog();
    type_text(&mut app, "/mcp__fx__review");
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Enter);
    assert!(app.assist.form.is_some());
    let sent = commands(key(&mut app, KeyCode::Esc));
    assert!(sent.is_empty());
    assert!(app.assist.form.is_none());
    assert!(screen(&mut app, 80, 12).contains("prompt cancelled"));
}
