//! A model for tests of the agent: it replays fixed replies and records every request it
//! gets, so a test sees exactly what the model was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::stream::{self, BoxStream, StreamExt};
use serde_json::Value;
use toolgate::model::{ModelError, ModelProvider, ModelRequest, StopReason, StreamEvent};

/// Every request the model got, in order.
pub type Requests = Arc<Mutex<Vec<ModelRequest>>>;

/// Replays the replies in order; past the end it answers with a model error.
pub struct ReplayModel {
    pub replies: Mutex<VecDeque<Vec<StreamEvent>>>,
    pub requests: Requests,
}

impl ModelProvider for ReplayModel {
    fn label(&self) -> String {
        "replay test model".into()
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        self.requests.lock().unwrap().push(request);
        match self.replies.lock().unwrap().pop_front() {
            Some(events) => stream::iter(events.into_iter().map(Ok)).boxed(),
            None => stream::iter(vec![Err(ModelError::Config("no more replies".into()))]).boxed(),
        }
    }
}

/// A reply that calls the tool `name`, then stops for its result.
pub fn call(id: &str, name: &str, input: Value) -> Vec<StreamEvent> {
    vec![
        StreamEvent::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        },
        StreamEvent::Stop(StopReason::ToolUse),
    ]
}
