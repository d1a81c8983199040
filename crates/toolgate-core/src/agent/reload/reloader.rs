//! The agent's reload part ([`Reloader`]): the one reading of every file a reload starts
//! with, then the rules (`rules.rs`, which also applies the rest of `config.toml`)
//! and the servers (`servers.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::conversation::Conversation;
use crate::agent::reload::{ConfigReload, ReloadCause};
use crate::agent::sampling::SamplingConfig;
use crate::agent::tools::ToolHost;
use crate::protocol::AgentEvent;
use crate::protocol::Event;
use crate::settings::Settings;

/// The agent's reload part: what a reload reads and what the last one put in force.
pub(in crate::agent) struct Reloader {
    /// `None` where reloading is not available.
    pub(in crate::agent) state: Option<ConfigReload>,
    /// What sampling reads of the configuration (a reload updates it); `None` until the
    /// agent task starts.
    pub(in crate::agent) sampling_config: Option<Arc<SamplingConfig>>,
}

impl Reloader {
    pub(in crate::agent) fn new(state: Option<ConfigReload>) -> Self {
        Reloader {
            state,
            sampling_config: None,
        }
    }

    /// Reloads what the changed files (or `/mcp reload`: everything) configure: the
    /// permission rules first, so reconnected servers' tools get the new verdicts.
    pub(in crate::agent) async fn reload(
        &mut self,
        cause: ReloadCause,
        tools: &mut ToolHost,
        conv: &mut Conversation,
    ) {
        let Some(reload) = self.state.clone() else {
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: "Reloading the configuration is not available here.".into(),
            }))
            .await;
            return;
        };
        let server_files = crate::settings::watch::watched_files(&reload.options);
        let touched = |wanted: &[PathBuf]| match &cause {
            ReloadCause::Asked => true,
            ReloadCause::Files(files) => files.iter().any(|f| {
                wanted
                    .iter()
                    .any(|w| crate::settings::watch::same_file(w, f))
            }),
        };
        let rule_files = reload.rule_files();
        let rules = reload.rules.as_ref().filter(|_| touched(&rule_files));
        if rules.is_none() && !touched(&server_files) {
            return;
        }
        // One reading of every file, whichever part changed.
        let options = reload.options.clone();
        let fresh: Settings =
            match tokio::task::spawn_blocking(move || crate::settings::load(&options)).await {
                Ok(fresh) => fresh,
                Err(e) => {
                    conv.emit(AgentEvent::Fact(Event::Error {
                        message: format!("reloading the configuration failed: {e}"),
                    }))
                    .await;
                    return;
                }
            };
        if let Some(rules) = rules {
            crate::agent::reload::rules::apply(
                (&mut self.state, self.sampling_config.as_deref()),
                tools,
                conv,
                (rules, &rule_files),
                &fresh,
                &cause,
            )
            .await;
        }
        if touched(&server_files) {
            let loaded = fresh.servers;
            crate::agent::reload::servers::apply(
                &mut self.state,
                tools,
                conv,
                &reload,
                loaded,
                server_files,
                cause,
            )
            .await;
        }
    }
}
