//! A server's elicitation, asked through the inbox: the hub's question becomes an
//! `Elicitation` host request; the person's answer goes back to the server. URL mode
//! opens the page (`$BROWSER`, else xdg-open) only after the person chose Open, and says
//! so in the transcript with the full address.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::mcp::{ElicitationAsk, ElicitationQuestion, ElicitationReply};
use crate::oauth::Opener;
use crate::protocol::AgentEvent;
use crate::protocol::Event;
use crate::protocol::questions::{
    Elicitation, ElicitationAnswer, ElicitationMode, Origin, Reply, Request,
};

/// How long an elicitation waits in the inbox before it counts as declined.
pub const ELICITATION_LIMIT: Duration = Duration::from_secs(600);

/// The inbox request for a hub question.
pub fn request_for(
    question: &ElicitationQuestion,
    now: Instant,
) -> (
    Request<Elicitation>,
    tokio::sync::oneshot::Receiver<Reply<ElicitationAnswer>>,
) {
    let (message, mode) = match &question.ask {
        ElicitationAsk::Form { message, form } => {
            (message.clone(), ElicitationMode::Form(form.clone()))
        }
        ElicitationAsk::Url {
            message,
            url,
            domain,
        } => (
            message.clone(),
            ElicitationMode::Url {
                url: url.clone(),
                domain: domain.clone(),
            },
        ),
    };
    Request::new(
        Origin::Server {
            server: question.server.clone(),
        },
        Elicitation {
            server: question.server.clone(),
            message,
            mode,
        },
        now,
        Some(now + ELICITATION_LIMIT),
    )
}

/// The hub's answer for an inbox reply. Only the person's own answer accepts.
pub fn reply_for(reply: Option<Reply<ElicitationAnswer>>) -> ElicitationReply {
    match reply {
        Some(Reply::Person(ElicitationAnswer::Accept(content))) => {
            ElicitationReply::Accept(content)
        }
        Some(Reply::Person(ElicitationAnswer::Cancel)) => ElicitationReply::Cancel,
        _ => ElicitationReply::Decline,
    }
}

/// Puts the question into the inbox and relays the answer on its own task, so other hub
/// events (and other servers) go on meanwhile. False when the front end is gone.
pub async fn ask_elicitation(
    question: ElicitationQuestion,
    events: &mpsc::Sender<AgentEvent>,
) -> bool {
    let (request, answer) = request_for(&question, Instant::now());
    if events
        .send(AgentEvent::Request(request.into()))
        .await
        .is_err()
    {
        question.answer(ElicitationReply::Decline);
        return false;
    }
    let events = events.clone();
    tokio::spawn(async move {
        let reply = tokio::select! {
            reply = answer => reply.ok(),
            // The server stopped waiting: dropping `answer` withdraws the request.
            () = question.withdrawn() => return,
        };
        // The person's own answer gets a line in the transcript (an expired one is told
        // by the console itself).
        let told = match &reply {
            Some(Reply::Person(ElicitationAnswer::Accept(content)))
                if matches!(question.ask, ElicitationAsk::Form { .. }) =>
            {
                Some(format!(
                    "You sent '{}' the form it asked for ({} field(s)).",
                    question.server,
                    content.len()
                ))
            }
            Some(Reply::Person(ElicitationAnswer::Decline)) => Some(format!(
                "You declined what '{}' asked for.",
                question.server
            )),
            Some(Reply::Person(ElicitationAnswer::Cancel)) => Some(format!(
                "You cancelled the operation '{}' asked for input in.",
                question.server
            )),
            _ => None,
        };
        if let Some(notice) = told {
            let _ = events
                .send(AgentEvent::Fact(Event::Notice { message: notice }))
                .await;
        }
        let reply = reply_for(reply);
        if let (ElicitationReply::Accept(_), ElicitationAsk::Url { url, .. }) =
            (&reply, &question.ask)
        {
            let notice = match Opener::System.open(url) {
                Ok(()) => format!(
                    "Opening the page '{}' asked for in your browser; if it does not open, visit:\n{url}",
                    question.server
                ),
                Err(e) => format!(
                    "Could not open a browser ({e}); to continue what '{}' asked, visit:\n{url}",
                    question.server
                ),
            };
            let _ = events
                .send(AgentEvent::Fact(Event::Notice { message: notice }))
                .await;
        }
        question.answer(reply);
    });
    true
}
