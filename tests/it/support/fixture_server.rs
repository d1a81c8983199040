//! The fixture servers in tests/fixtures as configured servers, and a hub to run them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use toolgate::config::{ConfigSource, ServerConfig, ServerTransport};
use toolgate::mcp::{HubEvent, HubOptions, McpHub};

/// A file in tests/fixtures.
pub fn fixture_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A stdio server `command args…` with `env`, configured the way a test embeds one.
pub fn stdio_server(
    name: &str,
    command: &str,
    args: Vec<String>,
    env: &[(&str, &str)],
    call_timeout_ms: u64,
) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        transport: ServerTransport::Stdio {
            command: command.into(),
            args,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            cwd: None,
        },
        source: ConfigSource::Embedded,
        call_timeout_ms,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    }
}

/// `python3 tests/fixtures/<script>` as the server `name`.
pub fn python_fixture(
    name: &str,
    script: &str,
    env: &[(&str, &str)],
    call_timeout_ms: u64,
) -> ServerConfig {
    let script = fixture_file(script).display().to_string();
    stdio_server(name, "python3", vec![script], env, call_timeout_ms)
}

/// The misbehaving fixture server, configured by `FIXTURE_*` environment variables.
pub fn fixture(name: &str, env: &[(&str, &str)]) -> ServerConfig {
    python_fixture(name, "fixture_server.py", env, 30_000)
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
