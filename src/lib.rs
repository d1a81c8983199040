//! toolgate: a terminal console for an LLM agent whose MCP tool pool grows at run time,
//! with every external tool call passing a host-controlled permission gate.
//!
//! This package is the binary and its two entry layers: `cli` (argument handling, start-up,
//! the subcommands) and `headless` (the front end for scripts). The rest lives in the
//! workspace's crates, re-exported here under their old paths: `toolgate-core` (agent,
//! gate, policy, MCP host, …), `toolgate-protocol` (what crosses between the agent and a
//! front end), `toolgate-tui` (the console) and `toolgate-base` (ids and other leaves).
//! docs/ARCHITECTURE.md draws the crates and the flows through them.

pub use toolgate_core::*;
pub use toolgate_protocol as protocol;
pub use toolgate_tui as tui;

pub mod cli;
pub mod headless;
