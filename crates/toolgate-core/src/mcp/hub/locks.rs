//! The hub's mutexes guard plain data: a panic elsewhere while one was held leaves
//! nothing half-changed that matters, so a poisoned lock is used as it is.

use std::sync::{Mutex, MutexGuard, PoisonError};

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
