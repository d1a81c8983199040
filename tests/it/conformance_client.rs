//! The official MCP conformance suite in client mode for every core (non-auth) client
//! scenario of the pinned version: `initialize`, `tools_call`,
//! `elicitation-sep1034-client-defaults` (answered through `toolgate mcp call …
//! --elicitation accept-defaults`, so the form's defaults must be applied) and
//! `sse-retry`. No expected-failures list: each must pass without a failure or a warning.
//! The auth scenarios run in tests/it/conformance_auth.rs through the same runner.

use crate::support::conformance::{installed, run_client};
use std::process::Command;

const CORE: [&str; 4] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

/// The client scenarios the pinned suite lists, without the auth ones.
fn listed_core_scenarios() -> Vec<String> {
    let (node, suite) = installed();
    let out = Command::new(&node)
        .arg(&suite)
        .arg("list")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("Client scenarios"))
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| !name.starts_with("auth/"))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_core_client_scenario_passes_with_toolgate_as_the_client() {
    assert_eq!(
        listed_core_scenarios(),
        CORE,
        "the suite's core client scenarios changed: run them all here"
    );
    let mut failing = Vec::new();
    for scenario in CORE {
        let run = run_client(&["--scenario", scenario]);
        let passed = run.success
            && run.stderr.contains("OVERALL: PASSED")
            && run.stderr.contains(" 0 failed, 0 warnings");
        if !passed {
            failing.push(format!(
                "{scenario} (exit {}):\n{}",
                run.status,
                run.stderr
                    .lines()
                    .filter(|l| l.contains("FAILURE")
                        || l.contains("WARNING")
                        || l.contains("Passed:")
                        || l.contains("Error"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(
        failing.is_empty(),
        "failing scenarios:\n{}",
        failing.join("\n\n")
    );
}
