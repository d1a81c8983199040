//! The far side of a deploy call: the deploy server's own records in `<workspace>/.toolgate/`.
//!
//! - `deploy-calls.jsonl`: every call it received (but the read-only `status`), appended
//!   and synced as its first act, before its arguments are checked or a step runs.
//! - `deployments.json`: the deployments it ran, written when each one ends.
//!
//! toolgate's report of a denial proves nothing by itself: a gate that sent the call and
//! then printed "denied" would report the same. The history alone is not enough either
//! (a call cut off during its steps leaves none); the log of received calls is.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Where the deploy server records the deployments it ran for `workspace`.
pub fn record_path(workspace: &Path) -> PathBuf {
    workspace.join(".toolgate").join("deployments.json")
}

/// Where the deploy server logs the calls it received for `workspace`.
pub fn received_path(workspace: &Path) -> PathBuf {
    workspace.join(".toolgate").join("deploy-calls.jsonl")
}

/// Every deployment the server recorded for `workspace`, oldest first; none when the file
/// does not exist (the server never ran a trigger there).
pub fn deployments(workspace: &Path) -> Vec<Value> {
    let path = record_path(workspace);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    };
    let state: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}): {text}", path.display()));
    state["deployments"]
        .as_array()
        .unwrap_or_else(|| panic!("no deployments list in {}: {text}", path.display()))
        .clone()
}

/// Every call the server received for `workspace`, oldest first (`tool`, `arguments`,
/// `seq`, `pid`, `received_at`); none when the log does not exist.
pub fn received(workspace: &Path) -> Vec<Value> {
    let path = received_path(workspace);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    };
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| {
                panic!(
                    "{} has a line that is not JSON ({e}): {line}",
                    path.display()
                )
            })
        })
        .collect()
}

/// The services of the `trigger` calls the server received for `workspace`, in order.
pub fn received_triggers(workspace: &Path) -> Vec<String> {
    received(workspace)
        .iter()
        .filter(|call| call["tool"] == "trigger")
        .map(|call| {
            call["arguments"]["service"]
                .as_str()
                .unwrap_or_else(|| panic!("a trigger without a service: {call}"))
                .to_string()
        })
        .collect()
}

/// The server received no call for `workspace` (no log line, so not even one it refused
/// or was cut off in) and ran no deployment.
pub fn assert_none(workspace: &Path) {
    let calls = received(workspace);
    assert!(
        calls.is_empty(),
        "the deploy server received a call although it was denied: {calls:?}"
    );
    let path = record_path(workspace);
    assert!(
        !path.exists(),
        "the deploy server ran although the call was denied: {}",
        std::fs::read_to_string(&path).unwrap_or_default()
    );
}

/// The server received exactly the `trigger` calls for these services, in this order, and
/// recorded one deployment for each (whatever its result).
pub fn assert_received(workspace: &Path, services: &[&str]) {
    let calls = received(workspace);
    let expected: Vec<Value> = services
        .iter()
        .map(|s| json!({"tool": "trigger", "arguments": {"service": s}}))
        .collect();
    let got: Vec<Value> = calls
        .iter()
        .map(|c| json!({"tool": c["tool"], "arguments": c["arguments"]}))
        .collect();
    assert_eq!(got, expected, "the calls the deploy server received");
    let ran: Vec<Value> = deployments(workspace)
        .iter()
        .map(|d| d["service"].clone())
        .collect();
    assert_eq!(
        ran,
        services.iter().map(|s| json!(s)).collect::<Vec<_>>(),
        "the deployments the deploy server ran"
    );
}

/// The server received exactly one call, a `trigger` of `service`, and ran it: one
/// deployment, which succeeded.
pub fn assert_one_of(workspace: &Path, service: &str) {
    assert_received(workspace, &[service]);
    let all = deployments(workspace);
    assert_eq!(all[0]["succeeded"], true, "{all:?}");
}
