//! toolgate: a terminal console for an LLM agent whose MCP tool pool grows at run time,
//! with every external tool call passing a host-controlled permission gate.
//!
//! Module boundaries follow the design (see docs/ARCHITECTURE.md):
//! `mcp` speaks to servers, `servers` are our own MCP servers, `pool` and `policy` are pure,
//! `gate` decides every call that needs permission (with the person, grants and pins),
//! `agent` runs the loop on a background task, `model` holds the providers, `tui` and
//! `headless` are the two front ends.

pub mod agent;
pub mod builtin;
pub mod checkpoint;
pub mod cli;
pub mod error;
pub mod gate;
pub mod headless;
pub mod mcp;
pub mod model;
pub mod oauth;
pub mod paths;
pub mod policy;
pub mod pool;
pub mod protocol;
pub mod sandbox;
pub mod sanitize;
pub mod servers;
pub mod settings;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tokens;
pub mod tui;
