//! toolgate's integration tests, one test binary: a module per area, the helpers they share
//! in `support`. One binary links the crate once instead of once per file; its tests run as
//! threads of one process, so a test that changes process-wide state (environment
//! variables, or one that measures this process's memory) lives in tests/isolated instead.
//!
//! `cargo test --test it MODULE::` runs one area, e.g. `cargo test --test it tui::`.
// Test code: a failure is the report (clippy.toml allows these only inside #[test] fns;
// the helpers beside them panic too).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

// The console: views and keys in-process, then the real binary in a pseudo-terminal.
mod e2e_approvals;
mod e2e_composer;
mod e2e_console;
mod e2e_console_hangup;
mod e2e_console_modes;
mod e2e_console_queue;
mod e2e_gate;
mod e2e_hooks;
mod e2e_reload;
mod e2e_resources;
mod e2e_sampling;
mod e2e_thinking;
mod readme_picture;
mod tui;
mod tui_resources;

// The agent, its model providers and its tool pool.
mod agent;
mod deferred_tools;
mod long_sessions;
mod model_providers;
mod pins;
mod pool_core;
mod project_context;
mod prompt_cache;
mod reload;
mod tool_search;

// The MCP client and host side, against real servers.
mod elicitation;
mod host_features;
mod mcp_client;
mod mcp_faults;
mod mcp_http;
mod mcp_tasks;
mod oauth;
mod resources;
mod rich_content;

// toolgate's own MCP servers, and software nobody on this team wrote.
mod conformance_auth;
mod conformance_client;
mod conformance_server;
mod interop;
mod servers;

// The command line, the policy files, undo and the processes toolgate starts.
mod audit;
mod bash_grammar;
mod beneath;
mod cli;
mod docs_examples;
mod flow;
mod headless;
mod hooks;
mod kernel_modes;
mod lifetime;
mod managed;
mod mcp_manage;
mod modes;
mod network;
mod policy;
mod undo;
