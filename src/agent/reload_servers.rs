//! Reloading the server configuration while the session runs: after the config watcher
//! saw a file change, or on `/mcp reload`. New servers appear as not connected, removed
//! ones are disconnected, changed ones that are connected reconnect with their new
//! definition (a project's entry only after the person said yes). A configuration with
//! new problems is not applied at all: the old one stays in force and the notice names
//! each problem's file and position.

use std::path::PathBuf;

use super::reload::{ConfigReload, ReloadCause, new_problems};
use super::runner::Agent;
use crate::protocol::{AgentEvent, Containment, ServerInfo};
use crate::settings::diff::ConfigDiff;
use crate::settings::{LoadedServers, Settings};

impl Agent {
    /// Reloads what the changed files (or `/mcp reload`: everything) configure: the
    /// permission rules first, so reconnected servers' tools get the new verdicts.
    pub(super) async fn reload_config(&mut self, cause: ReloadCause) {
        let Some(reload) = self.reload.clone() else {
            self.emit(AgentEvent::Notice(
                "Reloading the configuration is not available here.".into(),
            ))
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
                    self.emit(AgentEvent::Error(format!(
                        "reloading the configuration failed: {e}"
                    )))
                    .await;
                    return;
                }
            };
        if let Some(rules) = rules {
            self.reload_rules(rules, &rule_files, &fresh, &cause).await;
        }
        if touched(&server_files) {
            self.reload_servers(&reload, fresh.servers, server_files, cause)
                .await;
        }
    }

    async fn reload_servers(
        &mut self,
        reload: &ConfigReload,
        loaded: LoadedServers,
        server_files: Vec<PathBuf>,
        cause: ReloadCause,
    ) {
        let new_problems = new_problems(&loaded.diagnostics, &reload.known_problems);
        if !new_problems.is_empty() {
            self.emit(AgentEvent::Error(format!(
                "MCP configuration not reloaded; the servers stay as they were. Fix this and save again (or /mcp reload):\n{}",
                new_problems.join("\n")
            )))
            .await;
            return;
        }
        if let Some(current) = self.reload.as_mut() {
            current.known_problems = loaded.diagnostics.clone();
        }
        let diff = ConfigDiff::between(&self.hub.configs(), &loaded.servers);
        if diff.is_empty() {
            if cause == ReloadCause::Asked {
                self.emit(AgentEvent::Notice(format!(
                    "MCP configuration reloaded: no server changed (read {})",
                    server_files
                        .iter()
                        .filter(|f| f.extension().is_some_and(|e| e == "json") && f.is_file())
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
                .await;
            }
            return;
        }
        let mut lines = Vec::new();
        for name in &diff.removed {
            if self.hub.is_connected(name) {
                lines.push(self.disconnect_server(name).await.text);
            }
        }
        let mut reconnect = Vec::new();
        for name in &diff.changed {
            let Some(new) = loaded.servers.iter().find(|s| &s.name == name) else {
                continue;
            };
            if !self.hub.is_connected(name) {
                continue;
            }
            if !new.pool.enabled {
                // Disabled in the file: it goes, and there is nothing to approve.
                lines.push(self.disconnect_server(name).await.text);
                lines.push(format!("'{name}' is disabled by its configuration"));
                continue;
            }
            let approved = !new.source.is_project()
                || self
                    .gate
                    .approve_changed_project_server(new, self.conversation.events())
                    .await;
            lines.push(self.disconnect_server(name).await.text);
            if approved {
                reconnect.push(name.clone());
            } else {
                lines.push(format!(
                    "'{name}' was not reconnected with its new definition (you declined); /connect {name} asks again"
                ));
            }
        }
        self.hub.replace_configs(loaded.servers.clone());
        let servers = self
            .hub
            .configs()
            .iter()
            .map(|config| {
                let profile = self.hub.sandbox_profile(&config.name);
                ServerInfo::from_config(config, Containment::of(config, profile.as_ref()))
            })
            .collect();
        self.emit(AgentEvent::ServersChanged { servers }).await;
        for name in &reconnect {
            lines.push(self.connect_server(name, true, None).await.text);
        }
        // disconnect_mcp's list of servers follows the configuration.
        let _ = self.refresh_pool().await;
        let mut notice = format!(
            "MCP configuration reloaded ({}): {}",
            cause.describe(),
            diff.summary()
        );
        for line in lines {
            notice.push_str("\n  ");
            notice.push_str(&line);
        }
        self.emit(AgentEvent::Notice(notice)).await;
    }
}
