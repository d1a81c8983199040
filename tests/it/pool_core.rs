//! The pool as the model sees it, built from real connections: the starting six tools,
//! toolgate's docs server joining it, and collisions refused with the pool unchanged.

use crate::support::fixture_server::python_fixture;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{HubOptions, McpError, McpHub};
use toolgate::pool::pool_builtins;
use toolgate::pool::{self, Pool};
use toolgate::settings::{ConfigSource, ServerConfig, ServerTransport};

const LIMIT: Duration = Duration::from_secs(30);

fn builtin(name: &str) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: ServerTransport::Builtin {
            server: name.into(),
            args: vec![],
        },
        source: ConfigSource::Embedded,
        call_timeout_ms: 20_000,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    }
}

fn fixture(name: &str, tools: &[&str]) -> ServerConfig {
    let tools = json!(tools).to_string();
    python_fixture(
        name,
        "fixture_server.py",
        &[("FIXTURE_TOOLS", &tools)],
        20_000,
    )
}

fn hub(configs: Vec<ServerConfig>) -> McpHub {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    McpHub::with_options(
        configs,
        tx,
        HubOptions {
            builtin_exe: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
            ..HubOptions::default()
        },
    )
}

fn pool_of(hub: &McpHub) -> Result<Pool, pool::PoolError> {
    let servers = hub.server_tools();
    let connected: Vec<String> = servers.iter().map(|s| s.server().to_string()).collect();
    pool::assemble(&pool_builtins(&hub.configured(), &connected), &servers)
}

/// What the agent does: connect only if the pool still assembles with the new server.
async fn connect(hub: &McpHub, name: &str) -> Result<usize, McpError> {
    let configured = hub.configured();
    let tools = tokio::time::timeout(
        LIMIT,
        hub.connect_checked(name, |servers| {
            let connected: Vec<String> = servers.iter().map(|s| s.server().to_string()).collect();
            pool::assemble(&pool_builtins(&configured, &connected), servers)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
    )
    .await
    .expect("connect in bounded time")?;
    Ok(tools.len())
}

#[tokio::test]
async fn starting_pool_then_docs_joins_with_real_hits() {
    let hub = hub(vec![builtin("docs"), builtin("deploy")]);
    let start = pool_of(&hub).unwrap();
    assert_eq!(
        start.names(),
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp"
        ]
    );
    assert_eq!(
        start.get("connect_mcp").unwrap().input_schema["properties"]["name"]["enum"],
        json!(["docs", "deploy"])
    );

    assert_eq!(connect(&hub, "docs").await.unwrap(), 2);
    let pool = pool_of(&hub).unwrap();
    assert_eq!(
        pool.names(),
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp",
            "disconnect_mcp",
            "mcp__docs__search",
            "mcp__docs__get_version"
        ]
    );
    let search = pool.get("mcp__docs__search").unwrap();
    assert_eq!(search.claims.read_only, Some(true));
    let out = tokio::time::timeout(
        LIMIT,
        hub.call(
            "docs",
            "search",
            json!({"query": "allow deny rules"}),
            None,
            CancellationToken::new(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.to_lowercase().contains("permissions"),
        "{}",
        out.text
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn collision_is_refused_and_the_first_server_keeps_working() {
    let hub = hub(vec![
        fixture("docs.one", &["get.version", "echo"]),
        fixture("docs_one", &["get_version"]),
    ]);
    connect(&hub, "docs.one").await.unwrap();
    let before = pool_of(&hub).unwrap();
    let err = connect(&hub, "docs_one").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "connection to MCP server 'docs_one' refused: MCP tool name collision after \
         normalization: 'mcp__docs_one__get_version' maps both MCP tool 'docs.one'/'get.version' \
         and MCP tool 'docs_one'/'get_version'"
    );
    assert!(!hub.is_connected("docs_one"));
    assert_eq!(pool_of(&hub).unwrap(), before, "the pool stays as it was");
    // Calls still go to the first server under its raw names.
    let out = hub
        .call(
            "docs.one",
            "echo",
            json!({"text": "still here"}),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "echo: still here");
    hub.shutdown().await;
}

#[tokio::test]
async fn non_object_schema_leaves_out_that_tool_only() {
    let script = fixture("weird", &["odd", "echo"]);
    let ServerTransport::Stdio {
        command,
        args,
        mut env,
        cwd,
    } = script.transport
    else {
        unreachable!()
    };
    env.insert("FIXTURE_SCHEMA".into(), r#"{"type": "array"}"#.into());
    let weird = ServerConfig {
        transport: ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        },
        ..fixture("weird", &[])
    };
    let hub = hub(vec![weird]);
    // Issue 23: one bad schema no longer refuses the server; that tool is left out.
    assert_eq!(connect(&hub, "weird").await.unwrap(), 1);
    let listing = hub.server_tools();
    assert_eq!(listing[0].invalid()[0].name, "odd");
    assert!(
        listing[0].invalid()[0]
            .problem
            .to_string()
            .contains("its inputSchema's root is not type \"object\" (type \"array\")"),
        "{:?}",
        listing[0].invalid()
    );
    let pool = pool_of(&hub).unwrap();
    assert!(pool.get("mcp__weird__echo").is_some());
    assert!(pool.get("mcp__weird__odd").is_none());
}
