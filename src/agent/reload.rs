//! What the agent needs to reload its configuration while the session runs (after the
//! config watcher saw a file change, or on `/mcp reload`), and why a reload runs. The
//! reloading itself is in `reload_servers.rs`, `reload_rules.rs` and `reload_settings.rs`.

use std::path::PathBuf;

use crate::config::{Diagnostic, HostSettings, LoadOptions};
use crate::sandbox::SandboxSettings;

/// What the agent needs to load the configuration again.
#[derive(Debug, Clone)]
pub struct ConfigReload {
    pub options: LoadOptions,
    /// Problems the configuration had when it was last applied: they were reported then,
    /// and do not block a reload again.
    pub known_problems: Vec<Diagnostic>,
    /// Watch the files (the console); without it only `/mcp reload` reloads.
    pub watch: bool,
    /// The permission rules, reloaded from their files the same way; `None` keeps the rules
    /// the session started with.
    pub rules: Option<RulesReload>,
}

/// What the agent needs to load the permission rules again (`[permissions]` of the user's
/// and the project's `config.toml`, and the rule flags).
#[derive(Debug, Clone)]
pub struct RulesReload {
    pub options: crate::policy::LoadOptions,
    /// Problems the rule files had when they were last applied.
    pub known_problems: Vec<Diagnostic>,
    /// The same files' settings that need a restart, as last seen; `None` leaves them
    /// unwatched (only the rules and `[tools]` reload).
    pub settings_seen: Option<SettingsSeen>,
}

impl RulesReload {
    /// The files the rules are read from (whether they exist yet or not).
    pub fn files(&self) -> Vec<PathBuf> {
        crate::policy::rule_files(&self.options)
            .into_iter()
            .map(|(path, _)| path)
            .collect()
    }
}

impl ConfigReload {
    /// Every file a change of which reloads something: the server files, then the rule files.
    pub fn watched_files(&self) -> Vec<PathBuf> {
        let mut files = crate::config::watch::watched_files(&self.options);
        if let Some(rules) = &self.rules {
            files.extend(rules.files());
        }
        files
    }
}

/// Why a reload runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadCause {
    /// `/mcp reload`.
    Asked,
    /// The watcher saw these files change.
    Files(Vec<PathBuf>),
}

impl ReloadCause {
    /// What a reload notice names as its cause: `/mcp reload` or the changed files.
    pub(super) fn describe(&self) -> String {
        match self {
            ReloadCause::Asked => "/mcp reload".to_string(),
            ReloadCause::Files(files) => files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// Same problem as before, wherever the edit moved it (lines shift as a file is edited).
pub(super) fn same_problem(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.file == b.file && a.message == b.message
}

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

/// A line when `[sandbox]` changed since it was last seen.
pub(super) fn sandbox_line(seen: &SettingsSeen, sandbox: &SandboxSettings) -> Option<String> {
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
        let mut edited = SandboxSettings::default();
        edited.network = !edited.network;
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
