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

/// A clock that moves only when the test says.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct TestClock(std::sync::Mutex<Instant>);

#[cfg(test)]
impl TestClock {
    pub(crate) fn new() -> std::sync::Arc<TestClock> {
        std::sync::Arc::new(TestClock(std::sync::Mutex::new(Instant::now())))
    }

    pub(crate) fn advance(&self, by: std::time::Duration) {
        *self.0.lock().unwrap() += by;
    }
}

#[cfg(test)]
impl Clock for TestClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}
