//! The audit record of one decision, appended by the agent to the session log.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Decision, GrantLeft, GrantLimit, RuleSource, Verdict};

/// The final outcome of a permission decision (an Ask is never final: someone answers it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permit {
    Allow,
    Deny,
}

/// The person's answer to a tool-call request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", content = "note", rename_all = "snake_case")]
pub enum PersonAnswer {
    AllowOnce,
    /// This tool, for the rest of the session.
    AllowSession,
    /// Written as an allow rule into the workspace config.
    AllowAlways,
    /// This tool, for a while or for a number of calls (this one included).
    AllowLimited(GrantLimit),
    Deny,
    DenyWithNote(String),
}

impl PersonAnswer {
    /// "Deny with a note"; an empty note is a plain deny.
    pub fn deny_with(note: String) -> PersonAnswer {
        let note = note.trim();
        if note.is_empty() {
            PersonAnswer::Deny
        } else {
            PersonAnswer::DenyWithNote(note.to_string())
        }
    }

    pub fn permit(&self) -> Permit {
        match self {
            PersonAnswer::AllowOnce
            | PersonAnswer::AllowSession
            | PersonAnswer::AllowAlways
            | PersonAnswer::AllowLimited(_) => Permit::Allow,
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => Permit::Deny,
        }
    }
}

/// Who decided, with what a person needs to find or change it: the rule and its file, the
/// shipped default or guard, their own answer, a session grant, or a front end deciding
/// on their behalf. This type travels unchanged to the console, the session log and the
/// headless JSONL stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Decider {
    /// A rule from a config file or a command-line flag.
    Rule { rule: String, source: RuleSource },
    /// A shipped default (assets/permissions.toml) or one of the built-in guards.
    Default { rule: String },
    /// The person's earlier "allow for this session".
    SessionGrant { tool: String },
    /// The permission mode in force decided, where no rule did.
    Mode { mode: super::PermissionMode },
    /// The person's earlier "allow for N minutes / the next N calls", and what is left of
    /// it after this call.
    LimitedGrant {
        tool: String,
        limit: GrantLimit,
        left: GrantLeft,
    },
    /// The person, answering in the inbox; `asked_by` is the rule that asked.
    Person {
        answer: PersonAnswer,
        asked_by: String,
    },
    /// Nobody answered before the request's deadline: its safe default (deny) applied.
    Expired { asked_by: String },
    /// The request was dismissed without an answer (front end gone): denied.
    Dismissed { asked_by: String },
    /// Non-interactive mode answers an Ask on the person's behalf: denied.
    Headless { asked_by: String },
    /// A PreToolUse hook (decision 0086): its event, command and file; `reason` is what
    /// it said.
    Hook { hook: String, reason: String },
}

impl Decider {
    /// Who decided a verdict the policy reached on its own (Allow or Deny).
    pub fn from_verdict(verdict: &Verdict) -> Decider {
        match &verdict.source {
            RuleSource::Default => Decider::Default {
                rule: verdict.rule.clone(),
            },
            RuleSource::SessionGrant => Decider::SessionGrant {
                tool: verdict.rule.clone(),
            },
            RuleSource::Mode(mode) => Decider::Mode { mode: *mode },
            source @ (RuleSource::UserConfig(_)
            | RuleSource::ProjectConfig(_)
            | RuleSource::Flag
            | RuleSource::Managed(_)) => Decider::Rule {
                rule: verdict.rule.clone(),
                source: source.clone(),
            },
        }
    }

    /// Whether the managed policy decided (its rule allowed or denied, or its ask rule
    /// asked the question that was answered).
    pub fn is_managed(&self) -> bool {
        matches!(self, Decider::Rule { source, .. } if source.is_managed())
    }

    /// The short word logs and filters use (`rule`, `default`, `person`, …).
    pub fn word(&self) -> &'static str {
        match self {
            Decider::Rule { .. } => "rule",
            Decider::Default { .. } => "default",
            Decider::SessionGrant { .. } => "session_grant",
            Decider::Mode { .. } => "mode",
            Decider::LimitedGrant { .. } => "limited_grant",
            Decider::Person { .. } => "person",
            Decider::Expired { .. } => "expired",
            Decider::Dismissed { .. } => "dismissed",
            Decider::Headless { .. } => "headless",
            Decider::Hook { .. } => "hook",
        }
    }
}

impl Decider {
    /// The rule, grant or question behind the decision, in a few words (`toolgate audit
    /// export`'s `detail`).
    pub fn detail(&self) -> String {
        match self {
            Decider::Rule { rule, source } => format!("rule {rule} ({source})"),
            Decider::Default { rule } => format!("default {rule}"),
            Decider::SessionGrant { tool } => format!("session grant {tool}"),
            Decider::Mode { mode } => format!("{mode} mode"),
            Decider::LimitedGrant { tool, limit, left } => {
                format!("grant {tool} {} ({})", limit.describe(), left.describe())
            }
            Decider::Person { answer, asked_by } => {
                let answer = match answer {
                    PersonAnswer::AllowOnce => "allow once".to_string(),
                    PersonAnswer::AllowSession => "allow for the session".to_string(),
                    PersonAnswer::AllowAlways => "allow always".to_string(),
                    PersonAnswer::AllowLimited(limit) => format!("allow {}", limit.describe()),
                    PersonAnswer::Deny => "deny".to_string(),
                    PersonAnswer::DenyWithNote(note) => format!("deny: {note}"),
                };
                format!("{answer} (asked by {asked_by})")
            }
            Decider::Expired { asked_by }
            | Decider::Dismissed { asked_by }
            | Decider::Headless { asked_by } => format!("asked by {asked_by}"),
            Decider::Hook { hook, reason } if reason.is_empty() => hook.clone(),
            Decider::Hook { hook, reason } => format!("{hook}: {reason}"),
        }
    }
}

/// One permission decision: what the session log keeps, the console shows on the tool
/// card, and headless mode prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// RFC 3339, UTC.
    pub time: String,
    pub tool: String,
    /// First 16 hex characters of the SHA-256 of the input's canonical JSON.
    pub input_digest: String,
    pub decision: Permit,
    /// Why it was denied (the policy's or the person's reason).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why: Option<String>,
    pub decider: Decider,
}

impl AuditRecord {
    pub fn new(
        tool: &str,
        input: &Value,
        decision: Permit,
        why: Option<String>,
        decider: Decider,
    ) -> AuditRecord {
        Self::new_at(tool, input, decision, why, decider, Utc::now())
    }

    pub fn new_at(
        tool: &str,
        input: &Value,
        decision: Permit,
        why: Option<String>,
        decider: Decider,
        time: DateTime<Utc>,
    ) -> AuditRecord {
        AuditRecord {
            time: time.to_rfc3339_opts(SecondsFormat::Millis, true),
            tool: tool.to_string(),
            input_digest: input_digest(input),
            decision,
            why,
            decider,
        }
    }

    /// The record of a verdict the policy reached without asking. None for an Ask, which
    /// someone still has to answer.
    pub fn from_verdict(tool: &str, input: &Value, verdict: &Verdict) -> Option<AuditRecord> {
        let (decision, why) = match &verdict.decision {
            Decision::Allow => (Permit::Allow, None),
            Decision::Deny { why } => (Permit::Deny, Some(why.clone())),
            Decision::Ask { .. } => return None,
        };
        Some(AuditRecord::new(
            tool,
            input,
            decision,
            why,
            Decider::from_verdict(verdict),
        ))
    }
}

/// SHA-256 of canonical JSON (object keys sorted at every level, no whitespace), 16 hex chars.
pub fn input_digest(input: &Value) -> String {
    let digest = Sha256::digest(crate::canonical::canonical_json(input).as_bytes());
    hex::encode(digest)[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_ignores_key_order_but_not_values() {
        let a = input_digest(&json!({"b": 1, "a": {"y": [1, 2], "x": "s"}}));
        let b = input_digest(&json!({"a": {"x": "s", "y": [1, 2]}, "b": 1}));
        let c = input_digest(&json!({"a": {"x": "s", "y": [2, 1]}, "b": 1}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 16);
        // sha256 of `{}`.
        assert_eq!(input_digest(&json!({})), "44136fa355b3678a");
    }

    #[test]
    fn records_serialize_who_decided_with_rule_and_file() {
        let verdict = Verdict {
            decision: Decision::Deny {
                why: "denied by rule mcp__deploy".into(),
            },
            rule: "mcp__deploy".into(),
            source: RuleSource::ProjectConfig("/w/.toolgate/config.toml".into()),
        };
        let mut rec =
            AuditRecord::from_verdict("mcp__deploy__trigger", &json!({"env": "prod"}), &verdict)
                .unwrap();
        rec.time = "2026-12-02T15:00:00.000Z".into();
        let line = serde_json::to_value(&rec).unwrap();
        assert_eq!(line["decision"], "deny");
        assert_eq!(line["why"], "denied by rule mcp__deploy");
        assert_eq!(line["decider"]["by"], "rule");
        assert_eq!(line["decider"]["rule"], "mcp__deploy");
        assert_eq!(line["decider"]["source"]["source"], "project_config");
        assert_eq!(
            line["decider"]["source"]["path"],
            "/w/.toolgate/config.toml"
        );
        let back: AuditRecord = serde_json::from_value(line).unwrap();
        assert_eq!(back, rec);

        let ask = Verdict {
            decision: Decision::Ask {
                why: "unlisted".into(),
            },
            rule: "default: unlisted MCP tool".into(),
            source: RuleSource::Default,
        };
        assert_eq!(AuditRecord::from_verdict("t", &json!({}), &ask), None);

        let person = Decider::Person {
            answer: PersonAnswer::DenyWithNote("not on a Friday".into()),
            asked_by: "mcp__deploy__trigger".into(),
        };
        let value = serde_json::to_value(&person).unwrap();
        assert_eq!(value["by"], "person");
        assert_eq!(value["answer"]["answer"], "deny_with_note");
        assert_eq!(value["answer"]["note"], "not on a Friday");
        assert_eq!(PersonAnswer::deny_with("  ".into()), PersonAnswer::Deny);

        let limited = Decider::LimitedGrant {
            tool: "mcp__deploy__trigger".into(),
            limit: GrantLimit::Calls(5),
            left: GrantLeft::Calls(3),
        };
        let value = serde_json::to_value(&limited).unwrap();
        assert_eq!(value["by"], "limited_grant");
        assert_eq!(value["limit"]["calls"], 5);
        assert_eq!(value["left"]["calls"], 3);
        assert_eq!(
            limited.detail(),
            "grant mcp__deploy__trigger for the next 5 calls (3 calls left)"
        );
        let answer =
            serde_json::to_value(PersonAnswer::AllowLimited(GrantLimit::Minutes(15))).unwrap();
        assert_eq!(
            answer,
            serde_json::json!({"answer": "allow_limited", "note": {"minutes": 15}})
        );
    }
}
