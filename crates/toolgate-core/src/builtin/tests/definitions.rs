//! The connector tools are not run here (the agent runs them). The definitions' order,
//! origins and schemas are tested where the pool builds its built-in entries
//! (`pool/tests/builtins.rs`).

use super::*;

#[tokio::test]
async fn connectors_are_not_run_here() {
    // connect_mcp changes the pool, which only the agent can do.
    let ws = workspace();
    let out = call(tools::connect_mcp::ID, json!({"name": "docs"}), ws.path()).await;
    assert_eq!(out, BuiltinOutput::error("Unknown tool: connect_mcp"));
    let out = call(
        tools::disconnect_mcp::ID,
        json!({"name": "docs"}),
        ws.path(),
    )
    .await;
    assert_eq!(out, BuiltinOutput::error("Unknown tool: disconnect_mcp"));
}
