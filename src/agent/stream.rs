//! Streaming one model reply into content blocks, with its text passed on as it comes.

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::model::{
    ContentBlock, ModelError, ModelProvider, ModelRequest, StopReason, StreamEvent, Usage,
};
use crate::protocol::AgentEvent;

/// A finished model reply.
#[derive(Default)]
pub(super) struct Reply {
    pub content: Vec<ContentBlock>,
    pub stop: Option<StopReason>,
    pub usage: Usage,
    pub cancelled: bool,
}

/// Streams one model reply, passing text on as it comes; a cancel stops it where it is
/// (what came so far is kept).
pub(super) async fn stream_reply(
    model: &dyn ModelProvider,
    request: ModelRequest,
    cancel: &CancellationToken,
    events: &mpsc::Sender<AgentEvent>,
) -> Result<Reply, ModelError> {
    let mut stream = model.stream(request);
    let mut reply = Reply::default();
    let mut text = String::new();
    let mut streamed_text = false;
    let result = loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                reply.cancelled = true;
                break Ok(());
            }
            next = stream.next() => next,
        };
        match next {
            None => break Ok(()),
            Some(Err(e)) => break Err(e),
            Some(Ok(StreamEvent::TextDelta(delta))) => {
                streamed_text = true;
                text.push_str(&delta);
                let _ = events.send(AgentEvent::TextDelta(delta)).await;
            }
            Some(Ok(StreamEvent::ToolUseStarted { .. })) => {}
            Some(Ok(StreamEvent::ToolUse { id, name, input })) => {
                flush_text(&mut text, &mut reply.content);
                reply
                    .content
                    .push(ContentBlock::ToolUse { id, name, input });
            }
            // Providers report usage cumulatively within one message (input at the
            // start, output growing), so the largest value of each is the total.
            Some(Ok(StreamEvent::Usage(u))) => {
                reply.usage.input_tokens = reply.usage.input_tokens.max(u.input_tokens);
                reply.usage.output_tokens = reply.usage.output_tokens.max(u.output_tokens);
                reply.usage.cache_read_input_tokens = reply
                    .usage
                    .cache_read_input_tokens
                    .max(u.cache_read_input_tokens);
                reply.usage.cache_creation_input_tokens = reply
                    .usage
                    .cache_creation_input_tokens
                    .max(u.cache_creation_input_tokens);
            }
            Some(Ok(StreamEvent::Stop(reason))) => reply.stop = Some(reason),
        }
    };
    // Dropping the stream closes the HTTP response (that is how a cancel stops it).
    drop(stream);
    flush_text(&mut text, &mut reply.content);
    if streamed_text {
        let _ = events.send(AgentEvent::AssistantMessageDone).await;
    }
    result.map(|()| reply)
}

fn flush_text(text: &mut String, content: &mut Vec<ContentBlock>) {
    if !text.is_empty() {
        content.push(ContentBlock::Text {
            text: std::mem::take(text),
        });
    }
}
