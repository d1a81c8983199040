//! The user pages' examples, run (issue 45): a page in assets/docs/ marks a fenced block
//! as an example in its info string, and the real binary runs it, so a page cannot drift
//! from what toolgate does:
//!
//! - `toml config-example`: a user `config.toml`; `toolgate status` starts with it and
//!   reports no problem.
//! - `toml managed-example`: a managed policy (`TOOLGATE_MANAGED_CONFIG`); the same.
//! - `toml hook-example=NAME`: a user `config.toml` with hooks; the scripted demo's
//!   `deploy web` runs headless with it, and [`hook_checks`] holds what NAME must do (a
//!   page's example without a check fails the test).
//! - `markdown example-file=PATH`: a file written into the page's workspace before its
//!   commands run.
//! - `sh command-example`: each line runs through `sh` with the binary first on PATH, in
//!   that workspace after one demo session, and must exit 0.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::deploy_record;
use crate::support::model_api::{Answer, ModelApi, anthropic_text_stream};

/// One fenced block of a page.
#[derive(Debug, Clone)]
struct Block {
    page: String,
    /// 1-based line of the opening fence.
    line: usize,
    /// The info string's words after the language (`config-example`, `hook-example=freeze`).
    marks: Vec<String>,
    text: String,
}

impl Block {
    fn mark(&self, name: &str) -> Option<&str> {
        self.marks.iter().find_map(|m| {
            if m == name {
                Some("")
            } else {
                m.strip_prefix(name)?.strip_prefix('=')
            }
        })
    }

    fn at(&self) -> String {
        format!("{}:{}", self.page, self.line)
    }
}

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/docs")
}

/// Every page's fenced blocks, page by page in file-name order.
fn pages() -> Vec<(String, Vec<Block>)> {
    let mut names: Vec<String> = std::fs::read_dir(docs_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(docs_dir().join(&name)).unwrap();
            let blocks = fenced_blocks(&name, &text);
            (name, blocks)
        })
        .collect()
}

fn fenced_blocks(page: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                open = Some(Block {
                    page: page.to_string(),
                    line: index + 1,
                    marks: info.split_whitespace().skip(1).map(String::from).collect(),
                    text: String::new(),
                })
            }
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some(block), None) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

fn all_blocks() -> Vec<Block> {
    pages().into_iter().flat_map(|(_, b)| b).collect()
}

fn blocks_marked(name: &str) -> Vec<Block> {
    all_blocks()
        .into_iter()
        .filter(|b| b.mark(name).is_some())
        .collect()
}

/// A state folder, a user config folder, a home and a workspace (a git root).
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["state", "config", "home", "ws/.git"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn write(&self, sub: &str, text: &str) -> PathBuf {
        let path = self.path(sub);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The binary in the workspace with this home, state and config, no provider key:
    /// the scripted demo model.
    fn toolgate(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        self.environment(&mut cmd);
        cmd.args(args);
        cmd
    }

    fn environment(&self, cmd: &mut Command) {
        cmd.current_dir(self.path("ws"))
            .env("HOME", self.path("home"))
            .env("TOOLGATE_STATE_DIR", self.path("state"))
            .env("TOOLGATE_CONFIG_DIR", self.path("config"))
            .env_remove("TOOLGATE_MANAGED_CONFIG")
            .env_remove("TOOLGATE_SCENARIO")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY");
    }

    /// The scripted demo's `deploy web`, headless, JSONL: its events.
    fn deploy(&self, extra: &[&str]) -> (Output, Vec<Value>) {
        let mut args = vec![
            "-p",
            "deploy web",
            "--output-format",
            "jsonl",
            "--provider",
            "scripted",
        ];
        args.extend_from_slice(extra);
        let out = self.toolgate(&args).output().unwrap();
        let events = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (out, events)
    }
}

fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What `toolgate status` says about a config it cannot use: the words of its notices.
const PROBLEM_WORDS: [&str; 4] = ["problem", "error", "unknown", "ignored"];

fn assert_status_accepts(home: &Home, block: &Block, managed: Option<&Path>) {
    let mut cmd = home.toolgate(&["status"]);
    if let Some(file) = managed {
        cmd.env("TOOLGATE_MANAGED_CONFIG", file);
    }
    let out = cmd.output().unwrap();
    let text = shown(&out);
    assert!(out.status.success(), "{}: {text}", block.at());
    // "Permission rules: no errors" is the good news, not a problem.
    let lower = text.to_lowercase().replace("no errors", "");
    assert!(
        text.contains("Start: toolgate starts with this configuration."),
        "{}: {text}",
        block.at()
    );
    for word in PROBLEM_WORDS {
        assert!(!lower.contains(word), "{}: {word:?} in {text}", block.at());
    }
    if let Some(file) = managed {
        assert!(
            text.contains(&file.display().to_string()),
            "{}: status names the managed file: {text}",
            block.at()
        );
    }
}

#[test]
fn config_examples_are_read_by_the_binary_without_a_problem() {
    let blocks = blocks_marked("config-example");
    assert!(blocks.len() >= 2, "{blocks:?}");
    for block in &blocks {
        let home = Home::new();
        home.write("config/config.toml", &block.text);
        assert_status_accepts(&home, block, None);
    }
}

/// The check above can fail: a config the loader refuses is reported by the same check.
#[test]
#[should_panic(expected = "a bad example:1")]
fn the_config_check_fails_on_a_config_toolgate_refuses() {
    let home = Home::new();
    let block = Block {
        page: "a bad example".into(),
        line: 1,
        marks: vec!["config-example".into()],
        text: "[permissions]\ndefault_mode = \"yolo\"\n".into(),
    };
    home.write("config/config.toml", &block.text);
    assert_status_accepts(&home, &block, None);
}

#[test]
fn managed_examples_are_read_strictly_without_a_problem() {
    let blocks = blocks_marked("managed-example");
    assert!(!blocks.is_empty());
    for block in &blocks {
        let home = Home::new();
        let file = home.write("managed.toml", &block.text);
        assert_status_accepts(&home, block, Some(&file));
    }
}

fn decision_for<'a>(events: &'a [Value], tool: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "permission_decided" && e["tool"] == tool)
        .unwrap_or_else(|| panic!("no decision for {tool}: {events:#?}"))
}

/// JSON lines a logging hook wrote, each with the event it ran for.
fn logged_events(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("the hook wrote no {}: {e}", file.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            format!("{} {}", v["hook_event_name"], v["tool_name"])
        })
        .collect()
}

/// The rules an example's run adds: `--allow mcp__deploy__trigger`, so only a hook can
/// stop the deploy, except for an example that is itself what lets it through.
fn hook_run_args(name: &str) -> &'static [&'static str] {
    match name {
        "allow-web" => &[],
        _ => &["--allow", "mcp__deploy__trigger"],
    }
}

/// What each hook example of the pages does, checked on the demo's headless deploy run.
fn hook_checks(name: &str, home: &Home, out: &Output, events: &[Value]) {
    let ws = home.path("ws");
    match name {
        "freeze" => {
            deploy_record::assert_none(&ws);
            let decision = decision_for(events, "mcp__deploy__trigger");
            assert_eq!(decision["decision"], "deny", "{decision}");
            assert!(
                decision.to_string().contains("release freeze until Monday"),
                "{decision}"
            );
        }
        "log" => {
            let logged = logged_events(&ws.join("tool-calls.jsonl"));
            assert!(
                logged.contains(&"\"PostToolUse\" \"mcp__deploy__trigger\"".to_string()),
                "{logged:?}"
            );
            deploy_record::assert_one_of(&ws, "web");
        }
        "allow-web" => {
            let decision = decision_for(events, "mcp__deploy__trigger");
            assert_eq!(decision["decision"], "allow", "{decision}");
            assert_eq!(decision["decider"]["by"], "hook", "{decision}");
            deploy_record::assert_one_of(&ws, "web");
        }
        "home-log" => {
            let logged = logged_events(&home.path("home/toolgate-calls.jsonl"));
            assert!(
                logged.contains(&"\"PostToolUse\" \"mcp__deploy__trigger\"".to_string()),
                "{logged:?}"
            );
        }
        other => panic!(
            "hook example {other} has no check in tests/it/docs_examples.rs::hook_checks; \
             add what it must do ({})",
            shown(out)
        ),
    }
}

#[test]
fn hook_examples_do_what_their_page_says() {
    let blocks = blocks_marked("hook-example");
    assert!(blocks.len() >= 4, "{blocks:?}");
    for block in &blocks {
        let name = block.mark("hook-example").unwrap_or_default();
        let home = Home::new();
        home.write("config/config.toml", &block.text);
        let (out, events) = home.deploy(hook_run_args(name));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            block.at(),
            shown(&out)
        );
        hook_checks(name, &home, &out, &events);
    }
}

/// The sandboxed version of the home-log example fails in the sandbox, as the page says.
#[test]
fn the_home_log_hook_fails_inside_the_sandbox() {
    let block = blocks_marked("hook-example")
        .into_iter()
        .find(|b| b.mark("hook-example") == Some("home-log"))
        .expect("the home-log example");
    assert!(block.text.contains("sandbox = false"), "{}", block.text);
    let home = Home::new();
    home.write(
        "config/config.toml",
        &block.text.replace(", sandbox = false", ""),
    );
    let (out, _) = home.deploy(&["--allow", "mcp__deploy__trigger"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        !home.path("home/toolgate-calls.jsonl").exists(),
        "a sandboxed hook wrote into the home folder"
    );
}

#[test]
fn command_examples_run_through_the_binary() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_toolgate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for (page, blocks) in pages() {
        let commands: Vec<&Block> = blocks
            .iter()
            .filter(|b| b.mark("command-example").is_some())
            .collect();
        if commands.is_empty() {
            continue;
        }
        let home = Home::new();
        for file in blocks
            .iter()
            .filter_map(|b| Some((b.mark("example-file")?, b)))
        {
            home.write(&format!("ws/{}", file.0), &file.1.text);
        }
        // One session first, so the audit commands have something to read.
        let (out, _) = home.deploy(&[]);
        assert!(out.status.success(), "{page}: {}", shown(&out));
        for block in commands {
            for line in block.text.lines().filter(|l| !l.trim().is_empty()) {
                let mut cmd = Command::new("sh");
                home.environment(&mut cmd);
                let out = cmd.args(["-c", line]).env("PATH", &path).output().unwrap();
                assert!(
                    out.status.success(),
                    "{}: `{line}`: {}",
                    block.at(),
                    shown(&out)
                );
                ran += 1;
            }
        }
    }
    assert!(ran >= 5, "only {ran} command examples ran");
}

/// The project-context page's files, in a workspace: the model receives what the page
/// says it receives (inline imports included), and its command file runs.
#[test]
fn the_project_context_examples_reach_the_model() {
    let (_, blocks) = pages()
        .into_iter()
        .find(|(name, _)| name == "project-context.md")
        .expect("project-context.md");
    let home = Home::new();
    for block in &blocks {
        if let Some(file) = block.mark("example-file") {
            home.write(&format!("ws/{file}"), &block.text);
        }
    }
    let api = ModelApi::start(vec![
        Answer::Stream(anthropic_text_stream(&["ok"], true)),
        Answer::Stream(anthropic_text_stream(&["ok"], true)),
    ]);
    for prompt in ["hello", "/deploy-check web"] {
        let out = crate::support::headless_run::on_model_api(
            &api.url,
            "anthropic",
            &home.path("state"),
            &home.path("config"),
            &home.path("ws"),
        )
        .env("HOME", home.path("home"))
        .args(["-p", prompt])
        .output()
        .unwrap();
        assert!(out.status.success(), "{prompt}: {}", shown(&out));
    }
    let requests = api.finish();
    assert_eq!(requests.len(), 2);
    let system = requests[0]["system"].to_string();
    for sent in [
        "See @README.md for the overview",
        "README-TEXT",
        "STYLE-TEXT",
    ] {
        assert!(system.contains(sent), "{sent} not sent: {system}");
    }
    assert!(!system.contains("[imported from notes.md"), "{system}");
    let command = requests[1]["messages"].to_string();
    assert!(
        command.contains("Check that web is ready to deploy"),
        "{command}"
    );
}

/// Every page in assets/docs/ is one the `docs` server serves (to the model too): a page
/// written but left out of the server's list would reach no one who asks the agent.
#[test]
fn every_page_is_served_by_the_docs_server() {
    let home = Home::new();
    let out = home
        .toolgate(&["mcp", "call", "docs", "get_version", "{}"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    let served = String::from_utf8_lossy(&out.stdout).into_owned();
    let pages = pages();
    assert!(pages.len() >= 13, "{pages:?}");
    assert!(
        served.contains(&format!("({} pages: ", pages.len())),
        "{served}"
    );
    for (page, _) in &pages {
        assert!(
            served.contains(page.as_str()),
            "{page} not served: {served}"
        );
    }
}
