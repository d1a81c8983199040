//! The client side of MCP on `rmcp`: servers, transports (stdio child processes and
//! Streamable HTTP), both protocol eras, timeouts, cancellation and `list_changed`.
//! Knows nothing of policy or of the UI.

mod auth;
pub mod catalog;
mod convert;
mod elicitation;
mod elicitor;
mod errors;
mod handler;
mod hub;
mod listing;
mod logging;
mod oversize;
mod pending;
mod roots;
mod sampling;
mod spawn;
mod stderr;
mod transport;
mod types;

pub use auth::{
    DEFAULT_SIGN_IN_TIMEOUT, MAX_SIGN_INS, SignInMode, SignInQuestion, sign_in_timeout_from_env,
};
pub use catalog::{Catalog, CompletionTarget};
pub use elicitation::{
    ElicitationAsk, ElicitationQuestion, ElicitationReply, form, form_from_schema,
};
pub use elicitor::MAX_WAITING_PER_SERVER;
pub use hub::{HubOptions, McpHub};
// Servers send their log messages at these levels; the type is the settings' (`[mcp] log_level`).
pub use crate::settings::{DEFAULT_LOG_LEVEL, LogLevel};

pub use roots::{Roots, file_uri};
pub use sampling::{
    MAX_WAITING_PER_SERVER as MAX_SAMPLING_WAITING, Sampled, SamplingQuestion, SamplingRefusal,
    SamplingRequest, SamplingTurn,
};
pub use stderr::STDERR_TAIL_LINES;
pub use types::{CallOutput, HubEvent, McpError, ProgressUpdate, ServerStatus};
