//! Host requests: every question the agent side needs a person to answer, as one typed
//! queue item each. A request carries its kind's payload, who asked, when, an optional
//! deadline, and its own `oneshot` reply of the kind's answer type.
//!
//! The agent (or the console launcher) sends a [`HostRequest`] to the front end; the console
//! keeps them in its inbox and shows them through one frame ([`Card`] + [`Choice`]s); the
//! headless front end answers each with its safe default. Whatever happens to a request —
//! answered, expired, withdrawn because the turn was cancelled, dropped because the front
//! end went away — the asker gets an answer or sees the reply channel close, never a hang.
//!
//! Adding a request kind: a file in this folder with the payload type implementing
//! [`Kind`] (card, choices, safe default, outcome line), and one line in the
//! `host_requests!` list below. See docs/ARCHITECTURE.md ("Adding a request kind").

mod changed_definition;
mod elicitation;
mod escalation;
mod network;
mod plan_review;
mod preview;
mod project_hooks;
mod project_server;
mod restore_files;
mod sampling;
mod sign_in;
mod tool_call;
mod workspace_trust;

pub use changed_definition::{ChangedDefinition, DefinitionNews};
pub use elicitation::{Elicitation, ElicitationAnswer, ElicitationMode};
pub use escalation::{Escalation, EscalationReason};
pub use network::Network;
pub use plan_review::{PlanAnswer, PlanReview};
pub use preview::{DiffKind, DiffLine, FileDiff, MAX_DIFF_LINES, Preview};
pub use project_hooks::{ProjectHooks, ProjectHooksAnswer};
pub use project_server::{ProjectServer, ProjectServerAnswer};
pub use restore_files::{RestoreAnswer, RestoreFiles};
pub use sampling::Sampling;
pub use sign_in::{SignIn, SignInAnswer};
pub use tool_call::ToolCall;
pub use workspace_trust::{TrustAnswer, WorkspaceTrust};

use crate::ids::ServerName;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::form;

/// Unique per process; lets a front end refer to one request among many.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(u64);

impl RequestId {
    fn next() -> RequestId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        RequestId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Who asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The agent, about to call a tool (a built-in, or one of an MCP server's).
    Tool {
        tool: String,
        server: Option<String>,
    },
    /// An MCP server asking on its own account (elicitation, sampling, sign-in).
    Server { server: ServerName },
    /// The project's own configuration (a server its `.mcp.json` defines).
    Project { server: ServerName },
    /// The console itself, before the agent starts.
    Console { folder: PathBuf },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Tool {
                tool,
                server: Some(server),
            } => write!(f, "{tool} (MCP server '{server}')"),
            Origin::Tool { tool, server: None } => write!(f, "{tool} (built-in)"),
            Origin::Server { server } => write!(f, "MCP server '{server}'"),
            Origin::Project { server } => write!(f, "project server '{server}'"),
            Origin::Console { folder } => write!(f, "toolgate ({})", folder.display()),
        }
    }
}

/// What every request has besides its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub id: RequestId,
    pub origin: Origin,
    pub created: Instant,
    /// When it is answered with its safe default if nobody answered before.
    pub deadline: Option<Instant>,
}

impl Meta {
    pub fn new(origin: Origin, created: Instant, deadline: Option<Instant>) -> Meta {
        Meta {
            id: RequestId::next(),
            origin,
            created,
            deadline,
        }
    }

    /// Time left before the deadline (zero once it passed); None without a deadline.
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(now))
    }
}

/// How a line of a card is meant to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// Why it asks; risks.
    Warn,
    /// Provenance, rules: secondary.
    Dim,
    /// What a server claims about itself (never verified).
    Claim,
}

/// A labelled line of a card ("why: …", "rule: …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub label: &'static str,
    pub value: String,
    pub tone: Tone,
}

impl Fact {
    pub fn new(label: &'static str, value: impl Into<String>, tone: Tone) -> Fact {
        Fact {
            label,
            value: value.into(),
            tone,
        }
    }
}

/// What the inbox modal shows for a request; every kind renders through this one frame.
/// The texts come from tools, servers and models: front ends clean them before display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The modal's title ("Permission required").
    pub title: String,
    /// Who asks, in a sentence ("The agent wants to call mcp__deploy__trigger").
    pub asker: String,
    /// What exactly will happen if the person agrees.
    pub effect: String,
    pub facts: Vec<Fact>,
    /// Heading of the scrollable details ("arguments").
    pub details_title: String,
    /// Pretty-printed details (arguments, command line, files).
    pub details: String,
}

/// What picking a choice does.
#[derive(Debug, Clone)]
pub enum Then<A> {
    Answer(A),
    /// Ask for a line of text first (an empty one is allowed), then answer with it.
    AskNote(fn(String) -> A),
    /// Send the kind's form (see [`Kind::form`]) once it has no problems left, and answer
    /// with its content.
    Form(fn(serde_json::Map<String, serde_json::Value>) -> A),
}

/// One answer the person can give, with its key.
#[derive(Debug, Clone)]
pub struct Choice<A> {
    pub key: char,
    pub label: String,
    pub then: Then<A>,
    /// The safe answer: the highlight starts here and Esc picks it.
    pub safe: bool,
}

impl<A> Choice<A> {
    pub fn new(key: char, label: impl Into<String>, then: Then<A>) -> Choice<A> {
        Choice {
            key,
            label: label.into(),
            then,
            safe: false,
        }
    }

    pub fn safe(mut self) -> Choice<A> {
        self.safe = true;
        self
    }

    /// The two choices of a yes/no question: `y` does it, `n` (the safe one) does not.
    pub fn yes_or_no(yes: impl Into<String>, on_yes: A, no: &str, on_no: A) -> Vec<Choice<A>> {
        vec![
            Choice::new('y', yes, Then::Answer(on_yes)),
            Choice::new('n', no, Then::Answer(on_no)).safe(),
        ]
    }
}

/// Keys the inbox keeps for itself; no kind may use them as a choice key.
/// `v` toggles a preview (diff, highlighted command) and the raw arguments.
pub const RESERVED_KEYS: &[char] = &['l', 'v'];

/// A kind of request: its payload type, with everything the inbox needs to show and
/// answer it.
pub trait Kind: fmt::Debug + Send + 'static {
    type Answer: fmt::Debug + Clone + Send + 'static;
    /// How lists name the kind ("tool call").
    const NAME: &'static str;

    fn card(&self) -> Card;
    /// In display order; exactly one should be `safe`.
    fn choices(&self) -> Vec<Choice<Self::Answer>>;
    /// What the request gets when nobody answers in time (deny, decline, don't start).
    fn safe_default(&self) -> Self::Answer;
    /// One line for the transcript saying how the request ended.
    fn outcome_line(&self, answer: &Self::Answer) -> String;
    /// The form the person fills in before a [`Then::Form`] choice; most kinds have none.
    fn form(&self) -> Option<form::Form> {
        None
    }
    /// What to show in place of the raw details (a diff, a command); most kinds have none.
    fn preview(&self) -> Option<Preview> {
        None
    }
    /// Whether the card's details are markdown (a plan) rather than preformatted text.
    fn markdown_details(&self) -> bool {
        false
    }
}

/// How an answer came about: the asker records who decided from this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply<A> {
    /// The person chose it.
    Person(A),
    /// The deadline passed; this is the kind's safe default.
    Expired(A),
    /// The front end could not ask (headless, closing); this is the safe default.
    Dismissed(A),
}

impl<A> Reply<A> {
    pub fn answer(&self) -> &A {
        match self {
            Reply::Person(a) | Reply::Expired(a) | Reply::Dismissed(a) => a,
        }
    }

    pub fn into_answer(self) -> A {
        match self {
            Reply::Person(a) | Reply::Expired(a) | Reply::Dismissed(a) => a,
        }
    }
}

/// A request of one kind, with its reply channel.
#[derive(Debug)]
pub struct Request<K: Kind> {
    pub meta: Meta,
    pub payload: K,
    reply: oneshot::Sender<Reply<K::Answer>>,
}

impl<K: Kind> Request<K> {
    /// A new request and the receiver its answer will arrive on.
    pub fn new(
        origin: Origin,
        payload: K,
        created: Instant,
        deadline: Option<Instant>,
    ) -> (Request<K>, oneshot::Receiver<Reply<K::Answer>>) {
        let (reply, answer) = oneshot::channel();
        let request = Request {
            meta: Meta::new(origin, created, deadline),
            payload,
            reply,
        };
        (request, answer)
    }

    /// The person's answer. False when the asker stopped waiting (turn cancelled).
    pub fn answer(self, answer: K::Answer) -> bool {
        self.reply.send(Reply::Person(answer)).is_ok()
    }

    /// The asker no longer waits for an answer.
    pub fn is_withdrawn(&self) -> bool {
        self.reply.is_closed()
    }
}

/// A choice as a front end shows it, without the kind's answer type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceView {
    pub key: char,
    pub label: String,
    pub asks_note: bool,
    /// Picking it sends the form ([`Open::submit`]).
    pub submits_form: bool,
    pub safe: bool,
}

/// How a request left the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub id: RequestId,
    pub kind: &'static str,
    /// The kind's line about the answer ("allowed mcp__deploy__trigger once").
    pub outcome: String,
    /// False when the asker had stopped waiting.
    pub delivered: bool,
}

/// A request of any kind, as a front end's inbox holds it.
pub trait Open: fmt::Debug + Send {
    fn meta(&self) -> &Meta;
    fn kind_name(&self) -> &'static str;
    fn card(&self) -> Card;
    fn choices(&self) -> Vec<ChoiceView>;
    /// Answers with the choice at `index` (its note, if it asks for one). An index out of
    /// range answers with the safe default.
    fn choose(self: Box<Self>, index: usize, note: Option<String>) -> Closed;
    /// The form to fill in, with its defaults entered; None for kinds without one.
    fn form(&self) -> Option<form::Form>;
    /// The kind's preview of the details, if it has one.
    fn preview(&self) -> Option<Preview>;
    /// Answers with the form choice at `index` and the form's content. Another choice
    /// answers as [`Open::choose`] does.
    fn submit(
        self: Box<Self>,
        index: usize,
        content: serde_json::Map<String, serde_json::Value>,
    ) -> Closed;
    /// Answers with the safe default because the deadline passed.
    fn expire(self: Box<Self>) -> Closed;
    /// Answers with the safe default because the front end cannot ask (headless, closing).
    fn dismiss(self: Box<Self>) -> Closed;
    fn is_withdrawn(&self) -> bool;
    /// See [`Kind::markdown_details`].
    fn markdown_details(&self) -> bool;
}

impl<K: Kind> Open for Request<K> {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn kind_name(&self) -> &'static str {
        K::NAME
    }

    fn card(&self) -> Card {
        self.payload.card()
    }

    fn choices(&self) -> Vec<ChoiceView> {
        self.payload
            .choices()
            .into_iter()
            .map(|c| ChoiceView {
                key: c.key,
                label: c.label,
                asks_note: matches!(c.then, Then::AskNote(_)),
                submits_form: matches!(c.then, Then::Form(_)),
                safe: c.safe,
            })
            .collect()
    }

    fn choose(self: Box<Self>, index: usize, note: Option<String>) -> Closed {
        let chosen = self.payload.choices().into_iter().nth(index);
        let answer = match chosen.map(|c| c.then) {
            Some(Then::Answer(answer)) => answer,
            Some(Then::AskNote(with_note)) => with_note(note.unwrap_or_default()),
            // A form choice needs the form's content: without it, nothing is sent.
            Some(Then::Form(_)) | None => self.payload.safe_default(),
        };
        self.close(Reply::Person(answer))
    }

    fn form(&self) -> Option<form::Form> {
        self.payload.form()
    }

    fn preview(&self) -> Option<Preview> {
        self.payload.preview()
    }

    fn submit(
        self: Box<Self>,
        index: usize,
        content: serde_json::Map<String, serde_json::Value>,
    ) -> Closed {
        match self
            .payload
            .choices()
            .into_iter()
            .nth(index)
            .map(|c| c.then)
        {
            Some(Then::Form(with_content)) => {
                let answer = with_content(content);
                self.close(Reply::Person(answer))
            }
            _ => self.choose(index, None),
        }
    }

    fn expire(self: Box<Self>) -> Closed {
        let answer = self.payload.safe_default();
        self.close(Reply::Expired(answer))
    }

    fn dismiss(self: Box<Self>) -> Closed {
        let answer = self.payload.safe_default();
        self.close(Reply::Dismissed(answer))
    }

    fn is_withdrawn(&self) -> bool {
        Request::is_withdrawn(self)
    }

    fn markdown_details(&self) -> bool {
        self.payload.markdown_details()
    }
}

impl<K: Kind> Request<K> {
    fn close(self, reply: Reply<K::Answer>) -> Closed {
        let outcome = self.payload.outcome_line(reply.answer());
        Closed {
            id: self.meta.id,
            kind: K::NAME,
            outcome,
            delivered: self.reply.send(reply).is_ok(),
        }
    }
}

/// Declares [`HostRequest`] from the list of kinds: one variant per kind, with the
/// conversions and the dispatch a front end needs.
macro_rules! host_requests {
    ($($variant:ident($kind:ty)),* $(,)?) => {
        /// Everything the agent side can ask the person, one variant per kind.
        // Each request is moved once through a channel into a queue of a few entries;
        // boxing the larger payloads would buy nothing measurable.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug)]
        pub enum HostRequest {
            $($variant(Request<$kind>),)*
        }

        impl HostRequest {
            pub fn meta(&self) -> &Meta {
                match self {
                    $(HostRequest::$variant(r) => &r.meta,)*
                }
            }

            /// For a front end's queue: the same request behind the kind-independent trait.
            pub fn into_open(self) -> Box<dyn Open> {
                match self {
                    $(HostRequest::$variant(r) => Box::new(r),)*
                }
            }

            /// Answers with the kind's safe default because nobody can be asked
            /// (headless, shutting down).
            pub fn dismiss(self) -> Closed {
                self.into_open().dismiss()
            }
        }

        $(
            impl From<Request<$kind>> for HostRequest {
                fn from(request: Request<$kind>) -> HostRequest {
                    HostRequest::$variant(request)
                }
            }
        )*
    };
}

host_requests! {
    ToolCall(ToolCall),
    WorkspaceTrust(WorkspaceTrust),
    ProjectServer(ProjectServer),
    ProjectHooks(ProjectHooks),
    Escalation(Escalation),
    SignIn(SignIn),
    RestoreFiles(RestoreFiles),
    Sampling(Sampling),
    Network(Network),
    ChangedDefinition(ChangedDefinition),
    Elicitation(Elicitation),
    PlanReview(PlanReview),
}

/// Whole seconds, for ages and countdowns ("42s", "3m05s", "1h02m").
pub fn short_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests;
