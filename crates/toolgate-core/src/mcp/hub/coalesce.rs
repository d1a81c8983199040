//! At most one run in flight and one more queued: how a server's `list_changed`
//! notifications become `tools/list` requests. A burst of 10,000 notifications then costs
//! two listings, and the last one starts after the last notification, so it sees the
//! final list.

use super::locks::lock;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub(super) struct Coalescer {
    state: Mutex<State>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Idle,
    Running,
    /// Running, and asked again since it started: one more run follows.
    Queued,
}

impl Coalescer {
    /// A run is asked for. True: the caller starts the runner; false: the run in flight
    /// (or the one queued after it) covers this request.
    pub(super) fn request(&self) -> bool {
        let mut state = lock(&self.state);
        match *state {
            State::Idle => {
                *state = State::Running;
                true
            }
            State::Running | State::Queued => {
                *state = State::Queued;
                false
            }
        }
    }

    /// A run ended. True: one was asked for meanwhile, so the runner goes again.
    pub(super) fn finished(&self) -> bool {
        let mut state = lock(&self.state);
        match *state {
            State::Queued => {
                *state = State::Running;
                true
            }
            State::Idle | State::Running => {
                *state = State::Idle;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_one_run_and_one_more() {
        let c = Coalescer::default();
        assert!(c.request(), "the first request starts the runner");
        for _ in 0..10_000 {
            assert!(!c.request());
        }
        assert!(c.finished(), "one more run for the burst");
        assert!(!c.finished(), "and then idle");
        assert!(c.request(), "a later request starts again");
    }
}
