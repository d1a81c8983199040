//! The session's grants, in one store: every "allow for this session" the person gave — a
//! tool (`mcp__deploy__trigger`, `read_mcp_resource(docs)`), bash outside the sandbox, a
//! server's sampling (`sampling(SERVER)`). A grant is named as the decision record names
//! it, so the name the front end shows is the name it revokes.
//!
//! Shared by handle: the gate decides tool calls on the agent's task, sampling requests
//! are decided on tasks of their own, beside a running turn.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

/// What the session grant for unsandboxed bash is recorded as.
pub const UNSANDBOXED_GRANT: &str = "bash (outside the sandbox)";

/// The grant that lets `server` sample for the rest of the session.
pub fn sampling_grant(server: &str) -> String {
    format!("sampling({server})")
}

/// A sampling grant (`sampling(SERVER)`): it may be in use while a turn runs, so it is
/// revoked at once rather than after the turn.
pub fn is_sampling_grant(name: &str) -> bool {
    name.strip_prefix("sampling(")
        .is_some_and(|rest| rest.ends_with(')'))
}

/// The session grants by name; clones share one store.
#[derive(Debug, Clone, Default)]
pub struct Grants(Arc<Mutex<BTreeSet<String>>>);

impl Grants {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn grant(&self, name: &str) {
        self.lock().insert(name.to_string());
    }

    pub fn contains(&self, name: &str) -> bool {
        self.lock().contains(name)
    }

    /// Every grant in force, sorted.
    pub fn names(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }

    /// Runs `f` on the grants in force (the policy reads them while it decides).
    pub fn with<R>(&self, f: impl FnOnce(&BTreeSet<String>) -> R) -> R {
        f(&self.lock())
    }

    /// Returns whether a grant existed.
    fn remove(&self, name: &str) -> bool {
        self.lock().remove(name)
    }

    /// Revokes the grant named `name`; returns the notice for the person.
    pub fn revoke(&self, name: &str) -> String {
        if self.remove(name) {
            format!("Session grant for {name} revoked.")
        } else {
            format!("{name} had no session grant.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_store_for_every_kind_of_grant() {
        let grants = Grants::default();
        let shared = grants.clone();
        grants.grant("mcp__deploy__trigger");
        grants.grant("bash");
        shared.grant(&sampling_grant("notes"));
        assert_eq!(
            grants.names(),
            vec![
                "bash".to_string(),
                "mcp__deploy__trigger".to_string(),
                "sampling(notes)".to_string()
            ]
        );
        assert!(grants.remove("mcp__deploy__trigger"));
        assert!(!grants.remove("mcp__deploy__trigger"));
        assert_eq!(
            shared.revoke("sampling(notes)"),
            "Session grant for sampling(notes) revoked."
        );
        assert_eq!(
            grants.revoke("sampling(notes)"),
            "sampling(notes) had no session grant."
        );
        assert!(is_sampling_grant("sampling(notes)"));
        assert!(!is_sampling_grant("read_mcp_resource(docs)"));
    }
}
