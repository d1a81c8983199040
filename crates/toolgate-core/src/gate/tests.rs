//! The gate's side of a decision: paths resolved on the file system before the policy
//! decides, "always" rules written to the config file, project servers approved once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::project_server::Approved;
use super::{resolve_target, store};
use crate::policy::tests::{bash, builtin, ctx, kind, mcp, user, with_rules};
use crate::policy::{
    Decision, OutsideWorkspace, Policy, PolicyContext, RuleList, RuleSource, always_rule,
};
use crate::pool::PoolTool;
use crate::settings::{ConfigSource, ServerConfig, ServerTransport};
use crate::test_support::temp_workspace;

/// The context the gate builds for one call: the call's path resolved on the file system.
fn resolved<'a>(ws: &'a Path, tool: &PoolTool, input: &Value) -> PolicyContext<'a> {
    PolicyContext::new(ws).with_target(resolve_target(ws, tool, input))
}

#[test]
fn workspace_guard_for_file_tools() {
    let (_dir, ws) = temp_workspace(&["src"]);
    let p = Policy::default();
    let read = builtin("read_file");
    let write = builtin("write_file");
    let glob = builtin("glob");
    let decide =
        |p: &Policy, t: &PoolTool, input: Value| p.decide(t, &input, &resolved(&ws, t, &input));
    let v = decide(&p, &read, json!({"path": "../secret"}));
    assert_eq!(
        (kind(&v), v.rule.as_str()),
        ("ask", "workspace guard: outside the workspace")
    );
    let edit = builtin("edit_file");
    let cases = [
        (&read, json!({"path": "src/main.rs"}), "allow"),
        (&write, json!({"path": "new/file.txt"}), "allow"),
        (&read, json!({"path": "/etc/passwd"}), "ask"),
        (&read, json!({}), "ask"),
        // glob: the base directory decides; `..` after a wildcard could escape.
        (&glob, json!({"pattern": "src/**/*.rs"}), "allow"),
        (&glob, json!({"pattern": "**/*.rs"}), "allow"),
        (&glob, json!({"pattern": "../*"}), "ask"),
        (&glob, json!({"pattern": "/etc/*"}), "ask"),
        (&glob, json!({"pattern": "*/../../x"}), "ask"),
        // Writing toolgate's own configuration asks.
        (&write, json!({"path": ".toolgate/config.toml"}), "ask"),
        (&edit, json!({"path": ".mcp.json"}), "ask"),
        (&read, json!({"path": ".mcp.json"}), "allow"),
    ];
    for (tool, input, expected) in cases {
        let v = decide(&p, tool, input.clone());
        assert_eq!(kind(&v), expected, "{} {input}", tool.name);
    }

    // Deny mode.
    let mut strict = Policy::default();
    strict.set_outside_workspace(OutsideWorkspace::Deny);
    let granted: BTreeSet<String> = ["read_file".to_string()].into();
    let decide = |p: &Policy, t: &PoolTool, input: Value| {
        p.decide(t, &input, &resolved(&ws, t, &input).with_grants(&granted))
    };
    assert_eq!(
        kind(&decide(&strict, &read, json!({"path": "../secret"}))),
        "deny"
    );
    assert_eq!(
        kind(&decide(&strict, &read, json!({"path": "src/a"}))),
        "allow"
    );
}

#[test]
fn file_rules_match_relative_or_absolute_paths() {
    let (dir, ws) = temp_workspace(&[]);
    let outside = std::fs::canonicalize(dir.path()).unwrap().join("shared");
    let decide =
        |p: &Policy, t: &PoolTool, input: Value| p.decide(t, &input, &resolved(&ws, t, &input));
    let allow_outside = format!("Read({}/**)", outside.display());
    let p = with_rules(&[
        (RuleList::Deny, "Read(.env)", user()),
        (RuleList::Ask, "Edit(docs/**)", user()),
        (RuleList::Allow, &allow_outside, user()),
        (RuleList::Allow, "Write(.toolgate/config.toml)", user()),
    ]);
    let read = builtin("read_file");
    assert_eq!(kind(&decide(&p, &read, json!({"path": ".env"}))), "deny");
    assert_eq!(
        kind(&decide(&p, &read, json!({"path": "./x/../.env"}))),
        "deny"
    );
    assert_eq!(
        kind(&decide(&p, &builtin("glob"), json!({"pattern": ".env"}))),
        "deny"
    );
    assert_eq!(
        kind(&decide(
            &p,
            &builtin("edit_file"),
            json!({"path": "docs/a/b.md"})
        )),
        "ask"
    );
    assert_eq!(
        kind(&decide(
            &p,
            &builtin("write_file"),
            json!({"path": "docs/a/b.md"})
        )),
        "allow"
    );
    let outside_file = outside.join("notes.txt");
    let v = decide(&p, &read, json!({"path": outside_file.to_str().unwrap()}));
    assert_eq!(
        (kind(&v), v.rule.as_str()),
        ("allow", allow_outside.as_str())
    );
    let v = decide(
        &p,
        &builtin("write_file"),
        json!({"path": ".toolgate/config.toml"}),
    );
    assert_eq!(kind(&v), "allow");
}

#[test]
fn symlink_escape_asks() {
    let (dir, ws) = temp_workspace(&[]);
    std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("innocent.txt")).unwrap();
    std::os::unix::fs::symlink(dir.path(), ws.join("up")).unwrap();
    let p = Policy::default();
    let decide = |t: &PoolTool, input: Value| p.decide(t, &input, &resolved(&ws, t, &input));
    let v = decide(&builtin("read_file"), json!({"path": "innocent.txt"}));
    assert_eq!(kind(&v), "ask");
    let Decision::Ask { why } = &v.decision else {
        unreachable!()
    };
    assert!(why.contains("secret.txt"), "{why}");
    assert_eq!(
        kind(&decide(
            &builtin("write_file"),
            json!({"path": "up/new.txt"})
        )),
        "ask"
    );
    assert_eq!(
        kind(&decide(&builtin("glob"), json!({"pattern": "up/*"}))),
        "ask"
    );
}

#[test]
fn project_servers_ask_once_per_definition() {
    let mut p = Approved::default();
    let mut server = ServerConfig {
        name: "tools".into(),
        transport: ServerTransport::Stdio {
            command: "npx".into(),
            args: vec!["some-server".into()],
            env: Default::default(),
            cwd: None,
        },
        source: ConfigSource::Project(PathBuf::from("/w/.mcp.json")),
        call_timeout_ms: 60_000,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    };
    let q = p.question(&server).unwrap();
    assert_eq!(q.command_line, "npx some-server");
    assert!(q.why.contains("npx some-server"));
    p.approve(&server);
    assert_eq!(p.question(&server), None);
    if let ServerTransport::Stdio { args, .. } = &mut server.transport {
        args.push("--evil".into());
    }
    assert!(p.question(&server).is_some());
    server.source = ConfigSource::User(PathBuf::from("/u/mcp.json"));
    assert_eq!(p.question(&server), None);
}

#[test]
fn always_rules_per_tool_kind() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let p = Policy::default();
    let rule = |t: &PoolTool, input: Value| {
        always_rule(&p, t, &input, &resolved(ws, t, &input)).map(|always| always.text)
    };
    assert_eq!(
        rule(
            &builtin("bash"),
            json!({"command": "echo ready && /bin/rm notes.txt"})
        )
        .unwrap(),
        "Bash(rm:*)"
    );
    assert_eq!(
        rule(&builtin("bash"), json!({"command": "ls -la"})).unwrap(),
        "Bash(ls:*)"
    );
    assert!(rule(&builtin("bash"), json!({"command": "ls 'x"})).is_err());
    assert_eq!(
        rule(&mcp("deploy", "trigger"), json!({})).unwrap(),
        "mcp__deploy__trigger"
    );
    assert_eq!(
        rule(&builtin("write_file"), json!({"path": "out/a.txt"})).unwrap(),
        "Write(out/a.txt)"
    );
    assert_eq!(
        rule(&builtin("edit_file"), json!({"path": "a*.txt"})).unwrap(),
        "Edit(a[*].txt)"
    );
    assert_eq!(
        rule(&builtin("connect_mcp"), json!({"server": "docs"})).unwrap(),
        "connect_mcp(docs)"
    );
}

#[test]
fn always_rule_is_written_by_the_store_and_applied_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let c = ctx(ws);
    let mut p = Policy::default();
    let rm = json!({"command": "rm notes.txt"});
    let always = always_rule(&p, &builtin("bash"), &rm, &c).unwrap();
    assert_eq!(always.text, "Bash(rm:*)");
    assert_eq!(always.file, ws.join(".toolgate/config.toml"));
    // Working out the rule wrote nothing and changed nothing.
    assert!(!always.file.exists());
    assert_eq!(kind(&bash(&p, "rm other.txt")), "ask");

    assert!(store::append_allow_rule(&always.file, &always.text).unwrap());
    p.apply_always(&always).unwrap();
    let v = bash(&p, "rm other.txt");
    assert_eq!(
        (kind(&v), v.source.clone()),
        ("allow", RuleSource::ProjectConfig(always.file.clone()))
    );
    let again = always_rule(&p, &builtin("bash"), &rm, &c).unwrap();
    assert!(!store::append_allow_rule(&again.file, &again.text).unwrap());
    p.apply_always(&again).unwrap();
    let text = std::fs::read_to_string(&always.file).unwrap();
    assert_eq!(text.matches("Bash(rm:*)").count(), 1, "{text}");
    assert_eq!(p.rules().len(), 1);
}

#[test]
fn the_gate_resolves_what_the_policy_expects() {
    // resolve_target reads the same field the decision does: for glob the literal base.
    let (_dir, ws) = temp_workspace(&["src"]);
    let glob = builtin("glob");
    let target = resolve_target(&ws, &glob, &json!({"pattern": "src/**/*.rs"})).unwrap();
    assert_eq!(target.requested, "src");
    assert_eq!(target.resolved.relative.as_deref(), Some("src"));
    assert_eq!(
        resolve_target(&ws, &builtin("bash"), &json!({"command": "ls"})),
        None
    );
    assert_eq!(
        resolve_target(&ws, &mcp("fs", "read"), &json!({"path": "x"})),
        None
    );
    assert_eq!(resolve_target(&ws, &builtin("read_file"), &json!({})), None);
}

#[tokio::test]
async fn a_call_that_may_run_carries_the_target_it_was_decided_on() {
    use crate::beneath::FileTarget;
    let (dir, ws) = temp_workspace(&["src"]);
    std::fs::write(ws.join("src/a.rs"), "").unwrap();
    std::os::unix::fs::symlink("src/a.rs", ws.join("alias.rs")).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "").unwrap();
    let mut gate = super::Gate::new(Policy::default(), ws.clone(), true);
    let (events, _rx) = tokio::sync::mpsc::channel(16);
    let cancel = tokio_util::sync::CancellationToken::new();
    let read = builtin("read_file");
    let mut check = async |path: &str| {
        gate.check(&read, &json!({"path": path}), "c", &events, &cancel)
            .await
    };
    let inside = check("src/./a.rs").await;
    assert_eq!(inside.decision, super::Gated::Run);
    assert_eq!(
        inside.target,
        Some(FileTarget::Workspace(PathBuf::from("src/a.rs")))
    );
    // A link inside is opened as what it resolved to when it was checked.
    let linked = check("alias.rs").await;
    assert_eq!(
        linked.target,
        Some(FileTarget::Workspace(PathBuf::from("src/a.rs")))
    );
    // Refused (headless cannot ask about an outside path): nothing to open.
    let outside = check("../outside.txt").await;
    assert!(matches!(outside.decision, super::Gated::Refused(_)));
    assert_eq!(outside.target, None);
}
