//! Where the values of a session came from (decision 0098): every MCP tool result is
//! untrusted content unless its server's entry says `"trust": "trusted"`; built-in results
//! and the person's messages (typed, `@file`s, instruction files) are the person's. An
//! untrusted result's labels go to the gate's flow state and to the session log (a
//! `flow_labels` record), so compaction, which drops messages, keeps them and a resume
//! rebuilds them.

use serde_json::Value;

use super::conversation::Conversation;
use super::tool_run::Finished;
use super::tools::ToolHost;
use crate::builtin::Judgement;
use crate::flow::ResultLabels;
use crate::journal::{Journal, RestoredSession};
use crate::model::{ContentBlock, Message, Role};
use crate::pool::{PoolTool, ToolOrigin};
use crate::protocol::ToolOutcome;

impl ToolHost {
    /// The server whose untrusted content a call's result is, if it is: an MCP tool's
    /// server, or the server a resource was read from, unless its entry trusts it.
    fn untrusted_server(&self, tool: &PoolTool, input: &Value) -> Option<String> {
        let server = match &tool.origin {
            ToolOrigin::Mcp { server, .. } => server.as_str().to_string(),
            // read_mcp_resource: a server's resource is that server's content.
            ToolOrigin::Builtin(kind)
                if kind.judgement() == Judgement::Resource { reads: true } =>
            {
                input.get("server")?.as_str()?.to_string()
            }
            _ => return None,
        };
        let trusted = self.hub.config(&server).is_some_and(|c| c.pool.trusted)
            || self.gate.trusts_server(&server);
        (!trusted).then_some(server)
    }

    /// Labels a finished call's result when it is untrusted content, and records the labels.
    pub(super) async fn label_result(&mut self, conv: &mut Conversation, done: Finished<'_>) {
        let Some(tool) = done.tool else { return };
        if !matches!(done.outcome, ToolOutcome::Ok | ToolOutcome::Error)
            || self.untrusted_server(tool, done.input).is_none()
        {
            return;
        }
        let labels = ResultLabels::of(done.call_id, done.call, done.name, done.input, done.output);
        self.gate.flow_labels().add(&labels);
        conv.record(Journal::FlowLabels(labels)).await;
    }
}

/// The person's words in the opening messages of a turn: their tokens are noted (the
/// question says when the request named a value too).
pub(super) fn note_person(host: &mut ToolHost, messages: &[Message]) {
    let mut labels = host.gate.flow_labels();
    for message in messages.iter().filter(|m| m.role == Role::User) {
        for block in &message.content {
            if let ContentBlock::Text { text } = block {
                labels.note_person(text);
            }
        }
    }
}

/// A resumed session's flow state: the labels its log recorded, the person's messages
/// (those a compaction took out of the model's view too: a name the person gave before it
/// is still theirs), and its calls numbered on.
pub(super) fn restore(host: &mut ToolHost, restored: &RestoredSession) {
    note_person(host, &restored.messages);
    note_person(host, &restored.shown);
    let mut labels = host.gate.flow_labels();
    for result in &restored.flow_labels {
        labels.add(result);
    }
    labels.resume_calls(u32::try_from(restored.tool_calls.len()).unwrap_or(u32::MAX));
}
