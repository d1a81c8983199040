//! What the agent needs to reload its configuration while the session runs (after the
//! config watcher saw a file change, or on `/mcp reload`), and why a reload runs. The
//! reload itself starts in `reloader.rs`; applying what was read is in `rules.rs`
//! (rules), `settings.rs` (the rest of `config.toml`) and `servers.rs`.

mod reloader;
mod rules;
mod servers;
mod settings;

use std::path::PathBuf;

use crate::settings::{Diagnostic, LoadOptions};

pub(super) use reloader::Reloader;

/// What the agent needs to load the configuration again.
#[derive(Debug, Clone)]
pub struct ConfigReload {
    /// The files and flags of every setting (servers, rules and the rest of `config.toml`).
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

/// What the agent needs to reload the permission rules (`[permissions]` of the user's and
/// the project's `config.toml`, and the rule flags of [`ConfigReload::options`]).
#[derive(Debug, Clone)]
pub struct RulesReload {
    /// Problems the rule files had when they were last applied.
    pub known_problems: Vec<Diagnostic>,
    /// The same files' settings that need a restart, as last seen; `None` leaves them
    /// unwatched (only the rules and `[tools]` reload).
    pub settings_seen: Option<crate::settings::reload::SettingsSeen>,
}

impl ConfigReload {
    /// The files the rules are read from (whether they exist yet or not).
    pub fn rule_files(&self) -> Vec<PathBuf> {
        crate::settings::rule_files(&self.options)
    }

    /// Every file a change of which reloads something: the server files, then the rule files.
    pub fn watched_files(&self) -> Vec<PathBuf> {
        let mut files = crate::settings::watch::watched_files(&self.options);
        if self.rules.is_some() {
            files.extend(self.rule_files());
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

/// The problems in `found` that were not already known, one indented line each. A known
/// problem counts as the same wherever the edit moved it (lines shift as a file is edited),
/// so only a problem the latest edit introduced stops a reload.
pub(super) fn new_problems(found: &[Diagnostic], known: &[Diagnostic]) -> Vec<String> {
    found
        .iter()
        .filter(|d| {
            !known
                .iter()
                .any(|k| k.file == d.file && k.message == d.message)
        })
        .map(|d| format!("  {d}"))
        .collect()
}
