//! The relay of a question to the front end: answered, cancelled, expired, or dismissed
//! when the front end is gone.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::protocol::questions::{Origin, Reply, Request, ToolCall};
use crate::protocol::{Decision, PersonAnswer, PoolTool, RuleSource, Verdict};

fn tool_call(name: &str) -> ToolCall {
    ToolCall {
        call_id: "c1".into(),
        tool: PoolTool {
            name: name.into(),
            origin: crate::protocol::ToolOrigin::Builtin { connector: false },
            description: String::new(),
            input_schema: std::sync::Arc::new(json!({"type": "object"})),
            claims: Default::default(),
            shortened: false,
        },
        input: json!({"command": "rm -rf build"}),
        why: "`rm -rf build` is destructive".into(),
        verdict: Verdict {
            decision: Decision::Ask {
                why: "`rm -rf build` is destructive".into(),
            },
            rule: "bash guard: destructive (rm)".into(),
            source: RuleSource::Default,
        },
        preview: None,
    }
}

fn origin() -> Origin {
    Origin::Tool {
        tool: "bash".into(),
        server: None,
    }
}

#[tokio::test]
async fn ask_waits_for_the_answer_the_cancel_or_the_deadline() {
    let (events, mut rx) = tokio::sync::mpsc::channel(4);
    // Answered by the front end.
    let (request, answer) = Request::new(origin(), tool_call("bash"), Instant::now(), None);
    let front_end = tokio::spawn(async move {
        if let Some(crate::protocol::AgentEvent::Request(request)) = rx.recv().await {
            request.into_open().choose(0, None);
        }
        rx
    });
    let reply = crate::gate::ask(&events, request, answer, None).await;
    assert_eq!(reply, Some(Reply::Person(PersonAnswer::AllowOnce)));
    let mut rx = front_end.await.unwrap();

    // Cancelled: withdrawn, the front end's copy sees the channel closed.
    let cancel = tokio_util::sync::CancellationToken::new();
    let (request, answer) = Request::new(origin(), tool_call("bash"), Instant::now(), None);
    let asking = crate::gate::ask(&events, request, answer, Some(&cancel));
    tokio::pin!(asking);
    let shown = tokio::select! {
        _ = &mut asking => panic!("answered without anyone answering"),
        ev = rx.recv() => ev,
    };
    cancel.cancel();
    assert_eq!(asking.await, None);
    let Some(crate::protocol::AgentEvent::Request(shown)) = shown else {
        panic!("no request reached the front end");
    };
    assert!(shown.into_open().is_withdrawn());

    // A deadline nobody honours: the asker applies the safe default itself.
    let now = Instant::now();
    let (request, answer) = Request::new(
        origin(),
        tool_call("bash"),
        now,
        Some(now + Duration::from_millis(50)),
    );
    let reply = crate::gate::ask(&events, request, answer, None).await;
    assert_eq!(reply, Some(Reply::Expired(PersonAnswer::Deny)));
    drop(rx);

    // The front end is gone: dismissed with the safe default, no hang.
    let (request, answer) = Request::new(origin(), tool_call("bash"), Instant::now(), None);
    let reply = crate::gate::ask(&events, request, answer, None).await;
    assert_eq!(reply, Some(Reply::Dismissed(PersonAnswer::Deny)));
}
