//! The command line's entry points, thin over the modules that do the work: the console,
//! the agent's start for both front ends, `toolgate mcp …` and `toolgate status`, the
//! server list edits (`mcp add|remove|enable|disable|get|import`), `toolgate undo`, and the
//! terminal questions of the non-console commands. `main.rs` parses the flags and calls
//! these.

pub mod audit;
pub mod bootstrap;
pub mod commands;
pub mod console;
pub mod hooks;
pub mod manage;
pub mod prompt;
pub mod undo;
