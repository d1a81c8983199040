//! The rest of `config.toml` on a reload. `[tools]` applies at once: which tools are
//! deferred is decided for every model call anyway. `[sandbox]`, `[sampling]` and `[mcp]`
//! shape what already runs (the sandbox each server process started in, the sampling host,
//! each connection's log level), so a change to them is named with the restart that
//! applies it, instead of half-applying it to some processes and not others.

use super::reload::RulesReload;
use super::runner::Agent;
use crate::config::HostSettings;
use crate::pool::deferral::SearchSettings;
use crate::sandbox::{SandboxSettings, SettingsSources};

/// The `config.toml` settings a session cannot change while it runs, as last seen: at start,
/// then at each reload (so a change is named once, not at every later save).
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsSeen {
    pub host: HostSettings,
    pub sandbox: SandboxSettings,
    /// What the session started with: a value edited back to it needs no restart.
    pub at_start: (HostSettings, SandboxSettings),
}

impl SettingsSeen {
    pub fn at_start(host: HostSettings, sandbox: SandboxSettings) -> SettingsSeen {
        SettingsSeen {
            at_start: (host, sandbox.clone()),
            host,
            sandbox,
        }
    }
}

impl Agent {
    /// Applies `[tools]` and names the other changed tables; the lines for the notice.
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
            (tools, host.0, sandbox.0)
        })
        .await;
        let Ok(((tools, tool_problems), host, sandbox)) = loaded else {
            return vec!["the other config.toml settings could not be read again".into()];
        };
        let mut lines = Vec::new();
        if tools != self.tool_search.settings {
            if tool_problems.is_empty() {
                self.tool_search.settings = tools;
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
            lines.extend(restart_lines(&seen, &host, &sandbox));
            if let Some(current) = self.reload.as_mut().and_then(|r| r.rules.as_mut())
                && let Some(seen) = current.settings_seen.as_mut()
            {
                seen.host = host;
                seen.sandbox = sandbox;
            }
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

/// A line per table that changed since it was last seen.
fn restart_lines(
    seen: &SettingsSeen,
    host: &HostSettings,
    sandbox: &SandboxSettings,
) -> Vec<String> {
    let mut lines = Vec::new();
    let (start_host, start_sandbox) = &seen.at_start;
    if *host != seen.host {
        lines.push(if host == start_host {
            "[sampling] / [mcp] are back to what this session started with".to_string()
        } else {
            "[sampling] / [mcp] changed: they apply when toolgate starts again".to_string()
        });
    }
    if *sandbox != seen.sandbox {
        lines.push(if sandbox == start_sandbox {
            "[sandbox] is back to what this session started with".to_string()
        } else {
            "[sandbox] changed: it applies when toolgate starts again (running servers and commands keep the sandbox they started in)".to_string()
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_named_once_and_a_return_to_the_start_says_so() {
        let start = SettingsSeen::at_start(HostSettings::default(), SandboxSettings::default());
        let mut edited = HostSettings::default();
        edited.sampling_max_tokens += 1;
        let lines = restart_lines(&start, &edited, &SandboxSettings::default());
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("apply when toolgate starts again"),
            "{lines:?}"
        );
        // Seen already: nothing to say again.
        let mut seen = start.clone();
        seen.host = edited;
        assert!(restart_lines(&seen, &edited, &SandboxSettings::default()).is_empty());
        // Edited back.
        let back = restart_lines(&seen, &HostSettings::default(), &SandboxSettings::default());
        assert!(
            back[0].contains("back to what this session started with"),
            "{back:?}"
        );
        let mut sandbox = SandboxSettings::default();
        sandbox.network = !sandbox.network;
        let lines = restart_lines(&start, &HostSettings::default(), &sandbox);
        assert!(lines[0].starts_with("[sandbox] changed"), "{lines:?}");
    }
}
