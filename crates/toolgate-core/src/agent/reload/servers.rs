//! Reloading the server configuration while the session runs: after the config watcher
//! saw a file change, or on `/mcp reload`. New servers appear as not connected, removed
//! ones are disconnected, changed ones that are connected reconnect with their new
//! definition (a project's entry only after the person said yes). A configuration with
//! new problems is not applied at all: the old one stays in force and the notice names
//! each problem's file and position.

use std::path::PathBuf;

use crate::agent::conversation::Conversation;
use crate::agent::reload::{ConfigReload, ReloadCause, new_problems};
use crate::agent::tools::ToolHost;
use crate::protocol::AgentEvent;
use crate::protocol::{Event, View};
use crate::settings::LoadedServers;
use crate::settings::diff::ConfigDiff;

/// Applies a reload's servers: removed ones disconnect, changed connected ones reconnect
/// (a project's entry only after the person said yes), new ones appear as not connected.
pub(in crate::agent) async fn apply(
    state: &mut Option<ConfigReload>,
    tools: &mut ToolHost,
    conv: &mut Conversation,
    reload: &ConfigReload,
    loaded: LoadedServers,
    server_files: Vec<PathBuf>,
    cause: ReloadCause,
) {
    let new_problems = new_problems(&loaded.diagnostics, &reload.known_problems);
    if !new_problems.is_empty() {
        conv.emit(AgentEvent::Fact(Event::Error { message: format!(
            "MCP configuration not reloaded; the servers stay as they were. Fix this and save again (or /mcp reload):\n{}",
            new_problems.join("\n")
        ) }))
        .await;
        return;
    }
    if let Some(current) = state.as_mut() {
        current.known_problems = loaded.diagnostics.clone();
    }
    let diff = ConfigDiff::between(&tools.hub.configs(), &loaded.servers);
    if diff.is_empty() {
        if cause == ReloadCause::Asked {
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: format!(
                    "MCP configuration reloaded: no server changed (read {})",
                    server_files
                        .iter()
                        .filter(|f| f.extension().is_some_and(|e| e == "json") && f.is_file())
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }))
            .await;
        }
        return;
    }
    let mut lines = Vec::new();
    for name in &diff.removed {
        if tools.hub.is_connected(name) {
            lines.push(tools.disconnect_server(conv, name).await.text);
        }
    }
    let mut reconnect = Vec::new();
    for name in &diff.changed {
        let Some(new) = loaded.servers.iter().find(|s| &s.name == name) else {
            continue;
        };
        if !tools.hub.is_connected(name) {
            continue;
        }
        if !new.pool.enabled {
            // Disabled in the file: it goes, and there is nothing to approve.
            lines.push(tools.disconnect_server(conv, name).await.text);
            lines.push(format!("'{name}' is disabled by its configuration"));
            continue;
        }
        let approved = !new.source.is_project()
            || tools
                .gate
                .approve_changed_project_server(new, conv.events())
                .await;
        lines.push(tools.disconnect_server(conv, name).await.text);
        if approved {
            reconnect.push(name.clone());
        } else {
            lines.push(format!(
                "'{name}' was not reconnected with its new definition (you declined); /connect {name} asks again"
            ));
        }
    }
    tools.hub.replace_configs(loaded.servers.clone());
    let servers = tools
        .hub
        .configs()
        .iter()
        .map(|config| {
            let profile = tools.hub.sandbox_profile(&config.name);
            crate::views::server_info(config, profile.as_ref())
        })
        .collect();
    conv.emit(AgentEvent::View(View::ServersChanged { servers }))
        .await;
    for name in &reconnect {
        lines.push(tools.connect_server(conv, name, true, None).await.text);
    }
    // disconnect_mcp's list of servers follows the configuration.
    let _ = tools.refresh_pool(conv).await;
    let mut notice = format!(
        "MCP configuration reloaded ({}): {}",
        cause.describe(),
        diff.summary()
    );
    for line in lines {
        notice.push_str("\n  ");
        notice.push_str(&line);
    }
    conv.emit(AgentEvent::Fact(Event::Notice { message: notice }))
        .await;
}
