//! The far side of a deploy call: the deploy server's own record,
//! `<workspace>/.toolgate/deployments.json`, which it writes on every attempt (success or
//! failure). toolgate's report of a denial proves nothing by itself: a gate that sent the
//! call and then printed "denied" would report the same. The record does.

use std::path::Path;

use serde_json::Value;

/// Where the deploy server records its attempts for `workspace`.
pub fn record_path(workspace: &Path) -> std::path::PathBuf {
    workspace.join(".toolgate").join("deployments.json")
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

/// The server ran nothing for `workspace`: no record file at all (a trigger that reached
/// the server writes one even when the deployment fails).
pub fn assert_none(workspace: &Path) {
    let path = record_path(workspace);
    assert!(
        !path.exists(),
        "the deploy server ran although the call was denied: {}",
        std::fs::read_to_string(&path).unwrap_or_default()
    );
}

/// The server ran exactly one deployment of `service` for `workspace`, and it succeeded.
pub fn assert_one_of(workspace: &Path, service: &str) {
    let all = deployments(workspace);
    assert_eq!(all.len(), 1, "expected one deployment: {all:?}");
    assert_eq!(all[0]["service"], service, "{all:?}");
    assert_eq!(all[0]["succeeded"], true, "{all:?}");
}
