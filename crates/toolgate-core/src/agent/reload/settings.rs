//! The rest of `config.toml` on a reload: what changed is decided by
//! [`crate::settings::reload::changes`]; this puts it in force.

use crate::agent::reload::RulesReload;
use crate::agent::sampling::SamplingConfig;
use crate::mcp::McpHub;
use crate::settings::reload::{SettingChange, log_level_line};
use crate::settings::{SearchSettings, Settings};

/// Applies `[tools]` (to `search`), `[sampling]` and `[mcp]` from `fresh` and names a
/// changed `[sandbox]`; the lines for the notice. `current` is the reload state in force:
/// it remembers the settings seen now.
pub(in crate::agent) fn apply(
    rules: &RulesReload,
    current: Option<&mut RulesReload>,
    search: &mut SearchSettings,
    sampling: Option<&SamplingConfig>,
    hub: &McpHub,
    fresh: &Settings,
) -> Vec<String> {
    let (changes, seen) =
        crate::settings::reload::changes(search, rules.settings_seen.as_ref(), fresh);
    let mut lines = Vec::new();
    for change in changes {
        match &change {
            SettingChange::Tools(tools) => *search = *tools,
            SettingChange::SamplingMaxTokens(cap) => {
                if let Some(sampling) = sampling {
                    sampling.set_cap(*cap);
                }
            }
            SettingChange::LogLevel(level) => {
                let told = hub.set_log_level(*level);
                lines.push(log_level_line(*level, told));
            }
            SettingChange::Unapplied(_) => {}
        }
        lines.extend(change.line());
    }
    if let Some(seen) = seen
        && let Some(current) = current
    {
        current.settings_seen = Some(seen);
    }
    lines
}
