//! The parts of the console. Each owns its state, handles the keys and agent events that
//! concern it, and draws itself with a widget that only reads (no I/O anywhere here: what
//! must reach the outside goes out as an [`Effect`](super::effect::Effect)).
//!
//! `app` holds them and routes input to them; `view` places their widgets.

pub mod commands;
pub mod completion;
pub mod composer;
pub mod draw;
pub mod history;
pub mod inbox;
pub mod memory;
pub mod overlays;
pub mod pool;
pub mod queue;
pub mod status;
pub mod transcript;
