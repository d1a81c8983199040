use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::PoolTool;
use crate::{Decision, PersonAnswer, RuleSource, Verdict};

fn tool_call(name: &str) -> ToolCall {
    ToolCall {
        call_id: "c1".into(),
        tool: PoolTool {
            name: name.into(),
            origin: crate::ToolOrigin::Builtin { connector: false },
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

#[test]
fn choosing_sends_the_persons_answer_on_the_requests_own_channel() {
    let (request, mut rx) = Request::new(origin(), tool_call("bash"), Instant::now(), None);
    let open: Box<dyn Open> = HostRequest::from(request).into_open();
    assert_eq!(open.kind_name(), "tool call");
    let choices = open.choices();
    let keys: Vec<char> = choices.iter().map(|c| c.key).collect();
    assert_eq!(keys, ['y', 'a', 's', 'n', 'd', 'm', 'c']);
    assert_eq!(choices[5].label, "Allow 15 min");
    assert_eq!(choices[6].label, "Allow next 5 calls");
    let (request, mut limited_rx) = Request::new(origin(), tool_call("bash"), Instant::now(), None);
    let limited = HostRequest::from(request).into_open().choose(6, None);
    assert_eq!(limited.outcome, "bash allowed for the next 5 calls");
    assert_eq!(
        limited_rx.try_recv().unwrap(),
        Reply::Person(PersonAnswer::AllowLimited(crate::GrantLimit::Calls(5)))
    );
    assert!(choices.iter().filter(|c| c.safe).count() == 1 && choices[3].safe);
    assert!(choices[4].asks_note);
    let closed = open.choose(4, Some("  use make clean ".into()));
    assert!(closed.delivered);
    assert_eq!(closed.outcome, "bash denied: use make clean");
    assert_eq!(
        rx.try_recv().unwrap(),
        Reply::Person(PersonAnswer::DenyWithNote("use make clean".into()))
    );
}

#[test]
fn expiry_and_dismissal_give_the_safe_default_and_say_which() {
    let (request, mut rx) = Request::new(
        Origin::Project {
            server: "tools".into(),
        },
        ProjectServer {
            server: "tools".into(),
            command_line: "npx tools".into(),
            why: "defined by this project".into(),
        },
        Instant::now(),
        Some(Instant::now()),
    );
    let closed = HostRequest::from(request).into_open().expire();
    assert_eq!(closed.outcome, "project server 'tools' not started");
    assert_eq!(
        rx.try_recv().unwrap(),
        Reply::Expired(ProjectServerAnswer::DontStart)
    );

    let (request, mut rx) = Request::new(
        Origin::Console {
            folder: "/w".into(),
        },
        WorkspaceTrust {
            folder: "/w".into(),
            files: vec!["/w/.mcp.json".into()],
        },
        Instant::now(),
        None,
    );
    let closed = HostRequest::from(request).dismiss();
    assert!(closed.outcome.contains("not trusted"), "{}", closed.outcome);
    assert_eq!(rx.try_recv().unwrap(), Reply::Dismissed(TrustAnswer::No));
}

#[test]
fn a_request_whose_asker_stopped_waiting_is_withdrawn() {
    let (request, rx) = Request::new(origin(), tool_call("bash"), Instant::now(), None);
    let open = HostRequest::from(request).into_open();
    assert!(!open.is_withdrawn());
    drop(rx);
    assert!(open.is_withdrawn());
    assert!(!open.choose(0, None).delivered);
}

#[test]
fn no_kind_uses_a_reserved_key_and_every_kind_has_one_safe_choice() {
    let kinds: Vec<Vec<(char, bool)>> = vec![
        tool_call("bash")
            .choices()
            .iter()
            .map(|c| (c.key, c.safe))
            .collect(),
        WorkspaceTrust {
            folder: "/w".into(),
            files: vec![],
        }
        .choices()
        .iter()
        .map(|c| (c.key, c.safe))
        .collect(),
        ProjectServer {
            server: "s".into(),
            command_line: "x".into(),
            why: "y".into(),
        }
        .choices()
        .iter()
        .map(|c| (c.key, c.safe))
        .collect(),
        Escalation {
            call_id: "c".into(),
            command: "curl example.com".into(),
            workspace: "/w".into(),
            reason: EscalationReason::Requested {
                justification: "needs the network".into(),
            },
            policy_note: None,
        }
        .choices()
        .iter()
        .map(|c| (c.key, c.safe))
        .collect(),
        sign_in(false)
            .choices()
            .iter()
            .map(|c| (c.key, c.safe))
            .collect(),
        elicitation_form()
            .choices()
            .iter()
            .map(|c| (c.key, c.safe))
            .collect(),
    ];
    for choices in kinds {
        assert_eq!(choices.iter().filter(|(_, safe)| *safe).count(), 1);
        assert!(choices.iter().all(|(k, _)| !RESERVED_KEYS.contains(k)));
    }
}

#[test]
fn tool_call_card_says_who_asks_what_happens_and_what_the_server_claims() {
    let mut call = tool_call("mcp__deploy__trigger");
    call.tool.origin = crate::ToolOrigin::Mcp {
        server: "deploy".into(),
        tool: "trigger".into(),
    };
    call.input = json!({"env": "prod"});
    let card = call.card();
    assert_eq!(card.title, "Permission required");
    assert_eq!(card.asker, "The agent wants to call mcp__deploy__trigger");
    assert!(
        card.effect
            .contains("MCP server 'deploy' runs its tool 'trigger'")
    );
    assert!(
        card.facts
            .iter()
            .any(|f| f.label == "server claims (not verified)")
    );
    assert!(card.details.contains("\"env\": \"prod\""));
}

#[test]
fn durations_read_short() {
    assert_eq!(short_duration(Duration::from_secs(42)), "42s");
    assert_eq!(short_duration(Duration::from_secs(185)), "3m05s");
    assert_eq!(short_duration(Duration::from_secs(3720)), "1h02m");
}

fn sign_in(step_up: bool) -> SignIn {
    SignIn {
        server: "linear".into(),
        url: "https://mcp.linear.app/mcp".into(),
        authorization_server: "https://auth.linear.app".into(),
        scopes: vec!["read".into(), "write".into()],
        step_up,
    }
}

#[test]
fn sign_in_card_names_the_authorization_server_and_the_scopes() {
    let card = sign_in(false).card();
    assert_eq!(card.title, "Sign in to an MCP server?");
    assert_eq!(card.asker, "MCP server 'linear' asks you to sign in");
    assert!(
        card.effect
            .contains("opens your browser at https://auth.linear.app")
    );
    assert_eq!(
        card.fact("authorization server").as_deref(),
        Some("https://auth.linear.app")
    );
    assert_eq!(card.fact("scopes").as_deref(), Some("read write"));
    assert_eq!(sign_in(true).card().title, "Allow more access?");

    let (request, mut rx) = Request::new(
        Origin::Server {
            server: "linear".into(),
        },
        sign_in(false),
        Instant::now(),
        None,
    );
    let closed = HostRequest::from(request).dismiss();
    assert_eq!(closed.kind, "sign-in");
    assert_eq!(closed.outcome, "'linear' not signed in");
    assert_eq!(
        rx.try_recv().unwrap(),
        Reply::Dismissed(SignInAnswer::NotNow),
        "nobody to ask: nothing signs in"
    );
}

impl Card {
    /// The value of the fact labelled `label`, if the card has one.
    pub(super) fn fact(&self, label: &str) -> Option<String> {
        self.facts
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.value.clone())
    }
}

/// A request from the server 'deploy' asking for [`elicitation_form`].
fn deploy_form_request() -> (
    Request<Elicitation>,
    oneshot::Receiver<Reply<ElicitationAnswer>>,
) {
    Request::new(
        Origin::Server {
            server: "deploy".into(),
        },
        elicitation_form(),
        Instant::now(),
        None,
    )
}

fn elicitation_form() -> Elicitation {
    Elicitation {
        server: "deploy".into(),
        message: "Which environment?".into(),
        mode: ElicitationMode::Form(
            crate::form_from_schema(&json!({"type": "object", "properties": {
                "env": {"type": "string", "enum": ["staging", "prod"], "default": "staging"}}}))
            .unwrap(),
        ),
    }
}

#[test]
fn a_form_choice_answers_only_with_the_forms_content() {
    let (request, mut rx) = deploy_form_request();
    let open: Box<dyn Open> = Box::new(request);
    let form = open.form().unwrap();
    assert_eq!(form.fields[0].shown(), "staging", "the default is entered");
    let submit = open.choices().iter().position(|c| c.submits_form).unwrap();
    // Without the form's content nothing is sent: the safe answer (decline) instead.
    let closed = open.choose(submit, None);
    assert_eq!(closed.outcome, "declined the request of 'deploy'");
    assert_eq!(
        rx.try_recv().unwrap(),
        Reply::Person(ElicitationAnswer::Decline)
    );

    let (request, mut rx) = deploy_form_request();
    let open: Box<dyn Open> = Box::new(request);
    let content = open.form().unwrap().content().unwrap();
    let closed = open.submit(submit, content.clone());
    assert_eq!(closed.outcome, "sent 1 field(s) to 'deploy'");
    assert_eq!(
        rx.try_recv().unwrap(),
        Reply::Person(ElicitationAnswer::Accept(content))
    );
}

#[test]
fn the_elicitation_card_says_the_server_asks_and_shows_a_urls_domain() {
    let form = elicitation_form();
    let card = form.card();
    assert_eq!(
        card.asker,
        "MCP server 'deploy' asks you for input (the server asks, not the model)"
    );
    assert_eq!(card.details, "Which environment?");
    let url = Elicitation {
        server: "pay".into(),
        message: "Pay here".into(),
        mode: ElicitationMode::Url {
            url: "https://checkout.example.com/s/1".into(),
            domain: "checkout.example.com".into(),
        },
    };
    let card = url.card();
    assert!(
        card.facts
            .iter()
            .any(|f| f.label == "domain" && f.value == "checkout.example.com")
    );
    assert!(
        card.facts
            .iter()
            .any(|f| f.label == "url" && f.value == "https://checkout.example.com/s/1")
    );
    assert_eq!(url.safe_default(), ElicitationAnswer::Decline);
}
