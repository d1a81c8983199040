//! What the hub's questions (sign-in, sampling, elicitation) have in common: one answer,
//! of which only the first counts (dropping every copy unanswered is the asker's "no"),
//! and a signal that the hub no longer waits, so a front end can take the question off
//! the screen.

use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;
use tokio_util::sync::{CancellationToken, DropGuard};

/// The open end of one question; every copy of the question shares it.
#[derive(Debug)]
pub(super) struct Pending<T> {
    reply: Arc<Mutex<Option<oneshot::Sender<T>>>>,
    /// Cancelled when the hub stops waiting (the request was cancelled, timed out, or
    /// its server went away).
    withdrawn: CancellationToken,
}

impl<T> Clone for Pending<T> {
    fn clone(&self) -> Self {
        Pending {
            reply: self.reply.clone(),
            withdrawn: self.withdrawn.clone(),
        }
    }
}

impl<T> Pending<T> {
    /// The question `carrying` builds around a new open end, the receiver of its answer,
    /// and the guard the asker holds while it waits: dropping the guard withdraws the
    /// question. Every kind of question is opened this one way.
    pub(super) fn open<Q>(
        carrying: impl FnOnce(Pending<T>) -> Q,
    ) -> (Q, oneshot::Receiver<T>, DropGuard) {
        let (tx, rx) = oneshot::channel();
        let withdrawn = CancellationToken::new();
        let guard = withdrawn.clone().drop_guard();
        let pending = Pending {
            reply: Arc::new(Mutex::new(Some(tx))),
            withdrawn,
        };
        (carrying(pending), rx, guard)
    }

    /// The answer (only the first counts).
    pub(super) fn answer(&self, answer: T) {
        let sender = self
            .reply
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(answer);
        }
    }

    /// Resolves when the hub no longer waits for the answer.
    pub(super) async fn withdrawn(&self) {
        self.withdrawn.cancelled().await;
    }

    /// Whether the hub stopped waiting.
    #[cfg(test)]
    pub(super) fn is_withdrawn(&self) -> bool {
        self.withdrawn.is_cancelled()
    }

    /// Copies of the same question.
    pub(super) fn same(&self, other: &Pending<T>) -> bool {
        Arc::ptr_eq(&self.reply, &other.reply)
    }
}
