//! Where the session's events meet the hooks (decision 0086): each function runs the hooks
//! of one event of the turn loop, shows the person their errors, and returns what the turn
//! does with what they said. The events that decide a tool call run in the gate's
//! pipeline (decision 0092); each event's payload is built in `crate::hooks`.

use std::path::Path;
use std::time::Instant;

use super::conversation::Conversation;
use crate::hooks::{Block, EventResult, HookEvent, Hooks};
use crate::model::ContentBlock;
use crate::protocol::Event;
use crate::protocol::questions::{Origin, ProjectHooks, ProjectHooksAnswer, Reply, Request};
use crate::protocol::{AgentEvent, CompactionTrigger};

/// The hooks of the session's settings. A project's hooks run once consented to: the
/// console asks ([`session_started`]); headless, `--trust-project` is the consent given up
/// front (`hooks_project_consent`), and without it the project's file is not read at all.
pub(super) fn hooks(config: &super::AgentConfig) -> Hooks {
    Hooks::new(
        &config.hooks,
        &config.workspace,
        config.sandbox.clone(),
        config.hooks_project_consent,
    )
}

/// The console asks once per session, showing every command, before a project's hooks run.
async fn ask_project_consent(hooks: &mut Hooks, conv: &Conversation) {
    let (held, file) = hooks.held_back();
    let Some(file) = file else {
        return;
    };
    let question = ProjectHooks {
        hooks: held,
        file: file.display().to_string(),
    };
    let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let (request, answer) =
        Request::new(Origin::Console { folder }, question, Instant::now(), None);
    let reply = crate::gate::ask(conv.events(), request, answer, None).await;
    if matches!(reply, Some(Reply::Person(ProjectHooksAnswer::Run))) {
        hooks.consent_to_project();
    } else {
        conv.emit(AgentEvent::Fact(Event::Notice {
            message: "hooks: this project's hooks do not run this session (not approved)".into(),
        }))
        .await;
    }
}

/// How many times in a row Stop hooks may keep the agent going before the turn ends anyway
/// (a hook that always blocks must not loop forever).
const MAX_STOP_BLOCKS: usize = 3;

async fn show_errors(conv: &Conversation, result: &EventResult) {
    for notice in &result.notices {
        conv.emit(AgentEvent::Fact(Event::Notice {
            message: format!("hooks: {notice}"),
        }))
        .await;
    }
}

/// UserPromptSubmit: None when a hook blocks the prompt (the person is told why and the
/// turn ends before the model is called); otherwise the context the hooks add after it.
pub(super) async fn prompt_submitted(
    hooks: &mut Hooks,
    conv: &Conversation,
    prompt: &str,
) -> Option<Vec<ContentBlock>> {
    if !hooks.has(HookEvent::UserPromptSubmit) {
        return Some(context_blocks(hooks.take_held()));
    }
    let result = hooks.user_prompt_submit(prompt).await;
    show_errors(conv, &result).await;
    if let Some(Block { reason, hook }) = result.block {
        conv.emit(AgentEvent::Fact(Event::Notice {
            message: format!("hooks: the {hook} blocked this prompt: {reason}"),
        }))
        .await;
        conv.emit(AgentEvent::Fact(Event::TurnFinished {
            usage: Default::default(),
            cancelled: false,
            model_calls: None,
            exit_code: None,
        }))
        .await;
        return None;
    }
    let mut context = hooks.take_held();
    context.extend(result.context);
    Some(context_blocks(context))
}

/// SessionStart: its context is held for the first prompt.
pub(super) async fn session_started(
    hooks: &mut Hooks,
    headless: bool,
    conv: &Conversation,
    resumed: bool,
) {
    if let Some(log) = conv.log() {
        hooks.set_session(&conv.session_id, Some(log.path.clone()));
    } else {
        hooks.set_session(&conv.session_id, None);
    }
    if !headless {
        ask_project_consent(hooks, conv).await;
    }
    if !hooks.has(HookEvent::SessionStart) {
        return;
    }
    let result = hooks.session_start(resumed).await;
    show_errors(conv, &result).await;
    hooks.hold(result.context);
}

/// Stop: Some(reason) when a hook blocks the stop; the reason is the model's next user
/// message. `blocks` counts this turn's blocks; past the bound the turn ends.
pub(super) async fn stop_blocked(
    hooks: &mut Hooks,
    conv: &mut Conversation,
    blocks: &mut usize,
) -> bool {
    if !hooks.has(HookEvent::Stop) {
        return false;
    }
    let result = hooks.stop(*blocks > 0).await;
    show_errors(conv, &result).await;
    let Some(Block { reason, hook }) = result.block else {
        return false;
    };
    if *blocks >= MAX_STOP_BLOCKS {
        conv.emit(AgentEvent::Fact(Event::Notice { message: format!(
            "hooks: the {hook} blocked the stop {MAX_STOP_BLOCKS} times in a row; the turn ends here"
        ) }))
        .await;
        return false;
    }
    *blocks += 1;
    conv.push_user(vec![ContentBlock::Text {
        text: format!("Stop hook feedback: {reason}"),
    }])
    .await;
    true
}

/// SessionEnd: nothing to decide; errors shown.
pub(super) async fn session_end(hooks: &mut Hooks, conv: &Conversation) {
    if hooks.has(HookEvent::SessionEnd) {
        let result = hooks.session_end().await;
        show_errors(conv, &result).await;
    }
}

/// PreCompact, with Claude Code's `trigger` ("manual" for /compact, else "auto").
pub(super) async fn pre_compact(
    hooks: &mut Hooks,
    conv: &Conversation,
    trigger: CompactionTrigger,
) {
    if hooks.has(HookEvent::PreCompact) {
        let result = hooks
            .pre_compact(trigger == CompactionTrigger::Manual)
            .await;
        show_errors(conv, &result).await;
    }
}

/// `/hooks`: the hooks in force, where each comes from and how it last ended.
pub(super) async fn show(hooks: &Hooks, conv: &Conversation) {
    let lines = hooks.lines();
    let text = if lines.is_empty() {
        "No hooks in force. Add [[hooks.EVENT]] tables to config.toml (decision 0086).".to_string()
    } else {
        let mut text = format!("Hooks in force ({}):", lines.len());
        for line in lines {
            let matcher = line.matcher.map(|m| format!(" [{m}]")).unwrap_or_default();
            let last = line.last.unwrap_or_else(|| "not run yet".into());
            text.push_str(&format!(
                "\n  {}{matcher}: {}  ({})  last: {last}",
                line.event, line.command, line.source
            ));
        }
        text
    };
    conv.emit(AgentEvent::Fact(Event::Notice { message: text }))
        .await;
}

fn context_blocks(context: Vec<String>) -> Vec<ContentBlock> {
    context
        .into_iter()
        .map(|text| ContentBlock::Text {
            text: format!("<hook-context>\n{}\n</hook-context>", text.trim_end()),
        })
        .collect()
}
