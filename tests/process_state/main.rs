//! Tests that set or measure state of their whole process, in a test binary of their own
//! (tests/it runs everything else as threads of one process): the headless tests set
//! toolgate's environment variables (its executable, state and config dirs) for the process,
//! and the fault tests measure the process's resident memory during a notification flood,
//! which other tests allocating beside them would skew.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

/// Shared with tests/it (its `support::fixture_server`).
#[path = "../it/support/fixture_server.rs"]
mod fixture_server;

/// Shared with tests/it (its `support::deploy_record`).
#[path = "../it/support/deploy_record.rs"]
mod deploy_record;

mod faults;
mod headless;
