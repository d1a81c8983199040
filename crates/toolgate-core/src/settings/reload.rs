//! What a reload of `config.toml` changes besides the rules. `[tools]`, `[sampling]
//! max_tokens` and `[mcp] log_level` apply at once: deferral is decided per model call, the
//! cap per sampling request, and the log level is sent to the connected servers that log.
//! `[sandbox]` shapes what already runs (the sandbox each server process and command started
//! in), so a change to it is named with the restart that applies it, instead of
//! half-applying it to some processes and not others. The agent puts the changes in force;
//! what they are is decided here.

use super::{HostSettings, LogLevel, SandboxSettings, SearchSettings, Settings};

/// The `config.toml` settings in force (`host`) and, for `[sandbox]`, which a session cannot
/// change while it runs, as last seen (so a change is named once, not at every later save).
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsSeen {
    pub host: HostSettings,
    pub sandbox: SandboxSettings,
    /// What the session started with: a sandbox edited back to it needs no restart.
    pub sandbox_at_start: SandboxSettings,
}

impl SettingsSeen {
    pub fn at_start(host: HostSettings, sandbox: SandboxSettings) -> SettingsSeen {
        SettingsSeen {
            sandbox_at_start: sandbox.clone(),
            host,
            sandbox,
        }
    }
}

/// One change a reload found, in the order the notice names them.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingChange {
    /// `[tools]` to put in force now.
    Tools(SearchSettings),
    /// `[sampling] max_tokens` to put in force now.
    SamplingMaxTokens(u32),
    /// `[mcp] log_level` to send now (None: `off`).
    LogLevel(Option<LogLevel>),
    /// A change that is not applied: the line says why, or what applies it.
    Unapplied(String),
}

impl SettingChange {
    /// The notice's line; for `LogLevel` it depends on how many servers were told, see
    /// [`log_level_line`].
    pub fn line(&self) -> Option<String> {
        match self {
            SettingChange::Tools(tools) => Some(format!(
                "[tools] search = \"{}\", search_threshold = {} tokens: in force from the next model call",
                tools.mode.as_str(),
                tools.auto_threshold_tokens
            )),
            SettingChange::SamplingMaxTokens(cap) => Some(format!(
                "[sampling] max_tokens = {cap}: in force from the next sampling request"
            )),
            SettingChange::LogLevel(_) => None,
            SettingChange::Unapplied(line) => Some(line.clone()),
        }
    }
}

/// The line for a new `[mcp] log_level`, sent to `told` connected servers.
pub fn log_level_line(level: Option<LogLevel>, told: usize) -> String {
    match level {
        Some(level) => format!(
            "[mcp] log_level = \"{level}\": sent to {told} connected server{} that log{}",
            if told == 1 { "" } else { "s" },
            if told == 1 { "s" } else { "" }
        ),
        None => "[mcp] log_level = \"off\": servers that connect from now on are not asked to log (connected ones keep their level until they reconnect)".to_string(),
    }
}

/// What changed from the settings in force (`tools`, and `seen` for the rest; None leaves
/// the rest unwatched) to `fresh`, and what is seen from now on.
pub fn changes(
    tools: &SearchSettings,
    seen: Option<&SettingsSeen>,
    fresh: &Settings,
) -> (Vec<SettingChange>, Option<SettingsSeen>) {
    let mut changes = Vec::new();
    if fresh.tools.value != *tools {
        changes.push(if fresh.tools.diagnostics.is_empty() {
            SettingChange::Tools(fresh.tools.value)
        } else {
            SettingChange::Unapplied(format!(
                "[tools] not applied, the settings in force stay: {}",
                joined(&fresh.tools.diagnostics)
            ))
        });
    }
    let Some(seen) = seen else {
        return (changes, None);
    };
    let now = fresh.host.value;
    // A bad value reads as its default: applying that would change what the person did not
    // mean to change.
    let host = if fresh.host.diagnostics.is_empty() {
        if now.sampling_max_tokens != seen.host.sampling_max_tokens {
            changes.push(SettingChange::SamplingMaxTokens(now.sampling_max_tokens));
        }
        if now.log_level != seen.host.log_level {
            changes.push(SettingChange::LogLevel(now.log_level));
        }
        now
    } else {
        if now != seen.host {
            changes.push(SettingChange::Unapplied(format!(
                "[sampling] / [mcp] not applied, the settings in force stay: {}",
                joined(&fresh.host.diagnostics)
            )));
        }
        seen.host
    };
    let sandbox = &fresh.sandbox.value;
    changes.extend(sandbox_line(seen, sandbox).map(SettingChange::Unapplied));
    let seen = SettingsSeen {
        host,
        sandbox: sandbox.clone(),
        sandbox_at_start: seen.sandbox_at_start.clone(),
    };
    (changes, Some(seen))
}

fn joined(diagnostics: &[super::Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A line when `[sandbox]` changed since it was last seen.
fn sandbox_line(seen: &SettingsSeen, sandbox: &SandboxSettings) -> Option<String> {
    if *sandbox == seen.sandbox {
        return None;
    }
    Some(if *sandbox == seen.sandbox_at_start {
        "[sandbox] is back to what this session started with".to_string()
    } else {
        "[sandbox] changed: it applies when toolgate starts again (running servers and commands keep the sandbox they started in)".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandbox_change_is_named_once_and_a_return_to_the_start_says_so() {
        let start = SettingsSeen::at_start(HostSettings::default(), SandboxSettings::default());
        let edited = SandboxSettings {
            network: crate::settings::NetworkAccess::Full,
            ..SandboxSettings::default()
        };
        let line = sandbox_line(&start, &edited).unwrap();
        assert!(
            line.contains("applies when toolgate starts again"),
            "{line}"
        );
        // Seen already: nothing to say again.
        let mut seen = start.clone();
        seen.sandbox = edited;
        assert_eq!(sandbox_line(&seen, &seen.sandbox.clone()), None);
        // Edited back.
        let back = sandbox_line(&seen, &SandboxSettings::default()).unwrap();
        assert!(
            back.contains("back to what this session started with"),
            "{back}"
        );
    }
}
