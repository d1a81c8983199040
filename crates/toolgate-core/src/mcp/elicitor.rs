//! Asking the person on a server's behalf (see [`super::elicitation`]): the request is read and checked first, at
//! most [`MAX_WAITING_PER_SERVER`] questions of one server wait at a time, and the
//! answer goes back as the `elicitation/create` result.

use super::elicitation::question::{ElicitationQuestion, ElicitationReply};
use super::elicitation::request::read_request;
use super::elicitation::url::Completions;
use super::types::HubEvent;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, ErrorData};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Questions of one server that may wait for the person at the same time.
pub const MAX_WAITING_PER_SERVER: usize = 8;

/// Asks the person on behalf of one server; shared by that server's handler (plain
/// requests) and the hub's calls (`input_required`), so both count against one bound.
#[derive(Clone)]
pub struct Elicitor {
    server: String,
    events: mpsc::UnboundedSender<HubEvent>,
    waiting: Arc<Waiting>,
    /// Pages this server said were completed (`notifications/elicitation/complete`).
    completions: Arc<Completions>,
}

/// The questions of one server waiting for the person, and when the last one ended.
#[derive(Default)]
struct Waiting {
    count: AtomicUsize,
    last_end: std::sync::Mutex<Option<Instant>>,
}

impl Waiting {
    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    fn last_end(&self) -> Option<Instant> {
        *self
            .last_end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Gives the slot back however the question ends, and notes when.
struct Slot(Arc<Waiting>);

impl Drop for Slot {
    fn drop(&mut self) {
        *self
            .0
            .last_end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        self.0.count.fetch_sub(1, Ordering::SeqCst);
    }
}

fn refused(why: String) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        format!("toolgate declined the elicitation: {why}"),
        None,
    )
}

impl Elicitor {
    pub fn new(server: &str, events: mpsc::UnboundedSender<HubEvent>) -> Elicitor {
        Elicitor {
            server: server.to_string(),
            events,
            waiting: Arc::default(),
            completions: Arc::default(),
        }
    }

    /// What this server said was completed in the browser.
    pub fn completions(&self) -> &Completions {
        &self.completions
    }

    /// Resolves once `limit` has passed with no question of this server waiting for the
    /// person: the time the person takes does not count, and once they have answered the
    /// server has its whole `limit` again to act on the answer (a clock that merely
    /// re-armed in steps of `limit` could leave it a few milliseconds).
    pub async fn timeout_unless_asking(&self, limit: std::time::Duration) {
        let mut until = Instant::now() + limit;
        loop {
            tokio::time::sleep_until(until).await;
            let now = Instant::now();
            if self.waiting.count() > 0 {
                until = now + limit;
                continue;
            }
            match self.waiting.last_end() {
                Some(end) if end + limit > now => until = end + limit,
                _ => return,
            }
        }
    }

    /// Answers one `elicitation/create`. `cancel` fires when the server cancels it.
    pub async fn ask(
        &self,
        request: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let raw = serde_json::to_value(&request)
            .map_err(|e| refused(format!("cannot read the request: {e}")))?;
        self.ask_raw(&raw, cancel).await
    }

    /// The same from the request's params as JSON (as they arrive inside `input_required`,
    /// or when rmcp could not read them).
    pub async fn ask_raw(
        &self,
        params: &Value,
        cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let ask = read_request(params).map_err(refused)?;
        let prior = self.waiting.count.fetch_add(1, Ordering::SeqCst);
        let _slot = Slot(self.waiting.clone());
        if prior >= MAX_WAITING_PER_SERVER {
            return Err(refused(format!(
                "{MAX_WAITING_PER_SERVER} requests of this server already wait for the person; \
                 ask again once they are answered"
            )));
        }
        // The front end takes the question off the screen once we stop waiting.
        let (question, answer, _withdraw) = ElicitationQuestion::open(&self.server, ask);
        if self
            .events
            .send(HubEvent::Elicitation(question.clone()))
            .is_err()
        {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        drop(question);
        let reply = tokio::select! {
            reply = answer => reply.unwrap_or(ElicitationReply::Decline),
            // The server cancelled: rmcp sends no response then, so this only frees the slot.
            () = cancel.cancelled() => ElicitationReply::Decline,
        };
        Ok(result_of(reply))
    }
}

fn result_of(reply: ElicitationReply) -> ElicitResult {
    match reply {
        ElicitationReply::Accept(content) if content.is_empty() => {
            ElicitResult::new(ElicitationAction::Accept)
        }
        ElicitationReply::Accept(content) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
        }
        ElicitationReply::Decline => ElicitResult::new(ElicitationAction::Decline),
        ElicitationReply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    /// The call's clock (3 s) stands still while the person is asked and starts again in
    /// full once they have answered, whatever the phase: a question at 2.9 s answered at
    /// 8.9 s leaves the server until 11.9 s, not until 9 s.
    #[tokio::test(start_paused = true)]
    async fn a_call_gets_its_whole_time_again_after_the_person_answers() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let elicitor = Elicitor::new("s", tx);
        let limit = std::time::Duration::from_secs(3);
        let start = Instant::now();
        let clock = {
            let elicitor = elicitor.clone();
            tokio::spawn(async move {
                elicitor.timeout_unless_asking(limit).await;
                Instant::now()
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(2_900)).await;
        elicitor.waiting.count.fetch_add(1, Ordering::SeqCst);
        let slot = Slot(elicitor.waiting.clone());
        tokio::time::sleep(std::time::Duration::from_secs(6)).await;
        drop(slot);
        let ended = clock.await.unwrap();
        assert_eq!(ended - start, std::time::Duration::from_millis(11_900));

        // No question: the plain limit.
        let start = Instant::now();
        let idle = Elicitor::new("t", mpsc::unbounded_channel().0);
        idle.timeout_unless_asking(limit).await;
        assert_eq!(Instant::now() - start, limit);
    }

    #[tokio::test]
    async fn more_than_eight_waiting_questions_of_one_server_are_refused() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let elicitor = Elicitor::new("s", tx);
        let params =
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}});
        let mut waiting = Vec::new();
        for _ in 0..MAX_WAITING_PER_SERVER {
            let (e, p) = (elicitor.clone(), params.clone());
            waiting.push(tokio::spawn(async move {
                e.ask_raw(&p, CancellationToken::new()).await
            }));
        }
        let mut questions = Vec::new();
        for _ in 0..MAX_WAITING_PER_SERVER {
            match rx.recv().await {
                Some(HubEvent::Elicitation(q)) => questions.push(q),
                other => panic!("{other:?}"),
            }
        }
        let ninth = elicitor
            .ask_raw(&params, CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            ninth
                .message
                .contains("8 requests of this server already wait"),
            "{}",
            ninth.message
        );
        questions[0].answer(ElicitationReply::Accept(Map::new()));
        drop(questions);
        let mut actions = Vec::new();
        for handle in waiting {
            actions.push(handle.await.unwrap().unwrap().action);
        }
        let accepted = actions
            .iter()
            .filter(|a| **a == ElicitationAction::Accept)
            .count();
        let declined = actions
            .iter()
            .filter(|a| **a == ElicitationAction::Decline)
            .count();
        assert_eq!((accepted, declined), (1, 7), "{actions:?}");
        // Every slot was given back: a new question is asked again.
        let again = tokio::spawn({
            let e = elicitor.clone();
            async move { e.ask_raw(&params, CancellationToken::new()).await }
        });
        assert!(matches!(rx.recv().await, Some(HubEvent::Elicitation(_))));
        assert_eq!(
            again.await.unwrap().unwrap().action,
            ElicitationAction::Decline
        );
    }

    #[tokio::test]
    async fn a_request_the_server_cancels_is_withdrawn_and_frees_its_slot() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let elicitor = Elicitor::new("s", tx);
        let cancel = CancellationToken::new();
        let asking = tokio::spawn({
            let (e, c) = (elicitor.clone(), cancel.clone());
            async move {
                e.ask_raw(
                    &json!({"message": "m", "requestedSchema": {"type": "object"}}),
                    c,
                )
                .await
            }
        });
        let Some(HubEvent::Elicitation(question)) = rx.recv().await else {
            panic!("no question")
        };
        cancel.cancel();
        assert_eq!(
            asking.await.unwrap().unwrap().action,
            ElicitationAction::Decline
        );
        // The front end learns that nobody waits any more, and a late answer goes nowhere.
        tokio::time::timeout(std::time::Duration::from_secs(1), question.withdrawn())
            .await
            .expect("withdrawn");
        question.answer(ElicitationReply::Accept(Map::new()));
        assert_eq!(elicitor.waiting.count(), 0);
    }
}
