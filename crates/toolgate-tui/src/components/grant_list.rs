//! The grants `/permissions` lists (and revokes), kept from the decisions the console
//! sees: a person's "allow for this session" or "allow for N minutes / the next N calls",
//! and each call a limited grant let through, which says what is left of it. The gate
//! keeps the grants themselves and checks them at each call; this list is what the person
//! reads.

use chrono::{DateTime, Duration, Utc};

use crate::protocol::{AuditRecord, Decider, GrantLeft, GrantLimit, PersonAnswer};

/// One grant in force, as `/permissions` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantLine {
    /// The grant's name (the tool, `read_mcp_resource(docs)`, `sampling(SERVER)`).
    pub name: String,
    /// None: for the rest of the session.
    pub left: Option<Left>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    Calls(u32),
    /// When it ends (its answer's time plus its minutes).
    Until(DateTime<Utc>),
}

impl GrantLine {
    /// A grant for the rest of the session.
    pub fn session(name: &str) -> GrantLine {
        GrantLine {
            name: name.to_string(),
            left: None,
        }
    }

    /// "allow mcp__deploy__trigger (3 calls left)", "… (until 14:05:00 UTC)".
    pub fn describe(&self) -> String {
        match self.left {
            None => format!("allow {}", self.name),
            Some(Left::Calls(n)) => {
                format!("allow {} ({})", self.name, GrantLeft::Calls(n).describe())
            }
            Some(Left::Until(until)) => format!(
                "allow {} (until {} UTC)",
                self.name,
                until.format("%H:%M:%S")
            ),
        }
    }
}

/// Notes the grant a decision gave, or what a call left of a limited one.
pub fn note_grant(grants: &mut Vec<GrantLine>, record: &AuditRecord) {
    let at = DateTime::parse_from_rfc3339(&record.time)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|_| Utc::now());
    let (name, left) = match &record.decider {
        Decider::Person {
            answer: PersonAnswer::AllowSession,
            ..
        } => (&record.tool, None),
        Decider::Person {
            answer: PersonAnswer::AllowLimited(limit),
            ..
        } => (
            &record.tool,
            Some(match *limit {
                GrantLimit::Calls(n) => Left::Calls(n.saturating_sub(1)),
                GrantLimit::Minutes(m) => Left::Until(at + Duration::minutes(i64::from(m))),
            }),
        ),
        Decider::LimitedGrant { tool, left, .. } => (
            tool,
            Some(match *left {
                GrantLeft::Calls(n) => Left::Calls(n),
                GrantLeft::Seconds(s) => {
                    Left::Until(at + Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX)))
                }
            }),
        ),
        _ => return,
    };
    grants.retain(|g| &g.name != name);
    if left != Some(Left::Calls(0)) {
        grants.push(GrantLine {
            name: name.clone(),
            left,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(decider: Decider) -> AuditRecord {
        let mut record = AuditRecord::new(
            "mcp__deploy__trigger",
            &json!({}),
            crate::protocol::Permit::Allow,
            None,
            decider,
        );
        record.time = "2026-12-06T14:00:00.000Z".into();
        record
    }

    #[test]
    fn limited_grants_show_what_is_left_and_go_when_used_up() {
        let mut grants = vec![GrantLine::session("bash")];
        note_grant(
            &mut grants,
            &record(Decider::Person {
                answer: PersonAnswer::AllowLimited(GrantLimit::Calls(3)),
                asked_by: "mcp__deploy__trigger".into(),
            }),
        );
        assert_eq!(
            grants[1].describe(),
            "allow mcp__deploy__trigger (2 calls left)"
        );
        let used = |left| {
            record(Decider::LimitedGrant {
                tool: "mcp__deploy__trigger".into(),
                limit: GrantLimit::Calls(3),
                left: GrantLeft::Calls(left),
            })
        };
        note_grant(&mut grants, &used(1));
        assert_eq!(
            grants[1].describe(),
            "allow mcp__deploy__trigger (1 call left)"
        );
        note_grant(&mut grants, &used(0));
        assert_eq!(grants, vec![GrantLine::session("bash")]);

        note_grant(
            &mut grants,
            &record(Decider::Person {
                answer: PersonAnswer::AllowLimited(GrantLimit::Minutes(15)),
                asked_by: "mcp__deploy__trigger".into(),
            }),
        );
        assert_eq!(
            grants[1].describe(),
            "allow mcp__deploy__trigger (until 14:15:00 UTC)"
        );
    }
}
