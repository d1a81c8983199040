//! What each permission mode changes, and that rules keep their meaning in every mode.

use super::*;
use crate::protocol::PermissionMode;

fn in_mode(mode: PermissionMode) -> PolicyContext<'static> {
    PolicyContext::new(Path::new("/w")).with_mode(mode)
}

fn write(policy: &Policy, mode: PermissionMode, path: &str) -> Verdict {
    let target = resolved_target(path, Some(path), &format!("/w/{path}"));
    policy.decide(
        &builtin("write_file"),
        &json!({"path": path, "content": "x"}),
        &in_mode(mode).with_target(Some(target)),
    )
}

#[test]
fn plan_refuses_changes_tells_the_model_and_still_reads() {
    let p = Policy::default();
    let plan = in_mode(PermissionMode::Plan);
    let refused = write(&p, PermissionMode::Plan, "a.txt");
    assert_eq!(refused.source, RuleSource::Mode(PermissionMode::Plan));
    let Decision::Deny { why } = &refused.decision else {
        panic!("{refused:?}")
    };
    assert!(
        why.contains("plan mode") && why.contains("exit_plan_mode"),
        "{why}"
    );
    assert_eq!(kind(&bash_in(&p, "echo hi > notes.txt", &plan)), "deny");
    assert_eq!(
        kind(&bash_in(&p, "ls -la && git status | grep x", &plan)),
        "allow"
    );
    assert_eq!(kind(&p.decide(&mcp("x", "y"), &json!({}), &plan)), "deny");
    // An allow rule lets an MCP tool run in plan mode; it does not make a write read-only.
    let allowed = with_rules(&[
        (RuleList::Allow, "mcp__x__y", user()),
        (RuleList::Allow, "write_file", user()),
    ]);
    assert_eq!(
        kind(&allowed.decide(&mcp("x", "y"), &json!({}), &plan)),
        "allow"
    );
    assert_eq!(
        kind(&write(&allowed, PermissionMode::Plan, "a.txt")),
        "deny"
    );
}

#[test]
fn ask_mode_asks_for_writes_and_bash_unless_an_allow_rule_covers_them() {
    let p = Policy::default();
    let ask = in_mode(PermissionMode::Ask);
    assert_eq!(kind(&write(&p, PermissionMode::Ask, "a.txt")), "ask");
    assert_eq!(kind(&bash_in(&p, "ls", &ask)), "ask");
    let allowed = with_rules(&[
        (RuleList::Allow, "write_file", RuleSource::Flag),
        (RuleList::Allow, "Bash(git:*)", user()),
    ]);
    assert_eq!(
        kind(&write(&allowed, PermissionMode::Ask, "a.txt")),
        "allow"
    );
    assert_eq!(kind(&bash_in(&allowed, "git status", &ask)), "allow");
    // Every command of the line must be covered.
    assert_eq!(kind(&bash_in(&allowed, "git status && ls", &ask)), "ask");
}

#[test]
fn accept_edits_runs_file_edits_inside_the_workspace_only() {
    let p = Policy::default();
    let edits = in_mode(PermissionMode::AcceptEdits);
    let v = bash_in(&p, "rm -f build/x.o && mkdir -p out", &edits);
    assert_eq!(v.source, RuleSource::Mode(PermissionMode::AcceptEdits));
    assert_eq!(kind(&v), "allow");
    assert_eq!(kind(&bash_in(&p, "rm ../x", &edits)), "ask");
    assert_eq!(
        kind(&bash_in(&p, "rm -f build/x.o", &ctx(Path::new("/w")))),
        "ask"
    );
}

#[test]
fn auto_runs_what_no_rule_stops_and_rules_keep_their_meaning() {
    let auto = in_mode(PermissionMode::Auto);
    let p = Policy::default();
    let v = p.decide(&mcp("x", "y"), &json!({}), &auto);
    assert_eq!(
        (kind(&v), v.source),
        ("allow", RuleSource::Mode(PermissionMode::Auto))
    );
    assert_eq!(kind(&bash_in(&p, "rm -f x", &auto)), "allow");
    assert_eq!(kind(&bash_in(&p, "sudo ls", &auto)), "deny");
    // The shipped ask rule still asks; a deny rule denies in every mode.
    assert_eq!(
        kind(&p.decide(&mcp("deploy", "trigger"), &json!({}), &auto)),
        "ask"
    );
    let ruled = with_rules(&[
        (RuleList::Deny, "mcp__x__y", user()),
        (RuleList::Ask, "Bash(rm:*)", user()),
    ]);
    for mode in PermissionMode::ALL {
        let c = in_mode(mode);
        assert_eq!(kind(&ruled.decide(&mcp("x", "y"), &json!({}), &c)), "deny");
        let rm = bash_in(&ruled, "rm -f x", &c);
        let expected = if mode == PermissionMode::Plan {
            "deny"
        } else {
            "ask"
        };
        assert_eq!(kind(&rm), expected, "{mode}");
    }
    // Outside the workspace still asks: there the sandbox does not reach.
    let target = resolved_target("/etc/x", None, "/etc/x");
    let outside = p.decide(
        &builtin("write_file"),
        &json!({"path": "/etc/x", "content": "x"}),
        &auto.with_target(Some(target)),
    );
    assert_eq!(kind(&outside), "ask");
}
