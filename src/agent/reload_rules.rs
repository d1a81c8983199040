//! Reloading the permission rules while the session runs: after the user's or the
//! project's `config.toml` changed, or on `/mcp reload`. Rule files with new problems are
//! not applied at all: a half-read file could drop a deny rule, so the rules in force stay
//! and the error names each problem's file and position (the same as for server files).

use super::reload::{ReloadCause, RulesReload, new_problems};
use super::runner::Agent;
use crate::policy::{OutsideWorkspace, RuleChanges};
use crate::protocol::AgentEvent;
use crate::settings::Settings;

impl Agent {
    pub(super) async fn reload_rules(
        &mut self,
        rules: &RulesReload,
        files: &[std::path::PathBuf],
        settings: &Settings,
        cause: &ReloadCause,
    ) {
        let (fresh, diagnostics) = crate::policy::from_settings(&settings.permissions);
        let new_problems = new_problems(&diagnostics, &rules.known_problems);
        if !new_problems.is_empty() {
            self.emit(AgentEvent::Error(format!(
                "Permission rules not reloaded; the rules in force stay as they were. Fix this and save again (or /mcp reload):\n{}",
                new_problems.join("\n")
            )))
            .await;
            return;
        }
        if let Some(current) = self.reload.as_mut().and_then(|r| r.rules.as_mut()) {
            current.known_problems = diagnostics;
        }
        // `sampling(SERVER)` rules live in the same files: the gate puts them in force too.
        let changes = self.gate.reload_rules(fresh, files);
        let settings = super::reload_settings::apply(
            rules,
            self.reload.as_mut().and_then(|r| r.rules.as_mut()),
            &mut self.pool.search.settings,
            self.sampling_config.as_deref(),
            &self.hub,
            settings,
        );
        if changes.is_empty() && settings.is_empty() {
            if *cause == ReloadCause::Asked {
                self.emit(AgentEvent::Notice(
                    "Permission rules reloaded: no rule changed".into(),
                ))
                .await;
            }
            return;
        }
        // The pool panel's badges are verdicts of the rules; `[tools]` decides deferral.
        let _ = self.refresh_pool_forced().await;
        let mut notice = describe(&changes, cause);
        for line in settings {
            notice.push_str("\n  ");
            notice.push_str(&line);
        }
        self.emit(AgentEvent::Notice(notice)).await;
    }
}

/// The notice: what came, what went, from where.
fn describe(changes: &RuleChanges, cause: &ReloadCause) -> String {
    let why = cause.describe();
    let mut notice = if changes.is_empty() {
        format!("config.toml reloaded ({why}):")
    } else {
        format!("Permission rules reloaded ({why}):")
    };
    for rule in &changes.added {
        notice.push_str(&format!("\n  + {rule}"));
    }
    for rule in &changes.removed {
        notice.push_str(&format!("\n  - {rule}"));
    }
    if let Some(outside) = changes.outside_workspace {
        let setting = match outside {
            OutsideWorkspace::Ask => "ask",
            OutsideWorkspace::Deny => "deny",
        };
        notice.push_str(&format!("\n  outside_workspace = \"{setting}\""));
    }
    notice
}
