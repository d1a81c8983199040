//! Grants that end, decided through the gate with a clock the test moves: used up after
//! their calls, ended after their minutes (checked at the moment of the call), beaten by a
//! deny rule, revoked; each call's record names the grant and what is left.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::clock::{Clock, TestClock};
use super::super::{Gate, GateOutcome, Gated};
use crate::policy::tests::{mcp, user, with_rules};
use crate::policy::{Decider, GrantLeft, GrantLimit, Policy, RuleList};
use crate::pool::PoolTool;

/// A headless gate (an Ask is a denial by `headless`, so a grant that ended shows) with
/// the test's clock.
fn headless_gate(policy: Policy, clock: &Arc<TestClock>) -> (Gate, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let clock: Arc<dyn Clock> = clock.clone();
    let gate = Gate::new(policy, dir.path().to_path_buf(), true).with_clock(clock);
    (gate, dir)
}

async fn call(gate: &mut Gate, tool: &PoolTool, input: &Value) -> GateOutcome {
    let (events, _rx) = mpsc::channel(16);
    gate.check(tool, input, "call-1", &events, &CancellationToken::new())
        .await
}

fn decider(outcome: &GateOutcome) -> Decider {
    outcome.audit.clone().unwrap().decider
}

fn limited(tool: &PoolTool, limit: GrantLimit, left: GrantLeft) -> Decider {
    Decider::LimitedGrant {
        tool: tool.name.clone(),
        limit,
        left,
    }
}

#[tokio::test]
async fn a_grant_for_calls_is_used_up_and_then_the_call_asks_again() {
    let clock = TestClock::new();
    let (mut gate, _dir) = headless_gate(Policy::default(), &clock);
    let tool = mcp("deploy", "trigger");
    let input = json!({"service": "web"});
    // The answer's own call is the first of the three.
    gate.grants.grant_limited(&tool.name, GrantLimit::Calls(3));
    for left in [1, 0] {
        let outcome = call(&mut gate, &tool, &input).await;
        assert_eq!(outcome.decision, Gated::Run);
        assert_eq!(
            decider(&outcome),
            limited(&tool, GrantLimit::Calls(3), GrantLeft::Calls(left))
        );
    }
    let outcome = call(&mut gate, &tool, &input).await;
    assert!(matches!(outcome.decision, Gated::Refused(_)));
    assert_eq!(decider(&outcome).word(), "headless");
    assert!(gate.grants.names().is_empty());
}

#[tokio::test]
async fn a_grant_for_minutes_ends_at_its_time_measured_at_the_call() {
    let clock = TestClock::new();
    let (mut gate, _dir) = headless_gate(Policy::default(), &clock);
    let tool = mcp("deploy", "trigger");
    let input = json!({"service": "web"});
    gate.grants
        .grant_limited(&tool.name, GrantLimit::Minutes(15));
    let outcome = call(&mut gate, &tool, &input).await;
    assert_eq!(
        decider(&outcome),
        limited(&tool, GrantLimit::Minutes(15), GrantLeft::Seconds(900))
    );
    clock.advance(Duration::from_secs(14 * 60 + 59));
    let outcome = call(&mut gate, &tool, &input).await;
    assert_eq!(outcome.decision, Gated::Run);
    assert_eq!(
        decider(&outcome),
        limited(&tool, GrantLimit::Minutes(15), GrantLeft::Seconds(1))
    );
    // Still listed until a call or the list looks at it; then it is gone.
    clock.advance(Duration::from_secs(1));
    let outcome = call(&mut gate, &tool, &input).await;
    assert!(matches!(outcome.decision, Gated::Refused(_)));
    assert_eq!(decider(&outcome).word(), "headless");
    assert!(gate.grants.names().is_empty());
}

#[tokio::test]
async fn a_deny_rule_beats_a_limited_grant_and_revoking_ends_it() {
    let clock = TestClock::new();
    let tool = mcp("deploy", "trigger");
    let input = json!({"service": "web"});
    let denying = with_rules(&[(RuleList::Deny, "mcp__deploy__trigger", user())]);
    let (mut gate, _dir) = headless_gate(denying, &clock);
    gate.grants.grant_limited(&tool.name, GrantLimit::Calls(5));
    let outcome = call(&mut gate, &tool, &input).await;
    assert!(matches!(outcome.decision, Gated::Refused(_)));
    assert_eq!(decider(&outcome).word(), "rule");

    let (mut gate, _dir) = headless_gate(Policy::default(), &clock);
    gate.grants.grant_limited(&tool.name, GrantLimit::Calls(5));
    assert_eq!(gate.grants.names(), vec![tool.name.clone()]);
    assert_eq!(
        gate.revoke(&tool.name),
        "Session grant for mcp__deploy__trigger revoked."
    );
    let outcome = call(&mut gate, &tool, &input).await;
    assert_eq!(decider(&outcome).word(), "headless");
}

#[test]
fn a_session_grant_is_not_spent() {
    let clock = TestClock::new();
    let grants = super::super::Grants::with_clock(clock.clone());
    grants.grant("bash");
    grants.grant_limited("mcp__x__y", GrantLimit::Calls(1));
    // One call in all: the answer's own; nothing is left to list.
    assert_eq!(grants.names(), vec!["bash".to_string()]);
    assert_eq!(grants.spend("bash"), super::super::Spent::Unlimited);
    assert_eq!(grants.spend("mcp__x__y"), super::super::Spent::Gone);
}
