//! The rest of `config.toml` on a reload. `[tools]`, `[sampling] max_tokens` and
//! `[mcp] log_level` apply at once: deferral is decided per model call, the cap per sampling
//! request, and the log level is sent to the connected servers that log. `[sandbox]` shapes
//! what already runs (the sandbox each server process and command started in), so a change
//! to it is named with the restart that applies it, instead of half-applying it to some
//! processes and not others.

use super::reload::{RulesReload, sandbox_line};
use super::runner::Agent;
use crate::config::HostSettings;
use crate::pool::deferral::SearchSettings;
use crate::sandbox::SettingsSources;

impl Agent {
    /// Applies `[tools]`, `[sampling]` and `[mcp]` and names a changed `[sandbox]`; the lines
    /// for the notice.
    pub(super) async fn reload_settings(&mut self, rules: &RulesReload) -> Vec<String> {
        let options = &rules.options;
        let sources = SettingsSources {
            workspace: options.workspace.clone(),
            user_config_dir: options.user_config_dir.clone(),
            trusted: options.trusted,
        };
        let loaded = tokio::task::spawn_blocking(move || {
            let dir = sources.user_config_dir.as_deref();
            let tools = crate::config::load_tool_settings(&sources.workspace, dir, sources.trusted);
            let host = crate::config::load_host_settings(&sources.workspace, dir, sources.trusted);
            let sandbox = crate::sandbox::load_settings(&sources);
            (tools, host, sandbox.0)
        })
        .await;
        let Ok(((tools, tool_problems), (host, host_problems), sandbox)) = loaded else {
            return vec!["the other config.toml settings could not be read again".into()];
        };
        let mut lines = Vec::new();
        if tools != self.pool.search.settings {
            if tool_problems.is_empty() {
                self.pool.search.settings = tools;
                lines.push(describe_tools(tools));
            } else {
                let problems: Vec<String> = tool_problems.iter().map(|d| d.to_string()).collect();
                lines.push(format!(
                    "[tools] not applied, the settings in force stay: {}",
                    problems.join("; ")
                ));
            }
        }
        if let Some(seen) = rules.settings_seen.clone() {
            // A bad value reads as its default: applying that would change what the person
            // did not mean to change.
            let host = if host_problems.is_empty() {
                lines.extend(self.apply_host_settings(&seen.host, &host));
                host
            } else {
                if host != seen.host {
                    let problems: Vec<String> =
                        host_problems.iter().map(|d| d.to_string()).collect();
                    lines.push(format!(
                        "[sampling] / [mcp] not applied, the settings in force stay: {}",
                        problems.join("; ")
                    ));
                }
                seen.host
            };
            lines.extend(sandbox_line(&seen, &sandbox));
            if let Some(current) = self.reload.as_mut().and_then(|r| r.rules.as_mut())
                && let Some(seen) = current.settings_seen.as_mut()
            {
                seen.host = host;
                seen.sandbox = sandbox;
            }
        }
        lines
    }

    /// Puts changed `[sampling]` / `[mcp]` values in force; a line for each.
    fn apply_host_settings(&self, before: &HostSettings, now: &HostSettings) -> Vec<String> {
        let mut lines = Vec::new();
        if now.sampling_max_tokens != before.sampling_max_tokens {
            if let Some(sampling) = &self.sampling_config {
                sampling.set_cap(now.sampling_max_tokens);
            }
            lines.push(format!(
                "[sampling] max_tokens = {}: in force from the next sampling request",
                now.sampling_max_tokens
            ));
        }
        if now.log_level != before.log_level {
            let told = self.hub.set_log_level(now.log_level);
            lines.push(match now.log_level {
                Some(level) => format!(
                    "[mcp] log_level = \"{level}\": sent to {told} connected server{} that log{}",
                    if told == 1 { "" } else { "s" },
                    if told == 1 { "s" } else { "" }
                ),
                None => "[mcp] log_level = \"off\": servers that connect from now on are not asked to log (connected ones keep their level until they reconnect)".to_string(),
            });
        }
        lines
    }
}

fn describe_tools(tools: SearchSettings) -> String {
    format!(
        "[tools] search = \"{}\", search_threshold = {} tokens: in force from the next model call",
        tools.mode.as_str(),
        tools.auto_threshold_tokens
    )
}
