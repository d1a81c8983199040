//! The project's context reaching the model (issue 27): instruction files from the
//! project's root down to the working folder and the user's own, with imports; command
//! files run by `/NAME`; `@path` attaching a workspace file. The real binary runs headless
//! (`-p`) against a local Messages API (`support::model_api`), and each test reads what
//! that API received.

use crate::support::stderr;
use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::support::model_api::{Answer, ModelApi, anthropic_text_stream};

/// A project (a git root with files), a state dir and a user config dir.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(files: &[(&str, &str)]) -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["ws/.git", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let home = Home { dir };
        for (path, text) in files {
            home.write(path, text.as_bytes());
        }
        home
    }

    fn write(&self, path: &str, bytes: &[u8]) {
        let path = self.path(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `toolgate -p PROMPT` in `cwd` against a model API that answers once: the run and
    /// the one request the API received.
    fn prompt(&self, cwd: &str, prompt: &str) -> (Output, Value) {
        let api = ModelApi::start(vec![Answer::Stream(anthropic_text_stream(&["ok"], true))]);
        let out = self.run(cwd, &api, &["-p", prompt]);
        let requests = api.finish();
        assert_eq!(
            requests.len(),
            1,
            "one request; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out, requests[0].clone())
    }
}

impl Home {
    /// toolgate with `args` in `cwd` on the anthropic provider, pointed at `api`.
    fn run(&self, cwd: &str, api: &ModelApi, args: &[&str]) -> Output {
        crate::support::headless_run::on_model_api(
            &api.url,
            "anthropic",
            &self.path("state"),
            &self.path("config"),
            &self.path(cwd),
        )
        .args(args)
        .output()
        .expect("run toolgate")
    }
}

/// The system prompt of a request (a string, or text blocks).
fn system(request: &Value) -> String {
    match &request["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The text of the request's last user message (a string, or its text blocks joined).
fn last_user_text(request: &Value) -> String {
    let message = request["messages"]
        .as_array()
        .and_then(|all| all.iter().rev().find(|m| m["role"] == "user"))
        .expect("a user message");
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Where each marker sits in `text`, asserting every one is there.
fn positions(text: &str, markers: &[&str]) -> Vec<usize> {
    markers
        .iter()
        .map(|m| {
            text.find(m)
                .unwrap_or_else(|| panic!("{m} missing from:\n{text}"))
        })
        .collect()
}

#[test]
fn a_run_in_a_subfolder_sends_the_instruction_files_from_the_root_down_and_the_users() {
    let home = Home::new(&[
        ("config/AGENTS.md", "USER-RULE: answer tersely."),
        ("ws/AGENTS.md", "ROOT-RULE: run cargo fmt.\n@docs/style.md"),
        ("ws/docs/style.md", "STYLE-RULE: no abbreviations."),
        ("ws/CLAUDE.md", "ROOT-CLAUDE: not read, AGENTS.md is here."),
        ("ws/app/CLAUDE.md", "APP-CLAUDE: read, no AGENTS.md here."),
        (
            "ws/app/web/AGENTS.md",
            "WEB-RULE: use the web kit.\n@../../../outside.md",
        ),
        ("outside.md", "OUTSIDE: must not be imported."),
    ]);
    let (out, request) = home.prompt("ws/app/web", "hello");
    assert!(out.status.success(), "{}", stderr(&out));
    let system = system(&request);
    assert!(system.contains("<project-instructions>"), "{system}");
    let at = positions(
        &system,
        &[
            "USER-RULE",
            "ROOT-RULE",
            "STYLE-RULE",
            "APP-CLAUDE",
            "WEB-RULE",
        ],
    );
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "outermost first: {at:?}"
    );
    assert!(
        system.contains("<instructions file=\"app/web/AGENTS.md\">"),
        "{system}"
    );
    assert!(!system.contains("ROOT-CLAUDE"), "{system}");
    assert!(!system.contains("OUTSIDE: must not"), "{system}");
    assert!(system.contains("[@../../../outside.md not imported: it is outside the project"));
    assert!(
        stderr(&out).contains("imports @../../../outside.md: it is outside the project"),
        "the person is told: {}",
        stderr(&out)
    );
}

/// Claude Code's CLAUDE.md imports `@path` anywhere in its text (issue 45): a CLAUDE.md
/// written for it sends the imported files to the model, not only whole-line imports.
#[test]
fn a_claude_md_with_inline_imports_sends_the_imported_text_to_the_model() {
    let home = Home::new(&[
        (
            "ws/CLAUDE.md",
            "See @README for the overview and @docs/style.md for style.\n\
             Mail ops@example.com or ask @alice; `@docs/secret.md` is only an example,\n\
             and so is @../outside.md.\n\
             ```\n@docs/fenced.md\n```",
        ),
        ("ws/README", "OVERVIEW-TEXT: toolgate gates tool calls."),
        ("ws/docs/style.md", "STYLE-TEXT: short sentences."),
        ("ws/docs/secret.md", "SPAN-TEXT: must not be imported."),
        ("ws/docs/fenced.md", "FENCED-TEXT: must not be imported."),
        ("outside.md", "OUTSIDE-TEXT: must not be imported."),
    ]);
    let (out, request) = home.prompt("ws", "hello");
    assert!(out.status.success(), "{}", stderr(&out));
    let system = system(&request);
    let at = positions(
        &system,
        &[
            "See @README for the overview",
            "[imported from README]",
            "OVERVIEW-TEXT",
            "[imported from docs/style.md]",
            "STYLE-TEXT",
            "Mail ops@example.com or ask @alice",
        ],
    );
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "in order: {at:?}\n{system}"
    );
    for absent in [
        "SPAN-TEXT",
        "FENCED-TEXT",
        "OUTSIDE-TEXT",
        "[imported from ops",
    ] {
        assert!(!system.contains(absent), "{absent} in:\n{system}");
    }
    assert!(
        system.contains("[@../outside.md. not imported: it is outside the project")
            || system.contains("[@../outside.md not imported: it is outside the project"),
        "{system}"
    );
    assert!(
        stderr(&out).contains("outside.md"),
        "the person is told: {}",
        stderr(&out)
    );
}

#[test]
fn command_files_run_headless_with_their_arguments_from_every_folder() {
    let home = Home::new(&[
        (
            "ws/.toolgate/commands/deploy-check.md",
            "---\ndescription: Check a deploy\nargument-hint: [service]\n---\nCheck the deploy of $1 now ($ARGUMENTS).",
        ),
        ("config/commands/user-check.md", "User check of $ARGUMENTS."),
        (
            "ws/.claude/commands/ops/claude-check.md",
            "Claude check of $1.",
        ),
        ("ws/.toolgate/commands/help.md", "Shadowing help."),
        (
            "ws/.toolgate/commands/deep.md",
            "---\nmodel: claude-opus-4-1\n---\nThink hard about $1.",
        ),
    ]);
    let (out, request) = home.prompt("ws", "/deploy-check web");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        last_user_text(&request),
        "Check the deploy of web now (web)."
    );
    assert_eq!(request["model"], "claude-sonnet-4-5");
    assert!(
        stderr(&out).contains("is named like the built-in /help; it is not used"),
        "{}",
        stderr(&out)
    );
    let (_, request) = home.prompt("ws", "/user-check web");
    assert_eq!(last_user_text(&request), "User check of web.");
    let (_, request) = home.prompt("ws", "/ops:claude-check web");
    assert_eq!(last_user_text(&request), "Claude check of web.");
    // A command's `model:` holds for its turn.
    let (_, request) = home.prompt("ws", "/deep web");
    assert_eq!(last_user_text(&request), "Think hard about web.");
    assert_eq!(request["model"], "claude-opus-4-1");
}

#[test]
fn at_file_sends_the_files_content_and_refuses_a_binary_one() {
    let home = Home::new(&[("ws/notes.txt", "NOTE: the deploy key rotates on Fridays.")]);
    home.write("ws/blob.bin", &[0x89, 0x00, 0x01, 0x02]);
    let (out, request) = home.prompt("ws", "summarize @notes.txt and @blob.bin");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = last_user_text(&request);
    assert!(
        text.starts_with("summarize @notes.txt and @blob.bin"),
        "{text}"
    );
    assert!(
        text.contains(
            "<file path=\"notes.txt\">\nNOTE: the deploy key rotates on Fridays.\n</file>"
        ),
        "{text}"
    );
    assert!(
        text.contains("[@blob.bin not attached: it is a binary file]"),
        "{text}"
    );
    assert!(
        stderr(&out).contains("Attached @notes.txt (40 characters)"),
        "{}",
        stderr(&out)
    );
}

/// In the console (a real pty), `/model other` sends the next request to `other`, the
/// status line says so, the session log records the switch, and a resumed session (here
/// headless, `--continue`) goes on with it.
#[test]
fn model_switches_the_next_request_in_the_console_and_resume_keeps_it() {
    use crate::support::pty;
    let home = Home::new(&[]);
    let api = ModelApi::start(vec![
        Answer::Stream(anthropic_text_stream(&["First reply."], true)),
        Answer::Stream(anthropic_text_stream(&["Second reply."], true)),
    ]);
    let cmd = pty::anthropic_console(
        &home.path("state"),
        &home.path("config"),
        &home.path("ws"),
        &api.url,
    );
    let (mut child, screen, mut keys) = pty::spawn(cmd, 36, 120);
    screen.wait_text("claude-sonnet");
    keys.enter_line(&screen, "hello");
    screen.wait_text("First reply.");
    // Completion offers the provider's own list (GET /v1/models), beside the table.
    keys.press(b"/model claude-off");
    screen.wait_for("the provider's model in the completion", |t| {
        t.contains("claude-offered-by-the-api") && t.contains("offered")
    });
    keys.press(b"\t");
    screen.wait_text("/model claude-offered-by-the-api");
    keys.press(b"\r");
    screen.wait_text("The model is now anthropic claude-offered-by-the-api");
    keys.enter_line(&screen, "/model other");
    screen.wait_text("The model is now anthropic other");
    keys.enter_line(&screen, "again");
    screen.wait_text("Second reply.");
    keys.press(b"\x04");
    screen.wait_exit(&mut child);
    let requests = api.finish();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["model"], "claude-sonnet-4-5");
    assert_eq!(requests[1]["model"], "other");
    let log = std::fs::read_to_string(crate::support::session_log(&home.path("state")))
        .expect("session log");
    assert!(
        log.lines()
            .any(|l| l.contains(r#""type":"model_switched""#) && l.contains(r#""model":"other""#)),
        "{log}"
    );

    let api = ModelApi::start(vec![Answer::Stream(anthropic_text_stream(&["ok"], true))]);
    let out = home.run("ws", &api, &["-p", "third", "--continue"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = api.finish();
    assert_eq!(
        requests[0]["model"], "other",
        "resume keeps the switched model"
    );
}

/// `/init` asks the model to draft an AGENTS.md (a normal turn: writing it passes the gate).
#[test]
fn init_asks_the_model_to_draft_agents_md() {
    let home = Home::new(&[]);
    let (out, request) = home.prompt("ws", "/init");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = last_user_text(&request);
    assert!(
        text.starts_with("Draft an AGENTS.md for this workspace"),
        "{text}"
    );
    assert!(text.contains("with write_file"), "{text}");
}

/// In the console, `/memory` lists the instruction files the session loaded, imports under
/// the file that imports them, and the command files, each with its full path; `/memory N`
/// opens the Nth file in `$EDITOR`.
#[test]
fn memory_lists_the_loaded_files_in_the_console_and_opens_one_in_the_editor_and_help_lists_commands()
 {
    use crate::support::pty;
    let home = Home::new(&[
        ("ws/AGENTS.md", "Root rules.\n@docs/style.md"),
        ("ws/docs/style.md", "Style."),
        ("ws/app/CLAUDE.md", "App rules."),
        (
            "ws/.toolgate/commands/deploy-check.md",
            "---\ndescription: Check that a service is ready to ship\n---\nCheck $1.",
        ),
    ]);
    // The editor appends a line to the file it is given.
    let script = home.path("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'Edited in the editor.' >> \"$1\"\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let mut cmd = pty::toolgate(&home.path("state"), &home.path("config"));
    cmd.cwd(home.path("ws/app"));
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("VISUAL");
    cmd.env("EDITOR", &script);
    let (mut child, mut screen, mut keys) = pty::spawn(cmd, 40, 200);
    screen.row_per_line = true;
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "/memory");
    screen.wait_text(
        "Instruction files, in the order the model reads them (/memory N opens one in $EDITOR):",
    );
    let root = std::fs::canonicalize(home.path("ws")).expect("canonical");
    let text = screen.text();
    for line in [
        format!("1. {} (", root.join("AGENTS.md").display()),
        format!(
            "└ 2. {} (6 characters, imported by AGENTS.md)",
            root.join("docs/style.md").display()
        ),
        format!(
            "3. {} (10 characters)",
            root.join("app/CLAUDE.md").display()
        ),
    ] {
        assert!(text.contains(&line), "{line} missing:\n{text}");
    }
    assert!(text.contains("/deploy-check"), "{text}");
    keys.enter_line(&screen, "/memory 2");
    let style = home.path("ws/docs/style.md");
    screen.wait_for("the editor to change docs/style.md", |_| {
        std::fs::read_to_string(&style).is_ok_and(|t| t == "Style.Edited in the editor.\n")
    });
    screen.wait_for_screen("the alternate screen again", |s| s.alternate_screen());
    keys.enter_line(&screen, "/memory 9");
    screen.wait_text("/memory 9: there are 3 instruction files");
    // The command file is in /help too, after the built-in commands, with its description.
    keys.enter_line(&screen, "/help");
    screen.wait_text("Check that a service is ready to ship");
    assert!(screen.text().contains("/deploy-check"), "{}", screen.text());
    keys.press(b"x");
    screen.wait_for("the help to close", |text| {
        !text.contains("Check that a service is ready to ship")
    });
    keys.press(b"\x04");
    screen.wait_exit(&mut child);
}

/// A project's instruction file, command file or folder, or an `@file` that is a link
/// out of the project (issue 41): not read, the person told which, nothing of it sent.
#[test]
fn links_out_of_the_project_are_not_read_and_the_person_is_told() {
    const KEY: &str = "FAKE-SSH-KEY-d41d8c-not-for-the-model";
    const COMMAND_SECRET: &str = "OUTSIDE-COMMAND-e3b0c4";
    let home = Home::new(&[
        ("secret/id_rsa", KEY),
        ("secret-cmds/steal.md", COMMAND_SECRET),
        ("ws/sub/notes.txt", "inside notes"),
    ]);
    let link = |target: &str, at: &str| {
        let at = home.path(at);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, at).expect("symlink");
    };
    link("../secret/id_rsa", "ws/CLAUDE.md");
    link("../../secret/id_rsa", "ws/sub/AGENTS.md");
    link("../../../secret/id_rsa", "ws/.toolgate/commands/leak.md");
    link("../../secret-cmds", "ws/.claude/commands");
    link("../../secret/id_rsa", "ws/sub/key.txt");
    let (out, request) = home.prompt("ws/sub", "look at @key.txt and @notes.txt");
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = request.to_string();
    assert!(!sent.contains(KEY), "the key reached the model: {sent}");
    assert!(!sent.contains(COMMAND_SECRET), "{sent}");
    assert!(sent.contains("inside notes"), "{sent}");
    let told = stderr(&out);
    for notice in [
        "instructions: CLAUDE.md was not read: it resolves outside the project",
        "instructions: sub/AGENTS.md was not read: it resolves outside the project",
        "leak.md: it resolves outside the project, so it is not read",
        ".claude/commands was not read: it leads outside the project",
        "@key.txt is not attached: it is outside the workspace",
    ] {
        assert!(
            told.contains(notice),
            "missing notice {notice:?} in:\n{told}"
        );
    }
    // The refused /leak is no command: the words are sent as typed.
    let (_, request) = home.prompt("ws/sub", "/leak now");
    assert_eq!(last_user_text(&request), "/leak now");
}

/// Headless JSONL names each instruction file it loaded, whose it is, whether the project
/// is trusted, its imports and refused imports.
#[test]
fn jsonl_reports_each_instruction_file_and_whether_the_project_is_trusted() {
    let home = Home::new(&[
        ("config/AGENTS.md", "USER-RULE"),
        ("ws/AGENTS.md", "ROOT-RULE\n@docs/a.md\n@../outside.md"),
        ("ws/docs/a.md", "A-RULE"),
        ("outside.md", "OUTSIDE"),
    ]);
    let loaded = |trust: bool| -> Vec<Value> {
        let api = ModelApi::start(vec![Answer::Stream(anthropic_text_stream(&["ok"], true))]);
        let mut args = vec!["-p", "hi", "--output-format", "jsonl"];
        if trust {
            args.push("--trust-project");
        }
        let out = home.run("ws", &api, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        api.finish();
        crate::support::jsonl(&out)
            .into_iter()
            .filter(|l| l["type"] == "instructions_loaded")
            .collect()
    };
    let untrusted = loaded(false);
    assert_eq!(untrusted.len(), 2, "{untrusted:?}");
    let user = &untrusted[0];
    assert_eq!(user["scope"], "user");
    assert!(
        user["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("config/AGENTS.md")),
        "{user}"
    );
    let project = &untrusted[1];
    assert_eq!(project["path"], "AGENTS.md");
    assert_eq!(project["scope"], "project");
    assert_eq!(project["project_trusted"], false);
    assert_eq!(project["imports"], serde_json::json!(["docs/a.md"]));
    assert_eq!(project["refused"][0]["path"], "../outside.md");
    assert!(
        project["refused"][0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("outside the project")),
        "{project}"
    );
    let trusted = loaded(true);
    assert_eq!(trusted.len(), 2, "{trusted:?}");
    assert_eq!(trusted[1]["project_trusted"], true);
    assert_eq!(trusted[1]["path"], "AGENTS.md");
    // The session log keeps the same record.
    let logged: Vec<String> = std::fs::read_dir(home.path("state/sessions"))
        .expect("sessions")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|text| text.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|line| line.contains("\"type\":\"instructions_loaded\""))
        .collect();
    assert_eq!(logged.len(), 4, "{logged:?}");
}
