//! The policy's decisions, table by table. Tests that need the file system (where a path
//! resolves) are the gate's (`crate::gate::tests`); they share these helpers.

use super::*;
use crate::builtin::BuiltinId;
use crate::pool::{PoolTool, ToolClaims, ToolOrigin};
use serde_json::json;
use std::collections::BTreeSet;

mod bash;
mod bash_grammar;
mod modes;

pub(crate) fn mcp(server: &str, tool: &str) -> PoolTool {
    let (name, shortened) = crate::pool::model_facing_name(server, tool);
    PoolTool {
        name,
        origin: ToolOrigin::Mcp {
            server: server.into(),
            tool: tool.into(),
        },
        description: String::new(),
        input_schema: json!({"type": "object"}).into(),
        claims: ToolClaims::default(),
        shortened,
    }
}

pub(crate) fn builtin(name: &str) -> PoolTool {
    let kind = BuiltinId::from_name(name).unwrap();
    PoolTool::builtin(kind, "", json!({"type": "object"}))
}

pub(crate) fn with_rules(rules: &[(RuleList, &str, RuleSource)]) -> Policy {
    let mut p = Policy::default();
    p.add_rules(rules.iter().map(|(list, text, source)| PolicyRule {
        rule: Rule::parse(text).unwrap(),
        list: *list,
        source: source.clone(),
    }));
    p
}

pub(crate) fn user() -> RuleSource {
    RuleSource::UserConfig(PathBuf::from("/home/u/.config/toolgate/config.toml"))
}

pub(crate) fn project() -> RuleSource {
    RuleSource::ProjectConfig(PathBuf::from("/w/.toolgate/config.toml"))
}

pub(crate) fn ctx(ws: &Path) -> PolicyContext<'_> {
    PolicyContext::new(ws)
}

/// Session grants by name, as the gate's store hands them to the policy.
pub(crate) fn grants(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

pub(crate) fn kind(v: &Verdict) -> &'static str {
    match v.decision {
        Decision::Allow => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { .. } => "deny",
    }
}

pub(crate) fn bash(policy: &Policy, command: &str) -> Verdict {
    bash_in(policy, command, &ctx(Path::new("/tmp")))
}

pub(crate) fn bash_in(policy: &Policy, command: &str, ctx: &PolicyContext<'_>) -> Verdict {
    policy.decide(&builtin("bash"), &json!({ "command": command }), ctx)
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

#[test]
fn session_grants() {
    // The store itself (grant, list, revoke) is the gate's: `gate::grants`.
    let p = Policy::default();
    let trigger = mcp("deploy", "trigger");
    let mut granted = grants(&["mcp__deploy__trigger", "bash"]);
    let c = ctx(Path::new("/tmp")).with_grants(&granted);
    let v = p.decide(&trigger, &json!({}), &c);
    assert_eq!(
        (kind(&v), v.source.clone()),
        ("allow", RuleSource::SessionGrant)
    );
    assert_eq!(kind(&bash_in(&p, "rm x", &c)), "allow");
    // A grant never beats a deny rule or the deny list.
    assert_eq!(kind(&bash_in(&p, "sudo rm x", &c)), "deny");
    let denied = with_rules(&[(RuleList::Deny, "mcp__deploy__trigger", user())]);
    assert_eq!(kind(&denied.decide(&trigger, &json!({}), &c)), "deny");
    granted.remove("mcp__deploy__trigger");
    let c = ctx(Path::new("/tmp")).with_grants(&granted);
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

/// What the gate would hand over after resolving `requested`.
fn resolved_target(requested: &str, relative: Option<&str>, absolute: &str) -> ResolvedTarget {
    ResolvedTarget {
        requested: requested.into(),
        resolved: Resolved {
            absolute: PathBuf::from(absolute),
            relative: relative.map(str::to_string),
        },
    }
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
    let target = |relative, absolute| resolved_target("innocent.txt", relative, absolute);
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
    let other = resolved_target("b.txt", Some("b.txt"), "/nonexistent/ws/b.txt");
    for c in [ctx(ws), ctx(ws).with_target(Some(other))] {
        let v = p.decide(&write, &input, &c);
        assert_eq!(
            (kind(&v), v.rule.as_str()),
            ("ask", "workspace guard: unresolved path")
        );
        assert!(always_rule(&p, &write, &input, &c).is_err());
    }
    // A grant does not lift it; a deny rule for the whole tool still denies.
    let granted = grants(&["write_file"]);
    let with_grant = ctx(ws).with_grants(&granted);
    assert_eq!(kind(&p.decide(&write, &input, &with_grant)), "ask");
    let denied = with_rules(&[(RuleList::Deny, "write_file", user())]);
    assert_eq!(kind(&denied.decide(&write, &input, &ctx(ws))), "deny");
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
    // Grants are the gate's: a reload of the policy does not reach them.
    let granted_now = grants(&["mcp__time__now"]);
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
    let granted = policy.decide(
        &mcp("time", "now"),
        &json!({}),
        &ctx(ws).with_grants(&granted_now),
    );
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
