//! The mode a call is decided in is the one it runs in (decision 0088): read once when the
//! decision starts, stamped on the outcome, untouched by a Shift+Tab while a question is
//! open; and in plan mode bash cannot leave the sandbox, nor run without it.

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Gate, Gated};
use crate::policy::tests::{builtin, user, with_rules};
use crate::policy::{Decider, RuleList};
use crate::protocol::questions::HostRequest;
use crate::protocol::{AgentEvent, ModeCause, PermissionMode};
use crate::sandbox::{Sandbox, SandboxStatus};
use crate::settings::SandboxSettings;

#[tokio::test]
async fn a_mode_change_while_the_question_is_open_does_not_change_the_calls_mode() {
    let ws = tempfile::tempdir().unwrap();
    // An ask rule makes a read-only command ask, in plan mode too.
    let policy = with_rules(&[(RuleList::Ask, "Bash(cat:*)", user())]);
    let mut gate = Gate::new(policy, ws.path().to_path_buf(), false);
    gate.mode()
        .change(PermissionMode::Plan, ModeCause::Start)
        .unwrap();
    let modes = gate.mode().clone();
    let (events, mut rx) = mpsc::channel(4);
    // The person switches to default mode while the question is shown, then allows.
    let person = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            if let AgentEvent::Request(request) = event {
                modes
                    .change(PermissionMode::Default, ModeCause::Person)
                    .unwrap();
                assert!(matches!(request, HostRequest::ToolCall(_)));
                request.into_open().choose(0, None);
                return;
            }
        }
    });
    let tool = builtin("bash");
    let input = json!({"command": "cat notes.txt"});
    let outcome = gate
        .check(&tool, &input, "call-1", &events, &CancellationToken::new())
        .await;
    person.await.unwrap();
    assert_eq!(outcome.decision, Gated::Run);
    assert_eq!(outcome.decided_in, PermissionMode::Plan);
    assert_eq!(gate.mode().current(), PermissionMode::Default);
    // The next call is decided in the mode now in force.
    let (events, _rx) = mpsc::channel(4);
    let outcome = gate
        .check(
            &tool,
            &json!({"command": "ls"}),
            "call-2",
            &events,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.decided_in, PermissionMode::Default);
}

async fn plan_bash(gate: &mut Gate, input: serde_json::Value) -> super::GateOutcome {
    gate.mode()
        .change(PermissionMode::Plan, ModeCause::Start)
        .unwrap();
    let (events, _rx) = mpsc::channel(4);
    gate.check(
        &builtin("bash"),
        &input,
        "call-1",
        &events,
        &CancellationToken::new(),
    )
    .await
}

#[tokio::test]
async fn plan_mode_refuses_leaving_the_sandbox_and_running_without_it() {
    let ws = tempfile::tempdir().unwrap();
    // Interactive, with a grant to leave the sandbox: still refused, nobody is asked.
    let mut gate = Gate::new(Default::default(), ws.path().to_path_buf(), false);
    gate.grants.grant(super::grants::UNSANDBOXED_GRANT);
    let input = json!({"command": "ls", "unsandboxed": true, "justification": "why not"});
    let outcome = plan_bash(&mut gate, input).await;
    let Gated::Refused(text) = &outcome.decision else {
        panic!("{outcome:?}");
    };
    assert!(
        text.contains("cannot leave the sandbox in plan mode"),
        "{text}"
    );
    let decider = outcome.audit.map(|record| record.decider);
    assert_eq!(
        decider,
        Some(Decider::Mode {
            mode: PermissionMode::Plan
        })
    );

    // A machine without the sandbox: refused in plan mode (not asked to run unconfined),
    // even with the sandbox turned off in the settings.
    for mode in [
        crate::settings::SandboxMode::WorkspaceWrite,
        crate::settings::SandboxMode::Off,
    ] {
        let mut gate = Gate::new(Default::default(), ws.path().to_path_buf(), false);
        gate.set_sandbox(Sandbox::with_status(
            SandboxSettings {
                mode,
                ..SandboxSettings::default()
            },
            SandboxStatus::unavailable("forced by a test"),
        ));
        let outcome = plan_bash(&mut gate, json!({"command": "ls"})).await;
        let Gated::Refused(text) = &outcome.decision else {
            panic!("{outcome:?}");
        };
        assert!(
            text.contains("the sandbox is unavailable here (forced by a test)"),
            "{text}"
        );
    }
}
