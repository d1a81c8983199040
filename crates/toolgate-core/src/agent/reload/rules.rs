//! Reloading the permission rules while the session runs: after the user's or the
//! project's `config.toml` changed, or on `/mcp reload`. Rule files with new problems are
//! not applied at all: a half-read file could drop a deny rule, so the rules in force stay
//! and the error names each problem's file and position (the same as for server files).

use crate::agent::conversation::Conversation;
use crate::agent::reload::{ConfigReload, ReloadCause, RulesReload, new_problems};
use crate::agent::sampling::SamplingConfig;
use crate::agent::tools::ToolHost;
use crate::policy::{OutsideWorkspace, RuleChanges};
use crate::protocol::AgentEvent;
use crate::protocol::Event;
use crate::settings::Settings;

/// Puts reloaded rules (and the rest of `config.toml`) in force, unless the files have new
/// problems.
pub(in crate::agent) async fn apply(
    (state, sampling): (&mut Option<ConfigReload>, Option<&SamplingConfig>),
    tools: &mut ToolHost,
    conv: &mut Conversation,
    (rules, files): (&RulesReload, &[std::path::PathBuf]),
    settings: &Settings,
    cause: &ReloadCause,
) {
    let (fresh, diagnostics) = crate::policy::from_settings(&settings.permissions);
    let new_problems = new_problems(&diagnostics, &rules.known_problems);
    if !new_problems.is_empty() {
        conv.emit(AgentEvent::Fact(Event::Error { message: format!(
            "Permission rules not reloaded; the rules in force stay as they were. Fix this and save again (or /mcp reload):\n{}",
            new_problems.join("\n")
        ) }))
        .await;
        return;
    }
    if let Some(current) = state.as_mut().and_then(|r| r.rules.as_mut()) {
        current.known_problems = diagnostics;
    }
    // `sampling(SERVER)` rules live in the same files: the gate puts them in force too.
    let changes = tools.gate.reload_rules(fresh, files);
    let settings = crate::agent::reload::settings::apply(
        rules,
        state.as_mut().and_then(|r| r.rules.as_mut()),
        &mut tools.pool.search.settings,
        sampling,
        &tools.hub,
        settings,
    );
    if changes.is_empty() && settings.is_empty() {
        if *cause == ReloadCause::Asked {
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: "Permission rules reloaded: no rule changed".into(),
            }))
            .await;
        }
        return;
    }
    // The pool panel's badges are verdicts of the rules; `[tools]` decides deferral.
    let _ = tools.refresh_pool_forced(conv).await;
    let mut notice = describe(&changes, cause);
    for line in settings {
        notice.push_str("\n  ");
        notice.push_str(&line);
    }
    conv.emit(AgentEvent::Fact(Event::Notice { message: notice }))
        .await;
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
