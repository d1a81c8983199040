//! The rest of `config.toml` on a reload: what changed is decided by
//! [`crate::settings::reload::changes`]; this puts it in force.

use super::reload::RulesReload;
use super::runner::Agent;
use crate::settings::Settings;
use crate::settings::reload::{SettingChange, log_level_line};

impl Agent {
    /// Applies `[tools]`, `[sampling]` and `[mcp]` from `fresh` and names a changed
    /// `[sandbox]`; the lines for the notice.
    pub(super) fn reload_settings(&mut self, rules: &RulesReload, fresh: &Settings) -> Vec<String> {
        let (changes, seen) = crate::settings::reload::changes(
            &self.pool.search.settings,
            rules.settings_seen.as_ref(),
            fresh,
        );
        let mut lines = Vec::new();
        for change in changes {
            match &change {
                SettingChange::Tools(tools) => self.pool.search.settings = *tools,
                SettingChange::SamplingMaxTokens(cap) => {
                    if let Some(sampling) = &self.sampling_config {
                        sampling.set_cap(*cap);
                    }
                }
                SettingChange::LogLevel(level) => {
                    let told = self.hub.set_log_level(*level);
                    lines.push(log_level_line(*level, told));
                }
                SettingChange::Unapplied(_) => {}
            }
            lines.extend(change.line());
        }
        if let Some(seen) = seen
            && let Some(current) = self.reload.as_mut().and_then(|r| r.rules.as_mut())
        {
            current.settings_seen = Some(seen);
        }
        lines
    }
}
