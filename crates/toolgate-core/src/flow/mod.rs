//! Where an argument came from (issue 44, decisions 0096 and 0098): labels for the values
//! that entered the session through untrusted tool results, and the `flow` rule that asks
//! before a call sends one of them on.
//!
//! - [`tokens`]: what is worth tracking (URLs and hosts, e-mail addresses, account
//!   numbers, digit runs of 8+), normalised;
//! - [`shape`]: a result read as JSON, YAML-ish lines or one string, its leaves each free
//!   text or record data;
//! - [`labels`]: one result's labels (the session log's `flow_labels` record) and the
//!   session's state built from them;
//! - [`rule`]: the rule's two tiers (tokens; whole values, and what a steered lookup
//!   returned) and the question's reason.

pub mod labels;
pub mod rule;
pub mod shape;
pub mod tokens;

pub use labels::{FlowLabels, ResultLabels, Source, Steer};
pub use rule::{FLOW_RULE, Taint, Tiers, check, reason, steering};
pub use tokens::{Token, TokenKind, tokens_in};

/// A constant pattern, compiled once. Each module's tests prove its patterns compile, so
/// None never happens at run time; the code still never panics on it.
fn compiled(pattern: &str) -> Option<regex::Regex> {
    regex::Regex::new(pattern).ok()
}
