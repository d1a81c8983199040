//! The session's grants, in one store: every "allow for this session" the person gave — a
//! tool (`mcp__deploy__trigger`, `read_mcp_resource(docs)`), bash outside the sandbox, a
//! server's sampling (`sampling(SERVER)`). A grant is named as the decision record names
//! it, so the name the front end shows is the name it revokes.
//!
//! A limited grant ("for N minutes", "for the next N calls") is checked and spent at the
//! moment of each call ([`Grants::spend`]); one that has ended is dropped there.
//!
//! Shared by handle: the gate decides tool calls on the agent's task, sampling requests
//! are decided on tasks of their own, beside a running turn.
//!
//! Every change (a grant given, a limited one spent or ended, a revoke) marks the store
//! changed; whoever decided or revoked then takes the grants in force
//! ([`Grants::take_change`]) and sends them to the front end, which lists what it is told.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::clock::{Clock, SystemClock};
use crate::policy::{GrantLeft, GrantLimit};
use crate::protocol::{AgentEvent, GrantEnd, GrantLine, View};

/// What the session grant for unsandboxed bash is recorded as.
pub const UNSANDBOXED_GRANT: &str = "bash (outside the sandbox)";

/// The grant that lets `server` sample for the rest of the session.
pub fn sampling_grant(server: &str) -> String {
    format!("sampling({server})")
}

/// A grant used beside the agent loop, while a turn runs, so revoked at once rather than
/// after the turn: a sampling grant (`sampling(SERVER)`) or a network grant
/// (`Network(HOST)`).
pub fn is_revoked_at_once(name: &str) -> bool {
    ["sampling(", "Network("].iter().any(|prefix| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.ends_with(')'))
    })
}

/// The session grants by name, and the limited ones with what is left of each; clones
/// share one store.
#[derive(Debug, Clone)]
pub struct Grants {
    store: Arc<Mutex<Store>>,
    clock: Arc<dyn Clock>,
}

#[derive(Debug, Default)]
struct Store {
    /// "Allow for this session".
    session: BTreeSet<String>,
    /// "Allow for N minutes / the next N calls", by grant name.
    limited: BTreeMap<String, Limited>,
    /// Changed since the front end was last told.
    changed: bool,
}

impl Store {
    /// Drops the limited grants that have ended by `now`; an end is a change the front end
    /// is told of, whichever reader found it first.
    fn drop_ended(&mut self, now: Instant) {
        let before = self.limited.len();
        self.limited.retain(|_, limited| limited.live(now));
        self.changed |= self.limited.len() != before;
    }
}

#[derive(Debug, Clone, Copy)]
struct Limited {
    limit: GrantLimit,
    /// Minutes: when it ends.
    until: Option<Instant>,
    /// Calls: how many more it allows.
    calls_left: u32,
}

impl Limited {
    fn live(&self, now: Instant) -> bool {
        match self.until {
            Some(until) => now < until,
            None => self.calls_left > 0,
        }
    }
}

/// What a call the policy allowed by a grant spent of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    /// A session grant: nothing to spend.
    Unlimited,
    /// A limited grant, and what is left of it after this call.
    Limited { limit: GrantLimit, left: GrantLeft },
    /// The grant ended between the verdict and now: decide again without it.
    Gone,
}

impl Default for Grants {
    fn default() -> Self {
        Grants::with_clock(Arc::new(SystemClock))
    }
}

impl Grants {
    /// A store whose limited grants are timed by `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Grants {
            store: Arc::default(),
            clock,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn grant(&self, name: &str) {
        let mut store = self.lock();
        store.changed |= store.session.insert(name.to_string());
    }

    /// "Allow for N minutes / the next N calls", answered for a call that runs now: that
    /// call is the first of the N.
    pub fn grant_limited(&self, name: &str, limit: GrantLimit) {
        let now = self.clock.now();
        let limited = match limit {
            GrantLimit::Minutes(m) => Limited {
                limit,
                until: Some(now + Duration::from_secs(u64::from(m) * 60)),
                calls_left: 0,
            },
            GrantLimit::Calls(n) => Limited {
                limit,
                until: None,
                calls_left: n.saturating_sub(1),
            },
        };
        let mut store = self.lock();
        if limited.live(now) {
            store.limited.insert(name.to_string(), limited);
            store.changed = true;
        }
    }

    /// Spends one call of the grant `name` at this moment: a session grant costs nothing; a
    /// limited one that ended since is dropped ([`Spent::Gone`]).
    pub fn spend(&self, name: &str) -> Spent {
        let now = self.clock.now();
        let mut store = self.lock();
        if store.session.contains(name) {
            return Spent::Unlimited;
        }
        let Some(entry) = store.limited.get_mut(name) else {
            return Spent::Gone;
        };
        if !entry.live(now) {
            store.limited.remove(name);
            store.changed = true;
            return Spent::Gone;
        }
        let left = match entry.until {
            Some(until) => GrantLeft::Seconds(until.saturating_duration_since(now).as_secs()),
            None => {
                entry.calls_left -= 1;
                GrantLeft::Calls(entry.calls_left)
            }
        };
        let limit = entry.limit;
        // A timed grant's end is unchanged by a call; a counted one has one call less.
        let counted = entry.until.is_none();
        if !entry.live(now) {
            store.limited.remove(name);
        }
        store.changed |= counted;
        Spent::Limited { limit, left }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.with(|grants| grants.contains(name))
    }

    /// Every grant in force, sorted.
    pub fn names(&self) -> Vec<String> {
        self.with(|grants| grants.iter().cloned().collect())
    }

    /// Runs `f` on the grants in force at this moment, limited ones that have not ended
    /// included (the policy reads them while it decides).
    pub fn with<R>(&self, f: impl FnOnce(&BTreeSet<String>) -> R) -> R {
        let now = self.clock.now();
        let mut store = self.lock();
        store.drop_ended(now);
        if store.limited.is_empty() {
            return f(&store.session);
        }
        let mut all = store.session.clone();
        all.extend(store.limited.keys().cloned());
        f(&all)
    }

    /// Returns whether a grant existed.
    fn remove(&self, name: &str) -> bool {
        let mut store = self.lock();
        let session = store.session.remove(name);
        let removed = store.limited.remove(name).is_some() || session;
        store.changed |= removed;
        removed
    }

    /// The grants in force, once after each change (None when nothing changed since): the
    /// session ones, then the limited ones with what is left of each, each sorted by name.
    pub fn take_change(&self) -> Option<Vec<GrantLine>> {
        let now = self.clock.now();
        let wall = chrono::Utc::now();
        let mut store = self.lock();
        store.drop_ended(now);
        if !std::mem::take(&mut store.changed) {
            return None;
        }
        let mut lines: Vec<GrantLine> = store
            .session
            .iter()
            .map(|n| GrantLine::session(n))
            .collect();
        lines.extend(store.limited.iter().map(|(name, limited)| {
            let left = match limited.until {
                Some(until) => GrantEnd::Until(
                    wall + chrono::Duration::from_std(until.saturating_duration_since(now))
                        .unwrap_or(chrono::Duration::zero()),
                ),
                None => GrantEnd::Calls(limited.calls_left),
            };
            GrantLine {
                name: name.clone(),
                left: Some(left),
            }
        }));
        Some(lines)
    }

    /// [`Grants::take_change`] as the event a front end is sent.
    pub fn change_event(&self) -> Option<AgentEvent> {
        self.take_change()
            .map(|lines| AgentEvent::View(View::GrantsChanged(lines)))
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
        assert!(is_revoked_at_once("sampling(notes)"));
        assert!(is_revoked_at_once("Network(registry.npmjs.org)"));
        assert!(!is_revoked_at_once("read_mcp_resource(docs)"));
    }

    /// What `/permissions` lists, as the store reports it after each change: a limited
    /// grant shows what is left, goes when used up, and a timed one shows when it ends
    /// (moved here from the console's own `note_grant`, which rebuilt this from records).
    #[test]
    fn limited_grants_show_what_is_left_and_go_when_used_up() {
        let grants = Grants::default();
        grants.grant("bash");
        grants.grant_limited("mcp__deploy__trigger", GrantLimit::Calls(3));
        let lines = grants.take_change().unwrap();
        assert_eq!(
            lines[1].describe(),
            "allow mcp__deploy__trigger (2 calls left)"
        );
        assert_eq!(grants.take_change(), None, "told once per change");
        grants.spend("mcp__deploy__trigger");
        assert_eq!(
            grants.take_change().unwrap()[1].describe(),
            "allow mcp__deploy__trigger (1 call left)"
        );
        grants.spend("mcp__deploy__trigger");
        assert_eq!(grants.take_change(), Some(vec![GrantLine::session("bash")]));

        let before = chrono::Utc::now();
        grants.grant_limited("mcp__deploy__trigger", GrantLimit::Minutes(15));
        let lines = grants.take_change().unwrap();
        let after = chrono::Utc::now();
        let Some(GrantEnd::Until(until)) = lines[1].left else {
            panic!("a timed grant: {lines:?}");
        };
        let fifteen = chrono::Duration::minutes(15);
        assert!(
            before + fifteen - chrono::Duration::seconds(1) <= until && until <= after + fifteen
        );
        assert_eq!(grants.revoke("bash"), "Session grant for bash revoked.");
        assert_eq!(grants.take_change().unwrap().len(), 1);
    }

    /// A timed grant's end is a change the front end is told of, whoever noticed it first:
    /// the list it is sent next no longer holds the grant.
    #[test]
    fn a_timed_grant_that_ended_is_announced() {
        let clock = super::super::clock::TestClock::new();
        let grants = Grants::with_clock(clock.clone());
        grants.grant("bash");
        grants.grant_limited("mcp__deploy__trigger", GrantLimit::Minutes(15));
        assert_eq!(grants.take_change().unwrap().len(), 2);
        clock.advance(Duration::from_secs(15 * 60));
        assert_eq!(grants.take_change(), Some(vec![GrantLine::session("bash")]));
        assert_eq!(grants.take_change(), None, "told once");
    }
}
