//! Each event's payload: the fields a hook reads on stdin besides the common ones
//! (`session_id`, `cwd`, `hook_event_name`, `transcript_path`), named as Claude Code
//! names them, and what the hooks' answers mean for it.

use serde_json::{Value, json};

use super::output;
use super::{EventResult, HookEvent, Hooks, PreToolDecision, PreToolSay, object};

impl Hooks {
    /// PreToolUse for one call. None when no hook matched or none had a say. A deny beats
    /// a failure, a failure beats an ask, an ask beats an allow.
    pub async fn pre_tool_use(&mut self, tool: &str, input: &Value) -> Option<PreToolDecision> {
        let fields = object(json!({ "tool_name": tool, "tool_input": input }));
        let endings = self.run(HookEvent::PreToolUse, Some(tool), fields).await;
        let rank = |say: &PreToolSay| match say {
            PreToolSay::Nothing => 0,
            PreToolSay::Allow(_) => 1,
            PreToolSay::Ask(_) => 2,
            PreToolSay::Failed(_) => 3,
            PreToolSay::Deny(_) => 4,
        };
        endings
            .into_iter()
            .map(|(hook, ran)| {
                let (say, updated_input) = output::pre_tool(&ran);
                PreToolDecision {
                    say,
                    hook,
                    updated_input,
                }
            })
            .filter(|d| d.say != PreToolSay::Nothing)
            .max_by_key(|d| rank(&d.say))
    }

    /// PermissionRequest: a question about a call is about to be asked; a hook may answer.
    pub async fn permission_request(&mut self, tool: &str, input: &Value) -> EventResult {
        let fields = json!({ "tool_name": tool, "tool_input": input });
        self.event(HookEvent::PermissionRequest, Some(tool), fields)
            .await
    }

    /// Notification: a question about a call of `tool` waits for the person.
    pub async fn permission_prompt(&mut self, tool: &str) -> EventResult {
        let message = format!("toolgate needs your permission to use {tool}");
        let fields = json!({ "message": message, "notification_type": "permission_prompt" });
        self.event(HookEvent::Notification, None, fields).await
    }

    /// PostToolUse: a call that ran, with the response the model is about to read.
    pub async fn post_tool_use(
        &mut self,
        tool: &str,
        input: &Value,
        response: &str,
    ) -> EventResult {
        let fields = json!({
            "tool_name": tool,
            "tool_input": input,
            "tool_response": response,
        });
        self.event(HookEvent::PostToolUse, Some(tool), fields).await
    }

    /// UserPromptSubmit: the person's prompt, before the model sees it.
    pub async fn user_prompt_submit(&mut self, prompt: &str) -> EventResult {
        self.event(
            HookEvent::UserPromptSubmit,
            None,
            json!({ "prompt": prompt }),
        )
        .await
    }

    /// SessionStart: `resumed` says whether the session goes on from its log.
    pub async fn session_start(&mut self, resumed: bool) -> EventResult {
        let source = if resumed { "resume" } else { "startup" };
        self.event(HookEvent::SessionStart, None, json!({ "source": source }))
            .await
    }

    /// Stop: the turn is about to end; `active` says a Stop hook already kept it going.
    pub async fn stop(&mut self, active: bool) -> EventResult {
        let fields = json!({ "stop_hook_active": active });
        self.event(HookEvent::Stop, None, fields).await
    }

    /// SessionEnd.
    pub async fn session_end(&mut self) -> EventResult {
        self.event(HookEvent::SessionEnd, None, json!({ "reason": "other" }))
            .await
    }

    /// PreCompact, with Claude Code's `trigger` ("manual" for /compact, else "auto").
    pub async fn pre_compact(&mut self, manual: bool) -> EventResult {
        let trigger = if manual { "manual" } else { "auto" };
        let fields = json!({ "trigger": trigger, "custom_instructions": "" });
        self.event(HookEvent::PreCompact, None, fields).await
    }
}
