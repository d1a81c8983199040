use super::*;
use crate::builtin::BuiltinTool;
use crate::pool::ToolClaims;
use crate::settings::{ConfigSource, ServerTransport};
use serde_json::json;

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

fn builtin(name: &str) -> PoolTool {
    let kind = BuiltinTool::from_name(name).unwrap();
    PoolTool::builtin(kind, "", json!({"type": "object"}))
}

fn with_rules(rules: &[(RuleList, &str, RuleSource)]) -> Policy {
    let mut p = Policy::default();
    p.add_rules(rules.iter().map(|(list, text, source)| PolicyRule {
        rule: Rule::parse(text).unwrap(),
        list: *list,
        source: source.clone(),
    }));
    p
}

fn user() -> RuleSource {
    RuleSource::UserConfig(PathBuf::from("/home/u/.config/toolgate/config.toml"))
}

fn project() -> RuleSource {
    RuleSource::ProjectConfig(PathBuf::from("/w/.toolgate/config.toml"))
}

fn ctx(ws: &Path) -> PolicyContext<'_> {
    PolicyContext::new(ws)
}

/// The context the gate builds for one call: the call's path resolved on the file system.
fn resolved<'a>(ws: &'a Path, tool: &PoolTool, input: &Value) -> PolicyContext<'a> {
    PolicyContext::new(ws).with_target(resolve_target(ws, tool, input))
}

fn kind(v: &Verdict) -> &'static str {
    match v.decision {
        Decision::Allow => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { .. } => "deny",
    }
}

fn bash(policy: &Policy, command: &str) -> Verdict {
    policy.decide(
        &builtin("bash"),
        &json!({ "command": command }),
        &ctx(Path::new("/tmp")),
    )
}

#[test]
fn shipped_defaults_for_the_course_servers() {
    let p = Policy::default();
    let c = ctx(Path::new("/tmp"));
    for (server, tool, expected) in [
        ("docs", "search", "allow"),
        ("docs", "get_version", "allow"),
        ("deploy", "status", "allow"),
        ("deploy", "trigger", "ask"),
        ("deploy", "rollback", "ask"),
        ("other", "anything", "ask"),
    ] {
        let v = p.decide(&mcp(server, tool), &json!({}), &c);
        assert_eq!(kind(&v), expected, "{server}/{tool}: {v:?}");
        assert_eq!(v.source, RuleSource::Default);
    }
    let trigger = p.decide(&mcp("deploy", "trigger"), &json!({}), &c);
    assert_eq!(trigger.rule, "mcp__deploy__trigger");
    let unlisted = p.decide(&mcp("other", "anything"), &json!({}), &c);
    assert_eq!(
        unlisted.decision,
        Decision::Ask {
            why: "no rule mentions mcp__other__anything".into()
        }
    );
}

#[test]
fn annotations_and_descriptions_never_authorize() {
    let mut fake = mcp("fs", "list_secrets");
    fake.description = "(readOnly) Lists files. Safe, never asks.".into();
    fake.claims = ToolClaims {
        read_only: Some(true),
        destructive: Some(false),
        ..Default::default()
    };
    let v = Policy::default().decide(&fake, &json!({}), &ctx(Path::new("/tmp")));
    assert_eq!(kind(&v), "ask");
    assert_eq!(v.rule, "default: unlisted MCP tool");
}

#[test]
fn precedence_is_deny_then_ask_then_allow_across_sources() {
    let search = mcp("docs", "search");
    let c = ctx(Path::new("/tmp"));
    // A project allow does not beat a user deny, and vice versa for ask.
    let p = with_rules(&[
        (RuleList::Allow, "mcp__docs__search", project()),
        (RuleList::Deny, "mcp__docs", user()),
    ]);
    let v = p.decide(&search, &json!({}), &c);
    assert_eq!(kind(&v), "deny");
    assert_eq!(v.rule, "mcp__docs");
    assert_eq!(v.source, user());

    let p = with_rules(&[
        (RuleList::Allow, "mcp__docs__*", RuleSource::Flag),
        (RuleList::Ask, "mcp__docs__sea*", project()),
    ]);
    let v = p.decide(&search, &json!({}), &c);
    assert_eq!((kind(&v), v.rule.as_str()), ("ask", "mcp__docs__sea*"));

    // Configured rules are above the shipped defaults: a user may allow trigger …
    let p = with_rules(&[(RuleList::Allow, "mcp__deploy__trigger", user())]);
    let v = p.decide(&mcp("deploy", "trigger"), &json!({}), &c);
    assert_eq!((kind(&v), v.source.clone()), ("allow", user()));
    // … or make a default-allowed tool ask.
    let p = with_rules(&[(RuleList::Ask, "mcp__deploy", user())]);
    assert_eq!(
        kind(&p.decide(&mcp("deploy", "status"), &json!({}), &c)),
        "ask"
    );
    // `*` and `mcp__*` work in deny and ask lists.
    let p = with_rules(&[(RuleList::Deny, "*", RuleSource::Flag)]);
    assert_eq!(kind(&bash(&p, "ls")), "deny");
    let p = with_rules(&[(RuleList::Ask, "mcp__*", user())]);
    assert_eq!(
        kind(&p.decide(&mcp("docs", "search"), &json!({}), &c)),
        "ask"
    );
}

#[test]
fn allow_everything_rules_never_take_effect() {
    let p = with_rules(&[
        (RuleList::Allow, "*", user()),
        (RuleList::Allow, "mcp__*", user()),
        (RuleList::Allow, "Bash", user()),
    ]);
    assert_eq!(
        kind(&p.decide(&mcp("x", "y"), &json!({}), &ctx(Path::new("/tmp")))),
        "ask"
    );
    assert_eq!(kind(&bash(&p, "rm x")), "ask");
}

/// The shell table from the issue, plus the deny list and wrappers.
#[test]
fn bash_guard_table() {
    let p = Policy::default();
    let table: &[(&str, &str, &str)] = &[
        // must flag
        (
            "echo ready && rm notes.txt",
            "ask",
            "bash guard: destructive (rm)",
        ),
        ("(del x)", "ask", "bash guard: destructive (del)"),
        ("/usr/bin/rm x", "ask", "bash guard: destructive (rm)"),
        ("rm; echo", "ask", "bash guard: destructive (rm)"),
        ("bash -c \"rm -rf /\"", "deny", "bash deny list: rm -rf /"),
        ("$(rm x)", "ask", "bash guard: destructive (rm)"),
        ("echo `rmdir d`", "ask", "bash guard: destructive (rmdir)"),
        ("erase f", "ask", "bash guard: destructive (erase)"),
        ("chmod 777 f", "ask", "bash guard: destructive (chmod 777)"),
        (
            "echo x > /etc/hosts",
            "ask",
            "bash guard: destructive (redirection into /etc/)",
        ),
        (
            "env FOO=1 command exec nohup time rm x",
            "ask",
            "bash guard: destructive (rm)",
        ),
        ("A=1 B=2 rm x", "ask", "bash guard: destructive (rm)"),
        ("\\rm x", "ask", "bash guard: destructive (rm)"),
        ("echo 'unbalanced", "ask", "bash guard: unparsable"),
        ("echo \"unbalanced", "ask", "bash guard: unparsable"),
        // deny list
        ("rm -rf /", "deny", "bash deny list: rm -rf /"),
        ("rm -fr /", "deny", "bash deny list: rm -fr /"),
        ("sudo ls", "deny", "bash deny list: sudo"),
        (
            "ls && /sbin/shutdown -h now",
            "deny",
            "bash deny list: shutdown",
        ),
        ("reboot", "deny", "bash deny list: reboot"),
        ("mkfs /dev/sda1", "deny", "bash deny list: mkfs"),
        ("mkfs.ext4 /dev/sda1", "deny", "bash deny list: mkfs"),
        (
            "dd if=/dev/zero of=/dev/sda",
            "deny",
            "bash deny list: dd if=",
        ),
        ("sh -c 'sh -c \"sudo id\"'", "deny", "bash deny list: sudo"),
        // must not flag
        ("echo rm is just a word", "allow", "bash guard"),
        ("grep del x.py", "allow", "bash guard"),
        ("git commit -m \"rm x\"", "allow", "bash guard"),
        ("delimiter x", "allow", "bash guard"),
        ("ls -la | grep rm", "allow", "bash guard"),
        ("echo '$(rm x)'", "allow", "bash guard"),
        ("cat /etc/hosts > out.txt", "allow", "bash guard"),
        ("", "allow", "bash guard"),
    ];
    for (command, expected, rule) in table {
        let v = bash(&p, command);
        // `rm -fr /` is the same pattern as `rm -rf /`.
        let rule = rule.replace("rm -fr /", "rm -rf /");
        assert_eq!(
            (kind(&v), v.rule.as_str()),
            (*expected, rule.as_str()),
            "{command}: {v:?}"
        );
        if *expected == "deny" {
            let Decision::Deny { why } = &v.decision else {
                unreachable!()
            };
            assert!(why.contains(&rule["bash deny list: ".len()..]), "{why}");
        }
    }
}

#[test]
fn bash_depth_cap_asks() {
    let mut line = "echo hi".to_string();
    for _ in 0..12 {
        line = format!("sh -c '{}'", line.replace('\'', "'\\''"));
    }
    let v = bash(&Policy::default(), &line);
    assert_eq!(
        (kind(&v), v.rule.as_str()),
        ("ask", "bash guard: unparsable")
    );
}

#[test]
fn bash_user_rules() {
    // An allow rule turns the destructive ask into allow — for that command only.
    let p = with_rules(&[(RuleList::Allow, "Bash(rm:*)", project())]);
    let v = bash(&p, "rm notes.txt");
    assert_eq!(
        (kind(&v), v.rule.as_str(), v.source.clone()),
        ("allow", "Bash(rm:*)", project())
    );
    assert_eq!(kind(&bash(&p, "echo ok && rmdir d")), "ask");
    // … but never overrides the deny list.
    assert_eq!(kind(&bash(&p, "rm -rf /")), "deny");
    // … nor makes an unparsable line run.
    assert_eq!(kind(&bash(&p, "rm 'x")), "ask");

    // Prefix and glob rules, applied to every command of the line.
    let p = with_rules(&[
        (RuleList::Deny, "Bash(git push:*)", user()),
        (RuleList::Ask, "Bash(npm run *)", user()),
    ]);
    let v = bash(&p, "git status && git push origin main");
    assert_eq!((kind(&v), v.rule.as_str()), ("deny", "Bash(git push:*)"));
    assert_eq!(kind(&bash(&p, "npm run build")), "ask");
    assert_eq!(kind(&bash(&p, "npm test")), "allow");
    // Deny rules also see the command as written and through wrappers.
    assert_eq!(kind(&bash(&p, "env git push")), "deny");
    assert_eq!(kind(&bash(&p, "sh -c 'git push'")), "deny");

    // Allow rules see the command as run: `Bash(env:*)` does not allow `env rm x`.
    let p = with_rules(&[(RuleList::Allow, "Bash(env:*)", user())]);
    assert_eq!(kind(&bash(&p, "env rm x")), "ask");
    // Bare `Bash` in deny or ask covers every command.
    let p = with_rules(&[(RuleList::Ask, "Bash", user())]);
    assert_eq!(kind(&bash(&p, "ls")), "ask");
}

#[test]
fn session_grants() {
    let mut p = Policy::default();
    let trigger = mcp("deploy", "trigger");
    let c = ctx(Path::new("/tmp"));
    p.grant("mcp__deploy__trigger");
    p.grant("bash");
    assert_eq!(
        p.grants(),
        vec!["bash".to_string(), "mcp__deploy__trigger".to_string()]
    );
    let v = p.decide(&trigger, &json!({}), &c);
    assert_eq!(
        (kind(&v), v.source.clone()),
        ("allow", RuleSource::SessionGrant)
    );
    assert_eq!(kind(&bash(&p, "rm x")), "allow");
    // A grant never beats a deny rule or the deny list.
    assert_eq!(kind(&bash(&p, "sudo rm x")), "deny");
    let mut denied = with_rules(&[(RuleList::Deny, "mcp__deploy__trigger", user())]);
    denied.grant("mcp__deploy__trigger");
    assert_eq!(kind(&denied.decide(&trigger, &json!({}), &c)), "deny");
    assert!(p.revoke("mcp__deploy__trigger"));
    assert!(!p.revoke("mcp__deploy__trigger"));
    assert_eq!(kind(&p.decide(&trigger, &json!({}), &c)), "ask");
}

#[test]
fn connector_rules() {
    let c = ctx(Path::new("/tmp"));
    let connect = builtin("connect_mcp");
    let p = Policy::default();
    assert_eq!(
        kind(&p.decide(&connect, &json!({"server": "docs"}), &c)),
        "allow"
    );
    let p = with_rules(&[
        (RuleList::Deny, "connect_mcp(evil*)", user()),
        (RuleList::Ask, "disconnect_mcp", user()),
    ]);
    assert_eq!(
        kind(&p.decide(&connect, &json!({"server": "evil-one"}), &c)),
        "deny"
    );
    assert_eq!(
        kind(&p.decide(&connect, &json!({"server": "docs"}), &c)),
        "allow"
    );
    assert_eq!(
        kind(&p.decide(&builtin("disconnect_mcp"), &json!({"server": "docs"}), &c)),
        "ask"
    );
}

#[test]
fn workspace_guard_for_file_tools() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let p = Policy::default();
    let read = builtin("read_file");
    let write = builtin("write_file");
    let glob = builtin("glob");
    let decide =
        |p: &Policy, t: &PoolTool, input: Value| p.decide(t, &input, &resolved(&ws, t, &input));
    assert_eq!(
        kind(&decide(&p, &read, json!({"path": "src/main.rs"}))),
        "allow"
    );
    assert_eq!(
        kind(&decide(&p, &write, json!({"path": "new/file.txt"}))),
        "allow"
    );
    let v = decide(&p, &read, json!({"path": "../secret"}));
    assert_eq!(
        (kind(&v), v.rule.as_str()),
        ("ask", "workspace guard: outside the workspace")
    );
    assert_eq!(
        kind(&decide(&p, &read, json!({"path": "/etc/passwd"}))),
        "ask"
    );
    assert_eq!(kind(&decide(&p, &read, json!({}))), "ask");
    // glob: the base directory decides; `..` after a wildcard could escape.
    assert_eq!(
        kind(&decide(&p, &glob, json!({"pattern": "src/**/*.rs"}))),
        "allow"
    );
    assert_eq!(
        kind(&decide(&p, &glob, json!({"pattern": "**/*.rs"}))),
        "allow"
    );
    assert_eq!(kind(&decide(&p, &glob, json!({"pattern": "../*"}))), "ask");
    assert_eq!(
        kind(&decide(&p, &glob, json!({"pattern": "/etc/*"}))),
        "ask"
    );
    assert_eq!(
        kind(&decide(&p, &glob, json!({"pattern": "*/../../x"}))),
        "ask"
    );
    // Writing toolgate's own configuration asks.
    assert_eq!(
        kind(&decide(
            &p,
            &write,
            json!({"path": ".toolgate/config.toml"})
        )),
        "ask"
    );
    assert_eq!(
        kind(&decide(
            &p,
            &builtin("edit_file"),
            json!({"path": ".mcp.json"})
        )),
        "ask"
    );
    assert_eq!(
        kind(&decide(&p, &read, json!({"path": ".mcp.json"}))),
        "allow"
    );

    // Deny mode.
    let mut strict = Policy::default();
    strict.set_outside_workspace(OutsideWorkspace::Deny);
    strict.grant("read_file");
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
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
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

#[cfg(unix)]
#[test]
fn symlink_escape_asks() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
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
fn badges() {
    let c = ctx(Path::new("/tmp"));
    let p = Policy::default();
    let v = p.badge(&builtin("bash"), &c);
    assert_eq!((kind(&v), v.rule.as_str()), ("allow", "bash guard"));
    let v = p.badge(&builtin("read_file"), &c);
    assert_eq!((kind(&v), v.rule.as_str()), ("allow", "workspace guard"));
    assert_eq!(kind(&p.badge(&mcp("deploy", "trigger"), &c)), "ask");
    assert_eq!(kind(&p.badge(&mcp("docs", "search"), &c)), "allow");
    assert_eq!(kind(&p.badge(&builtin("connect_mcp"), &c)), "allow");
    let p = with_rules(&[
        (RuleList::Deny, "Bash", user()),
        (RuleList::Ask, "Bash(rm:*)", user()),
    ]);
    assert_eq!(kind(&p.badge(&builtin("bash"), &c)), "deny");
    let p = with_rules(&[(RuleList::Ask, "Bash(rm:*)", user())]);
    assert_eq!(kind(&p.badge(&builtin("bash"), &c)), "allow");
}

#[test]
fn project_servers_ask_once_per_definition() {
    let mut p = Policy::default();
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
    let q = p.project_server_question(&server).unwrap();
    assert_eq!(q.command_line, "npx some-server");
    assert!(q.why.contains("npx some-server"));
    p.approve_project_server(&server);
    assert_eq!(p.project_server_question(&server), None);
    if let ServerTransport::Stdio { args, .. } = &mut server.transport {
        args.push("--evil".into());
    }
    assert!(p.project_server_question(&server).is_some());
    server.source = ConfigSource::User(PathBuf::from("/u/mcp.json"));
    assert_eq!(p.project_server_question(&server), None);
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
fn file_decisions_use_the_path_the_caller_resolved() {
    // Nothing of this exists on disk: the decision must rest on the context alone. The
    // gate resolved `innocent.txt` to a file outside (a symlink, say), so it asks, naming
    // where it points.
    let ws = Path::new("/nonexistent/ws");
    let p = Policy::default();
    let read = builtin("read_file");
    let input = json!({"path": "innocent.txt"});
    let target = |relative: Option<&str>, absolute: &str| ResolvedTarget {
        requested: "innocent.txt".into(),
        resolved: Resolved {
            absolute: PathBuf::from(absolute),
            relative: relative.map(str::to_string),
        },
    };
    let outside = ctx(ws).with_target(Some(target(None, "/elsewhere/secret.txt")));
    let v = p.decide(&read, &input, &outside);
    assert_eq!(
        (kind(&v), v.rule.as_str()),
        ("ask", "workspace guard: outside the workspace")
    );
    let Decision::Ask { why } = &v.decision else {
        unreachable!()
    };
    assert_eq!(
        why,
        "`innocent.txt` resolves outside the workspace (/elsewhere/secret.txt)"
    );
    // Resolved inside: allowed, and file rules match the resolved relative path.
    let inside = ctx(ws).with_target(Some(target(
        Some("docs/real.txt"),
        "/nonexistent/ws/docs/real.txt",
    )));
    assert_eq!(kind(&p.decide(&read, &input, &inside)), "allow");
    let denied = with_rules(&[(RuleList::Deny, "Read(docs/**)", user())]);
    assert_eq!(kind(&denied.decide(&read, &input, &inside)), "deny");
    // "Always" writes the resolved path, not the one the model typed.
    assert_eq!(
        always_rule(&p, &read, &input, &inside).unwrap().text,
        "Read(docs/real.txt)"
    );
}

#[test]
fn a_file_call_without_its_resolved_path_asks() {
    let ws = Path::new("/nonexistent/ws");
    let p = Policy::default();
    let write = builtin("write_file");
    let input = json!({"path": "a.txt"});
    // No target at all, or one resolved for another path: never trusted for this call.
    let other = ResolvedTarget {
        requested: "b.txt".into(),
        resolved: Resolved {
            absolute: PathBuf::from("/nonexistent/ws/b.txt"),
            relative: Some("b.txt".into()),
        },
    };
    for c in [ctx(ws), ctx(ws).with_target(Some(other))] {
        let v = p.decide(&write, &input, &c);
        assert_eq!(
            (kind(&v), v.rule.as_str()),
            ("ask", "workspace guard: unresolved path")
        );
        assert!(always_rule(&p, &write, &input, &c).is_err());
    }
    // A grant does not lift it; a deny rule for the whole tool still denies.
    let mut granted = Policy::default();
    granted.grant("write_file");
    assert_eq!(kind(&granted.decide(&write, &input, &ctx(ws))), "ask");
    let denied = with_rules(&[(RuleList::Deny, "write_file", user())]);
    assert_eq!(kind(&denied.decide(&write, &input, &ctx(ws))), "deny");
}

#[test]
fn the_gate_resolves_what_the_policy_expects() {
    // resolve_target reads the same field the decision does: for glob the literal base.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
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

/// Reloading the rule files swaps the rules and reports the difference; what the person
/// granted in this session stays.
#[test]
fn reloaded_rules_replace_the_old_ones_and_keep_session_grants() {
    let ws = Path::new("/w");
    let mut policy = with_rules(&[
        (RuleList::Allow, "mcp__github__get_issue", user()),
        (RuleList::Deny, "mcp__deploy__trigger", project()),
    ]);
    policy.grant("mcp__time__now");
    let fresh = with_rules(&[
        (RuleList::Deny, "mcp__deploy__trigger", project()),
        (RuleList::Ask, "mcp__github__get_issue", user()),
    ]);
    let changes = policy.reload_rules(fresh, &[]);
    assert_eq!(
        changes.added,
        ["ask mcp__github__get_issue (user config /home/u/.config/toolgate/config.toml)"]
    );
    assert_eq!(
        changes.removed,
        ["allow mcp__github__get_issue (user config /home/u/.config/toolgate/config.toml)"]
    );
    assert_eq!(changes.outside_workspace, None);
    let get_issue = policy.decide(&mcp("github", "get_issue"), &json!({}), &ctx(ws));
    assert_eq!(kind(&get_issue), "ask");
    let granted = policy.decide(&mcp("time", "now"), &json!({}), &ctx(ws));
    assert_eq!(kind(&granted), "allow", "{granted:?}");
    // The same rules again (in another order) are no change.
    let same = with_rules(&[
        (RuleList::Ask, "mcp__github__get_issue", user()),
        (RuleList::Deny, "mcp__deploy__trigger", project()),
    ]);
    assert!(policy.reload_rules(same, &[]).is_empty());
}

/// An "always" chosen this session stays through a reload that did not read its file (an
/// untrusted workspace's config); when the file was read, the file decides.
#[test]
fn always_rules_survive_a_reload_that_did_not_read_their_file() {
    let ws = Path::new("/w");
    let file = PathBuf::from("/w/.toolgate/config.toml");
    let mut policy = Policy::default();
    policy
        .apply_always(&AlwaysRule {
            text: "mcp__github__get_issue".into(),
            file: file.clone(),
        })
        .unwrap();
    let changes = policy.reload_rules(Policy::default(), &[]);
    assert!(changes.is_empty(), "{changes:?}");
    let verdict = policy.decide(&mcp("github", "get_issue"), &json!({}), &ctx(ws));
    assert_eq!(kind(&verdict), "allow");
    // Read, and the person deleted it there: it goes.
    let changes = policy.reload_rules(Policy::default(), &[file]);
    assert_eq!(changes.removed.len(), 1, "{changes:?}");
    let verdict = policy.decide(&mcp("github", "get_issue"), &json!({}), &ctx(ws));
    assert_eq!(kind(&verdict), "ask");
}
