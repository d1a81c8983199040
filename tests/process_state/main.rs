//! Tests that measure state of their whole process, in a test binary of their own (tests/it
//! runs everything else as threads of one process): the fault tests measure the process's
//! resident memory during a notification flood, which other tests allocating beside them
//! would skew (within this binary they take turns, see `faults::MEMORY_SENSITIVE`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

/// Shared with tests/it (its `support::fixture_server`).
#[path = "../it/support/fixture_server.rs"]
mod fixture_server;

mod faults;
