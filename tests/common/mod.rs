//! Shared by the integration tests that drive the hub against the fixture server in
//! tests/fixtures (each test file is its own crate, so not every helper is used by each).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use toolgate::mcp::{HubEvent, HubOptions, McpHub};
use toolgate::settings::{ConfigSource, ServerConfig, ServerTransport};

/// The misbehaving fixture server, configured by `FIXTURE_*` environment variables.
pub fn fixture(name: &str, env: &[(&str, &str)]) -> ServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fixture_server.py");
    ServerConfig {
        name: name.to_string(),
        transport: ServerTransport::Stdio {
            command: "python3".into(),
            args: vec![script.display().to_string()],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            cwd: None,
        },
        source: ConfigSource::Embedded,
        call_timeout_ms: 30_000,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    }
}

/// A hub whose builtin servers are the toolgate binary under test, with a short discover
/// probe so the fallback paths are exercised quickly.
pub fn hub_with(configs: Vec<ServerConfig>) -> (McpHub, mpsc::UnboundedReceiver<HubEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = HubOptions {
        builtin_exe: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
        probe_timeout: Duration::from_millis(500),
        startup_timeout: Duration::from_secs(20),
        ..HubOptions::default()
    };
    (McpHub::with_options(configs, tx, options), rx)
}
