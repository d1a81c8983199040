//! What a hook's ending means, per Claude Code's protocol: exit 0 goes on (its stdout may
//! be JSON that decides), exit 2 blocks (stderr is the reason), any other code is an error
//! that does not block. Pure: no processes here.

use serde_json::Value;

use super::runner::Ran;

/// A PreToolUse hook's say on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreToolSay {
    /// Nothing to say (exit 0 without a decision).
    Nothing,
    Allow(String),
    Ask(String),
    Deny(String),
    /// It failed or timed out: the call must not go through on its word.
    Failed(String),
}

/// The parts of Claude Code's JSON output toolgate reads.
#[derive(Debug, Default)]
pub struct JsonOutput {
    /// `decision` ("block", or the older "approve").
    pub decision: Option<String>,
    pub reason: Option<String>,
    /// `hookSpecificOutput.permissionDecision`.
    pub permission: Option<String>,
    pub permission_reason: Option<String>,
    pub updated_input: Option<Value>,
    pub additional_context: Option<String>,
    /// PermissionRequest: `hookSpecificOutput.decision.behavior` and its `message`.
    pub behavior: Option<String>,
    pub message: Option<String>,
}

/// stdout read as the JSON object Claude Code documents; None when it is not one (plain
/// text, which some events take as context).
pub fn json(stdout: &str) -> Option<JsonOutput> {
    let value: Value = serde_json::from_str(stdout.trim()).ok()?;
    let object = value.as_object()?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let specific = object.get("hookSpecificOutput");
    let field = |name: &str| specific.and_then(|s| s.get(name));
    Some(JsonOutput {
        decision: text(object.get("decision")),
        reason: text(object.get("reason")),
        permission: text(field("permissionDecision")),
        permission_reason: text(field("permissionDecisionReason")),
        updated_input: field("updatedInput").filter(|v| v.is_object()).cloned(),
        additional_context: text(field("additionalContext")),
        behavior: text(field("decision").and_then(|d| d.get("behavior"))),
        message: text(field("decision").and_then(|d| d.get("message"))),
    })
}

/// A PreToolUse hook's ending as its say, and the input it would have the call run with.
pub fn pre_tool(ran: &Ran) -> (PreToolSay, Option<Value>) {
    match ran {
        Ran::Exited {
            code: 0, stdout, ..
        } => {
            let Some(out) = json(stdout) else {
                return (PreToolSay::Nothing, None);
            };
            let reason = out
                .permission_reason
                .clone()
                .or(out.reason.clone())
                .unwrap_or_default();
            let say = match out.permission.as_deref().or(match out.decision.as_deref() {
                // The older top-level fields Claude Code still reads.
                Some("approve") => Some("allow"),
                Some("block") => Some("deny"),
                _ => None,
            }) {
                Some("allow") => PreToolSay::Allow(reason),
                Some("deny") => PreToolSay::Deny(reason),
                Some("ask") => PreToolSay::Ask(reason),
                Some(other) => PreToolSay::Failed(format!(
                    "unknown permissionDecision \"{other}\" (expected allow, deny or ask)"
                )),
                None => PreToolSay::Nothing,
            };
            (say, out.updated_input)
        }
        Ran::Exited {
            code: 2, stderr, ..
        } => (PreToolSay::Deny(stderr.trim().to_string()), None),
        other => (PreToolSay::Failed(failure(other)), None),
    }
}

/// A hook's ending that blocks (exit 2, or JSON `decision: "block"`): the reason.
pub fn block_reason(ran: &Ran) -> Option<String> {
    match ran {
        Ran::Exited {
            code: 2, stderr, ..
        } => Some(stderr.trim().to_string()),
        Ran::Exited {
            code: 0, stdout, ..
        } => json(stdout)
            .filter(|out| out.decision.as_deref() == Some("block"))
            .map(|out| out.reason.unwrap_or_default()),
        _ => None,
    }
}

/// Context a hook adds (UserPromptSubmit, SessionStart): `additionalContext`, or plain
/// stdout when it is not JSON.
pub fn context(ran: &Ran) -> Option<String> {
    let Ran::Exited {
        code: 0, stdout, ..
    } = ran
    else {
        return None;
    };
    let text = match json(stdout) {
        Some(out) => out.additional_context?,
        None => stdout.trim().to_string(),
    };
    (!text.trim().is_empty()).then_some(text)
}

/// A hook's answer to a question about to be asked: Some(true) allow, Some(false) deny.
pub fn permission_answer(ran: &Ran) -> Option<(bool, String)> {
    match ran {
        Ran::Exited {
            code: 2, stderr, ..
        } => Some((false, stderr.trim().to_string())),
        Ran::Exited {
            code: 0, stdout, ..
        } => {
            let out = json(stdout)?;
            let message = out.message.unwrap_or_default();
            match out.behavior.as_deref() {
                Some("allow") => Some((true, message)),
                Some("deny") => Some((false, message)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// An ending that is an error to show the person (not exit 0, not exit 2).
pub fn error(ran: &Ran) -> Option<String> {
    match ran {
        Ran::Exited { code: 0 | 2, .. } => None,
        other => Some(failure(other)),
    }
}

/// A short line saying how a hook ended (for `/hooks` and notices).
pub fn summary(ran: &Ran) -> String {
    match ran {
        Ran::Exited { code: 0, .. } => "exit 0".into(),
        Ran::Exited {
            code: 2, stderr, ..
        } => format!("blocked (exit 2): {}", stderr.trim()),
        other => failure(other),
    }
}

fn failure(ran: &Ran) -> String {
    match ran {
        Ran::Exited { code, stderr, .. } => {
            let stderr = stderr.trim();
            if stderr.is_empty() {
                format!("failed with exit code {code}")
            } else {
                format!("failed with exit code {code}: {stderr}")
            }
        }
        Ran::TimedOut(after) => format!("timed out after {} s and was stopped", after.as_secs()),
        Ran::Failed(why) => why.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran::Exited {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn pre_tool_reads_claude_codes_fields() {
        let out = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"a":1}}}"#;
        let (say, input) = pre_tool(&exited(0, out, ""));
        assert_eq!(say, PreToolSay::Allow("ok".into()));
        assert_eq!(input, Some(serde_json::json!({"a": 1})));
        assert_eq!(
            pre_tool(&exited(2, "", "frozen\n")).0,
            PreToolSay::Deny("frozen".into())
        );
        assert_eq!(pre_tool(&exited(0, "hello", "")).0, PreToolSay::Nothing);
        assert!(matches!(
            pre_tool(&exited(1, "", "oops")).0,
            PreToolSay::Failed(why) if why.contains("exit code 1: oops")
        ));
    }

    #[test]
    fn context_and_block_and_answers() {
        assert_eq!(context(&exited(0, "plain\n", "")), Some("plain".into()));
        let ctx = r#"{"hookSpecificOutput":{"additionalContext":"more"}}"#;
        assert_eq!(context(&exited(0, ctx, "")), Some("more".into()));
        let block = r#"{"decision":"block","reason":"again"}"#;
        assert_eq!(block_reason(&exited(0, block, "")), Some("again".into()));
        let allow = r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"}}}"#;
        assert_eq!(
            permission_answer(&exited(0, allow, "")),
            Some((true, String::new()))
        );
        assert_eq!(
            error(&exited(3, "", "")),
            Some("failed with exit code 3".into())
        );
    }
}
