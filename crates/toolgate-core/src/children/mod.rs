//! The processes toolgate starts (stdio MCP servers, `bash` commands) and how they end with
//! it, whatever way toolgate ends (decision 0066):
//!
//! * each child leads a session (hence a process group) of its own, so one signal to the
//!   group reaches everything it started, `sh -c` wrappers' children included, and a
//!   terminal's Ctrl-C or hang-up does not hit it behind toolgate's back;
//! * each child gets a parent-death signal, so it hears of toolgate's death even by SIGKILL;
//! * a [`reaper`] process, started once, holds the other end of a pipe from toolgate and
//!   the list of live groups (each child lists its own before exec): when the pipe closes
//!   (toolgate gone, by exit, signal or SIGKILL) it stops every group still listed,
//!   grandchildren included, which the parent-death signal alone cannot reach;
//! * [`GroupChild`] stops a server's group on purpose: SIGTERM, a grace, then SIGKILL, with
//!   the leader kept unreaped until the last signal so the group id cannot be reused.

mod group;
mod leader;
pub mod reaper;
mod session;

pub use group::{DeathSignal, detach, signal_group};
pub use leader::{GroupChild, wait_unreaped};
pub use reaper::Registration;
pub use session::kill_session;
