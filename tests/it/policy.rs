//! File-based policy loading, workspace trust and "always" write-back, through the public API.

use serde_json::json;
use std::path::{Path, PathBuf};
use toolgate::gate::{TrustStore, append_allow_rule, resolve_target};
use toolgate::policy::{
    Decision, OutsideWorkspace, Policy, PolicyContext, RuleSource, always_rule,
};
use toolgate::pool::{PoolTool, ToolClaims, ToolOrigin};
use toolgate::settings::{Diagnostic, LoadOptions};

fn mcp(server: &str, tool: &str) -> PoolTool {
    PoolTool {
        name: format!("mcp__{server}__{tool}"),
        origin: ToolOrigin::Mcp {
            server: server.into(),
            tool: tool.into(),
        },
        description: String::new(),
        input_schema: json!({"type": "object"}).into(),
        claims: ToolClaims::default(),
        shortened: false,
    }
}

fn bash_tool() -> PoolTool {
    PoolTool::builtin(
        toolgate::builtin::tools::bash::ID,
        "",
        json!({"type": "object"}),
    )
}

/// The context the gate builds for a call: its path, if any, resolved on disk.
fn context<'a>(ws: &'a Path, tool: &PoolTool, input: &serde_json::Value) -> PolicyContext<'a> {
    PolicyContext::new(ws).with_target(resolve_target(ws, tool, input))
}

fn kind(p: &Policy, tool: &PoolTool, input: serde_json::Value, ws: &Path) -> &'static str {
    match p.decide(tool, &input, &context(ws, tool, &input)).decision {
        Decision::Allow => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { .. } => "deny",
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    user_dir: PathBuf,
}

fn setup(user: Option<&str>, project: Option<&str>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let user_dir = dir.path().join("config");
    std::fs::create_dir_all(ws.join(".toolgate")).unwrap();
    std::fs::create_dir_all(&user_dir).unwrap();
    if let Some(text) = user {
        std::fs::write(user_dir.join("config.toml"), text).unwrap();
    }
    if let Some(text) = project {
        std::fs::write(ws.join(".toolgate/config.toml"), text).unwrap();
    }
    Setup {
        _dir: dir,
        ws,
        user_dir,
    }
}

fn options(s: &Setup, trusted: bool) -> LoadOptions {
    LoadOptions {
        workspace: s.ws.clone(),
        user_config_dir: Some(s.user_dir.clone()),
        trust_project: trusted,
        ..LoadOptions::default()
    }
}

/// The policy of the settings' files and flags, as a start builds it.
fn load(opts: &LoadOptions) -> (Policy, Vec<Diagnostic>) {
    toolgate::policy::from_settings(&toolgate::settings::load(opts).permissions)
}

#[test]
fn layers_load_with_sources_and_precedence() {
    let s = setup(
        Some("[permissions]\ndeny = [\"mcp__deploy__trigger\"]\nallow = [\"mcp__docs\"]\n"),
        Some("[permissions]\nask = [\"mcp__docs__search\"]\nallow = [\"Bash(npm run *)\"]\n"),
    );
    let mut opts = options(&s, true);
    opts.allow_flags = vec!["mcp__deploy__trigger".into(), "mcp__weather__now".into()];
    opts.deny_flags = vec!["Bash(git push:*)".into()];
    let (policy, diags) = load(&opts);
    assert!(diags.is_empty(), "{diags:?}");
    let ws = &s.ws;
    // User deny beats the flag allow.
    assert_eq!(
        kind(&policy, &mcp("deploy", "trigger"), json!({}), ws),
        "deny"
    );
    // Project ask beats user allow.
    assert_eq!(kind(&policy, &mcp("docs", "search"), json!({}), ws), "ask");
    assert_eq!(
        kind(&policy, &mcp("docs", "get_version"), json!({}), ws),
        "allow"
    );
    let v = policy.decide(&mcp("weather", "now"), &json!({}), &PolicyContext::new(ws));
    assert_eq!((v.decision, v.source), (Decision::Allow, RuleSource::Flag));
    assert_eq!(
        kind(&policy, &bash_tool(), json!({"command": "git push"}), ws),
        "deny"
    );
    let v = policy.decide(
        &bash_tool(),
        &json!({"command": "npm run build"}),
        &PolicyContext::new(ws),
    );
    assert_eq!(v.rule, "Bash(npm run *)");
    assert_eq!(
        v.source,
        RuleSource::ProjectConfig(s.ws.join(".toolgate/config.toml"))
    );
}

#[test]
fn untrusted_project_files_are_reported_and_ignored() {
    let s = setup(
        None,
        Some("[permissions]\nallow = [\"mcp__deploy__trigger\"]\n"),
    );
    let (policy, diags) = load(&options(&s, false));
    assert_eq!(
        kind(&policy, &mcp("deploy", "trigger"), json!({}), &s.ws),
        "ask"
    );
    assert_eq!(diags.len(), 1);
    assert!(diags[0].file.ends_with(".toolgate/config.toml"));
    assert!(
        diags[0].message.contains("not trusted"),
        "{}",
        diags[0].message
    );

    let (trusted, diags) = load(&options(&s, true));
    assert!(diags.is_empty());
    assert_eq!(
        kind(&trusted, &mcp("deploy", "trigger"), json!({}), &s.ws),
        "allow"
    );
}

#[test]
fn a_malformed_file_does_not_stop_the_others() {
    let s = setup(
        Some("[permissions\nallow = ["),
        Some(
            "[permissions]\nallow = [\"mcp__weather__now\", \"mcp__*\", \"Nonsense(\"]\noutside_workspace = \"deny\"\n",
        ),
    );
    let mut opts = options(&s, true);
    opts.allow_flags = vec!["Bash(*)".into(), "mcp__x__y*z".into()];
    let (policy, diags) = load(&opts);
    let messages: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
    assert_eq!(diags.len(), 5, "{messages:#?}");
    assert!(diags[0].file.ends_with("config/config.toml") && diags[0].line == 1);
    assert!(diags[0].message.contains("not valid TOML"));
    assert!(diags[1].message.starts_with("refused") && diags[1].line == 2);
    assert!(diags[2].message.contains("Nonsense(") && diags[2].line == 2);
    assert!(diags[3].file.starts_with("--allow") && diags[3].message.starts_with("refused"));
    assert!(diags[4].file.starts_with("--allow") && diags[4].column == 10);
    assert_eq!(
        kind(&policy, &mcp("weather", "now"), json!({}), &s.ws),
        "allow"
    );
    assert_eq!(
        kind(&policy, &mcp("weather", "other"), json!({}), &s.ws),
        "ask"
    );
    assert_eq!(policy.outside_workspace(), OutsideWorkspace::Deny);
    let read = PoolTool::builtin(
        toolgate::builtin::tools::read_file::ID,
        "",
        json!({"type": "object"}),
    );
    assert_eq!(kind(&policy, &read, json!({"path": "../x"}), &s.ws), "deny");
}

#[test]
fn trust_store_round_trip_drives_loading() {
    let s = setup(
        None,
        Some("[permissions]\nallow = [\"mcp__deploy__trigger\"]\n"),
    );
    let store_path = s.user_dir.join("state/trusted.json");
    let mut store = TrustStore::open(store_path.clone()).unwrap();
    assert!(!store.is_trusted(&s.ws));
    store.trust(&s.ws).unwrap();
    let store = TrustStore::open(store_path).unwrap();
    let (policy, diags) = load(&options(&s, store.is_trusted(&s.ws)));
    assert!(diags.is_empty());
    assert_eq!(
        kind(&policy, &mcp("deploy", "trigger"), json!({}), &s.ws),
        "allow"
    );
}

#[test]
fn always_writes_a_rule_that_loads_next_session_and_keeps_the_file() {
    let original = "# project settings, reviewed by the team\n[model]\nprovider = \"scripted\"  # demo\n\n[permissions]\n# keep this comment\nask = [\"mcp__docs__search\"]\n";
    let s = setup(None, Some(original));
    let (mut policy, _) = load(&options(&s, true));
    let ctx = PolicyContext::new(&s.ws);
    let trigger = mcp("deploy", "trigger");
    assert_eq!(kind(&policy, &trigger, json!({}), &s.ws), "ask");
    let always = always_rule(&policy, &trigger, &json!({"env": "prod"}), &ctx).unwrap();
    assert_eq!(always.text, "mcp__deploy__trigger");
    assert!(append_allow_rule(&always.file, &always.text).unwrap());
    policy.apply_always(&always).unwrap();
    assert_eq!(kind(&policy, &trigger, json!({}), &s.ws), "allow");
    let again = always_rule(&policy, &trigger, &json!({}), &ctx).unwrap();
    assert!(!append_allow_rule(&again.file, &again.text).unwrap());
    let path = always.file;

    let text = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "# project settings, reviewed by the team",
        "provider = \"scripted\"  # demo",
        "# keep this comment",
        "ask = [\"mcp__docs__search\"]",
    ] {
        assert!(text.contains(kept), "{kept:?} lost:\n{text}");
    }
    assert_eq!(text.matches("mcp__deploy__trigger").count(), 1, "{text}");

    let (next, diags) = load(&options(&s, true));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(kind(&next, &trigger, json!({}), &s.ws), "allow");
    assert_eq!(kind(&next, &mcp("docs", "search"), json!({}), &s.ws), "ask");
}
