//! toolgate's core: everything between the front ends and the world. The agent runs the
//! session on a background task and speaks to a front end only through the protocol
//! crate's commands and events; the gate decides every call that needs permission, with
//! the pure policy below it; the MCP host, the pool, settings, the sandbox, hooks and
//! checkpoints are the parts it uses. docs/ARCHITECTURE.md is the map.

pub use toolgate_base::{canonical, ids, paths, sanitize, tokens};
pub use toolgate_protocol as protocol;

pub mod agent;
pub mod beneath;
pub mod builtin;
pub mod checkpoint;
pub mod children;
pub mod egress;
pub mod error;
pub mod flow;
pub mod gate;
pub mod hooks;
pub mod journal;
pub mod mcp;
pub mod model;
pub mod oauth;
pub mod policy;
pub mod pool;
pub mod project;
pub mod sandbox;
pub mod servers;
pub mod settings;
#[cfg(test)]
pub(crate) mod test_support;
pub mod views;
