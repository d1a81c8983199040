//! Helpers shared by more than one test module (each lives here once).

pub mod conformance;
pub mod console_view;
pub mod deploy_record;
pub mod fixture_server;
pub mod headless_run;
pub mod model_api;
pub mod npm_packages;
pub mod oauth_servers;
pub mod origin;
pub mod process;
pub mod pty;
pub mod real_tools;
pub mod replay_model;
pub mod window_api;

/// The one session log under `state` (`TOOLGATE_STATE_DIR`) of a run that made one.
pub fn session_log(state: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(state.join("sessions"))
        .expect("sessions dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session log")
}

/// The JSON lines a run printed on stdout (`--output-format jsonl`), skipping any other.
pub fn jsonl(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A run's stderr as text, for assertion messages.
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
