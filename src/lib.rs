//! toolgate: a terminal console for an LLM agent whose MCP tool pool grows at run time,
//! with every external tool call passing a host-controlled permission gate.
//!
//! Each module names one concept and imports only the layers below it (the map, with the
//! three main flows, is docs/ARCHITECTURE.md): `settings` reads every configuration file;
//! `pool` and `policy` are pure; `mcp` speaks to servers and `servers` are our own;
//! `protocol` holds the only types that cross between the front ends and the agent; `gate`
//! decides every call that needs permission; `agent` runs the session on a background
//! task; `tui` and `headless` are the two front ends and `cli` the entry points.

pub mod agent;
pub mod beneath;
pub mod builtin;
pub mod checkpoint;
pub mod children;
pub mod cli;
pub mod error;
pub mod gate;
pub mod headless;
pub mod hooks;
pub mod ids;
pub mod mcp;
pub mod model;
pub mod oauth;
pub mod paths;
pub mod policy;
pub mod pool;
pub mod project;
pub mod protocol;
pub mod sandbox;
pub mod sanitize;
pub mod servers;
pub mod settings;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tokens;
pub mod tui;
