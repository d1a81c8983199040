//! A resumed session's restore, beside the agent's loop (runner.rs): the conversation,
//! the flow labels, the loaded tools, the model, the roots and the servers it had.

use super::Agent;
use crate::journal;
use crate::protocol::{AgentEvent, Event};

impl Agent {
    /// Restores the conversation and reconnects the servers of a resumed session; returns
    /// the permission mode it was last in.
    pub(super) async fn restore(&mut self) -> Option<crate::protocol::PermissionMode> {
        let (Some(dir), Some(id)) = (self.sessions_dir.clone(), self.resume.clone()) else {
            return None;
        };
        let restored = match journal::load(&dir, &id) {
            Ok(restored) => restored,
            Err(e) => {
                self.emit(AgentEvent::Fact(Event::Error {
                    message: format!("cannot resume: {e}"),
                }))
                .await;
                return None;
            }
        };
        if self.replay_history {
            self.conversation.replay_all(&restored).await;
        }
        crate::agent::provenance::restore(&mut self.tools, &restored);
        self.conversation.restore(restored.messages);
        self.tools.pool.search.restore_loaded(restored.loaded_tools);
        if let Some(model) = restored.model {
            self.set_model(&model, false).await;
        }
        let roots = crate::agent::roots::restore(&self.tools.hub, &restored.roots).await;
        self.tools.checkpoints.resume_after(restored.turns);
        let mut notice = format!(
            "Resumed session {id}: {} messages restored",
            self.conversation.messages().len()
        );
        if restored.skipped_lines > 0 {
            notice.push_str(&format!(
                " ({} unreadable log lines skipped)",
                restored.skipped_lines
            ));
        }
        if roots.restored > 0 {
            notice.push_str(&format!(
                "; {} root{} added with /roots add restored",
                roots.restored,
                if roots.restored == 1 { "" } else { "s" }
            ));
        }
        for problem in &roots.problems {
            notice.push_str(&format!("\n  a root was not restored: {problem}"));
        }
        self.emit(AgentEvent::Fact(Event::Notice { message: notice }))
            .await;
        for server in restored.connected {
            let result = self
                .tools
                .connect_server(&mut self.conversation, &server, false, None)
                .await;
            if result.is_error() {
                self.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("Could not reconnect MCP server '{server}': {}", result.text),
                }))
                .await;
            }
        }
        restored.mode
    }
}
