//! Streaming one model reply into content blocks, with its text passed on as it comes.
//! When the provider retries (an overload, a stream cut mid-reply), what the failed
//! attempt showed stays on screen and in the session log, marked as cut, and the reply
//! starts over; the conversation the model sees never holds the cut text.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::conversation::Conversation;
use crate::model::{
    ContentBlock, ModelError, ModelProvider, ModelRequest, StopReason, StreamEvent, Usage,
};
use crate::protocol::Event;
use crate::protocol::Live;
use crate::protocol::{AgentEvent, ModelRetry, ReplyCut};

/// A finished model reply.
#[derive(Default)]
pub(super) struct Reply {
    pub content: Vec<ContentBlock>,
    pub stop: Option<StopReason>,
    pub usage: Usage,
    pub cancelled: bool,
}

/// Streams one model reply, passing text on as it comes; a cancel stops it where it is
/// (what came so far is kept). Retries are the provider's; each is shown (and a cut
/// reply recorded) through `conversation`.
pub(super) async fn stream_reply(
    model: &dyn ModelProvider,
    request: ModelRequest,
    cancel: &CancellationToken,
    conversation: &mut Conversation,
) -> Result<Reply, ModelError> {
    let mut stream = model.stream(request);
    let mut reply = Reply::default();
    let mut text = String::new();
    // Every text delta of the current attempt, across its blocks: what the person saw.
    let mut shown = String::new();
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
                shown.push_str(&delta);
                text.push_str(&delta);
                conversation
                    .emit(AgentEvent::Live(Live::TextDelta(delta)))
                    .await;
            }
            Some(Ok(StreamEvent::Retrying(notice))) => {
                // The failed attempt's reply is void: its text is marked on screen and
                // logged, its tool calls (not yet run) are dropped.
                cut(conversation, std::mem::take(&mut shown), true).await;
                reply = Reply::default();
                text.clear();
                let retry = ModelRetry::from(&notice);
                conversation.tell(Event::ModelRetry(retry)).await;
            }
            Some(Ok(StreamEvent::ToolUseStarted { .. })) => {}
            Some(Ok(StreamEvent::ThinkingDelta(delta))) => {
                conversation
                    .emit(AgentEvent::Live(Live::ThinkingDelta(delta)))
                    .await;
            }
            // Kept in order with the text and tool calls: the API wants the thinking
            // block back where it was, signature and all (decision 0079).
            Some(Ok(StreamEvent::ThinkingBlock(block))) => {
                flush_text(&mut text, &mut reply.content);
                reply.content.push(block);
            }
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
    match result {
        Ok(()) => {
            flush_text(&mut text, &mut reply.content);
            if !shown.is_empty() {
                conversation
                    .emit(AgentEvent::Live(Live::AssistantMessageDone))
                    .await;
            }
            Ok(reply)
        }
        // The turn ends on this error; the text shown before it is marked and logged
        // (the conversation does not take it, as before).
        Err(e) => {
            cut(conversation, shown, false).await;
            Err(e)
        }
    }
}

/// Marks text shown by a reply that broke off, and records it; nothing when none was shown.
async fn cut(conversation: &mut Conversation, shown: String, retrying: bool) {
    if shown.is_empty() {
        return;
    }
    let cut = ReplyCut {
        text: shown,
        retrying,
    };
    conversation.tell(Event::ReplyCut(cut)).await;
}

fn flush_text(text: &mut String, content: &mut Vec<ContentBlock>) {
    if !text.is_empty() {
        content.push(ContentBlock::Text {
            text: std::mem::take(text),
        });
    }
}
