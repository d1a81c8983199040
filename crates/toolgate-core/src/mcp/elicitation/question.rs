//! The hub's question to the person on a server's behalf, and the person's answer.

use super::request::ElicitationAsk;
use crate::ids::ServerName;
use crate::mcp::pending::Pending;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio_util::sync::DropGuard;

/// The person's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationReply {
    /// Form: the content. URL: agreed to open the page (empty).
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// The hub's question to whoever speaks for the person. Dropping every copy unanswered
/// declines.
#[derive(Debug, Clone)]
pub struct ElicitationQuestion {
    pub server: ServerName,
    pub ask: ElicitationAsk,
    /// The answer; withdrawn when the server no longer waits.
    pending: Pending<ElicitationReply>,
}

impl PartialEq for ElicitationQuestion {
    fn eq(&self, other: &Self) -> bool {
        self.server == other.server && self.ask == other.ask && self.pending.same(&other.pending)
    }
}

impl ElicitationQuestion {
    /// A question, its answer's receiver, and the guard that withdraws it when the hub
    /// stops waiting.
    pub(in crate::mcp) fn open(
        server: &str,
        ask: ElicitationAsk,
    ) -> (
        ElicitationQuestion,
        oneshot::Receiver<ElicitationReply>,
        DropGuard,
    ) {
        Pending::open(|pending| ElicitationQuestion {
            server: server.to_string().into(),
            ask,
            pending,
        })
    }

    /// The answer (only the first counts).
    pub fn answer(&self, reply: ElicitationReply) {
        self.pending.answer(reply);
    }

    /// Resolves when the server no longer waits (it cancelled the request, or went away).
    pub async fn withdrawn(&self) {
        self.pending.withdrawn().await;
    }
}
