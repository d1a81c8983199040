//! The time limited grants are measured by: the real monotonic clock in production; tests
//! hand the gate a clock they move themselves (a parameter of [`super::Grants`], not a
//! switch).

use std::time::Instant;

pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Instant;
}

/// `Instant::now()`: monotonic, so a changed wall clock neither ends nor extends a grant.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}
