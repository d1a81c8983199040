//! Grants that end: "allow for N minutes" and "allow for the next N calls". The person's
//! answer names the limit; the gate keeps what is left and checks it at the moment of each
//! call (`crate::gate::Grants`); the audit record of a call it let through says what was
//! left after it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How long a limited grant lasts, as the person chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantLimit {
    /// From the answer on, for this many minutes.
    Minutes(u32),
    /// This many calls in all, the one asked about included.
    Calls(u32),
}

impl GrantLimit {
    /// The dialog's presets, each with its key (none of the dialog's other keys: y, a, s,
    /// n, d, and l for the list).
    pub const PRESETS: [(char, GrantLimit); 2] =
        [('m', GrantLimit::Minutes(15)), ('c', GrantLimit::Calls(5))];

    /// The dialog's label: "Allow 15 min", "Allow next 5 calls".
    pub fn label(self) -> String {
        match self {
            GrantLimit::Minutes(m) => format!("Allow {m} min"),
            GrantLimit::Calls(n) => format!("Allow next {n} calls"),
        }
    }

    /// "for 15 minutes", "for the next 5 calls".
    pub fn describe(self) -> String {
        match self {
            GrantLimit::Minutes(1) => "for 1 minute".into(),
            GrantLimit::Minutes(m) => format!("for {m} minutes"),
            GrantLimit::Calls(1) => "for the next call".into(),
            GrantLimit::Calls(n) => format!("for the next {n} calls"),
        }
    }
}

/// What is left of a limited grant after a call it let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantLeft {
    Calls(u32),
    /// Whole seconds until it ends.
    Seconds(u64),
}

impl GrantLeft {
    /// "4 calls left", "no calls left", "14 min 5 s left".
    pub fn describe(self) -> String {
        match self {
            GrantLeft::Calls(0) => "no calls left".into(),
            GrantLeft::Calls(1) => "1 call left".into(),
            GrantLeft::Calls(n) => format!("{n} calls left"),
            GrantLeft::Seconds(s) if s >= 60 => format!("{} min {} s left", s / 60, s % 60),
            GrantLeft::Seconds(s) => format!("{s} s left"),
        }
    }
}

/// One grant in force, as the gate reports the session's grants whenever they change
/// (given, spent, ended, revoked) and `/permissions` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantLine {
    /// The grant's name (the tool, `read_mcp_resource(docs)`, `sampling(SERVER)`): the
    /// name `UiCommand::RevokeGrant` takes.
    pub name: String,
    /// None: for the rest of the session.
    pub left: Option<GrantEnd>,
}

/// What is left of a limited grant in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantEnd {
    Calls(u32),
    /// When it ends (wall clock, from the gate's own clock at the change).
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
            Some(GrantEnd::Calls(n)) => {
                format!("allow {} ({})", self.name, GrantLeft::Calls(n).describe())
            }
            Some(GrantEnd::Until(until)) => format!(
                "allow {} (until {} UTC)",
                self.name,
                until.format("%H:%M:%S")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_line_says_what_is_left() {
        assert_eq!(GrantLine::session("bash").describe(), "allow bash");
        let line = |left| GrantLine {
            name: "mcp__deploy__trigger".into(),
            left: Some(left),
        };
        assert_eq!(
            line(GrantEnd::Calls(1)).describe(),
            "allow mcp__deploy__trigger (1 call left)"
        );
        let until = DateTime::parse_from_rfc3339("2026-12-06T14:15:00.000Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            line(GrantEnd::Until(until)).describe(),
            "allow mcp__deploy__trigger (until 14:15:00 UTC)"
        );
    }
}
