//! The audit record of one decision, appended by the agent to the session log.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Decision, RuleSource, Verdict};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Allow,
    Ask,
    Deny,
}

/// Who decided: a configured rule, a shipped default or guard, the user in the dialog, or
/// the headless front end answering a question on the user's behalf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    Rule,
    Default,
    User,
    Headless,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// RFC 3339, UTC.
    pub time: String,
    pub tool: String,
    /// First 16 hex characters of the SHA-256 of the input's canonical JSON.
    pub input_digest: String,
    pub decision: DecisionKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why: Option<String>,
    pub decider: Decider,
    pub rule: String,
    pub source: RuleSource,
}

impl AuditRecord {
    pub fn from_verdict(tool: &str, input: &Value, verdict: &Verdict) -> AuditRecord {
        Self::from_verdict_at(tool, input, verdict, Utc::now())
    }

    pub fn from_verdict_at(
        tool: &str,
        input: &Value,
        verdict: &Verdict,
        time: DateTime<Utc>,
    ) -> AuditRecord {
        let (decision, why) = match &verdict.decision {
            Decision::Allow => (DecisionKind::Allow, None),
            Decision::Ask { why } => (DecisionKind::Ask, Some(why.clone())),
            Decision::Deny { why } => (DecisionKind::Deny, Some(why.clone())),
        };
        let decider = match verdict.source {
            RuleSource::Default => Decider::Default,
            RuleSource::UserAnswer => Decider::User,
            RuleSource::UserConfig(_)
            | RuleSource::ProjectConfig(_)
            | RuleSource::Flag
            | RuleSource::SessionGrant => Decider::Rule,
        };
        AuditRecord {
            time: time.to_rfc3339_opts(SecondsFormat::Millis, true),
            tool: tool.to_string(),
            input_digest: input_digest(input),
            decision,
            why,
            decider,
            rule: verdict.rule.clone(),
            source: verdict.source.clone(),
        }
    }

    /// For the headless front end, which answers questions by its flags.
    pub fn decided_by(mut self, decider: Decider) -> AuditRecord {
        self.decider = decider;
        self
    }
}

/// SHA-256 of canonical JSON (object keys sorted at every level, no whitespace), 16 hex chars.
pub fn input_digest(input: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(input, &mut canonical);
    let digest = Sha256::digest(canonical.as_bytes());
    hex::encode(digest)[..16].to_string()
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(*k) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
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
    fn record_from_verdict_serializes_what_the_log_needs() {
        let verdict = Verdict {
            decision: Decision::Ask {
                why: "rule mcp__deploy__trigger asks".into(),
            },
            rule: "mcp__deploy__trigger".into(),
            source: RuleSource::Default,
        };
        let time = DateTime::parse_from_rfc3339("2026-12-02T15:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let rec = AuditRecord::from_verdict_at(
            "mcp__deploy__trigger",
            &json!({"env": "prod"}),
            &verdict,
            time,
        );
        let line = serde_json::to_value(&rec).unwrap();
        assert_eq!(line["time"], "2026-12-02T15:00:00.000Z");
        assert_eq!(line["decision"], "ask");
        assert_eq!(line["decider"], "default");
        assert_eq!(line["rule"], "mcp__deploy__trigger");
        assert_eq!(line["source"]["source"], "default");
        let user =
            AuditRecord::from_verdict("x", &json!({}), &Verdict::user_answer(false, Some("no")));
        assert_eq!(user.decider, Decider::User);
        assert_eq!(user.decision, DecisionKind::Deny);
        assert_eq!(
            user.clone().decided_by(Decider::Headless).decider,
            Decider::Headless
        );
        let back: AuditRecord = serde_json::from_value(line).unwrap();
        assert_eq!(back, rec);
    }
}
