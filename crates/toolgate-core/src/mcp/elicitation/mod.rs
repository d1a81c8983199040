//! Elicitation inside the hub: a server's `elicitation/create` (or an elicitation inside
//! a 2026-07-28 `input_required` result) becomes an [`ElicitationQuestion`] on the hub's
//! event channel; whoever speaks for the person answers it (the console's inbox, the
//! headless front end by declining, `toolgate mcp call` on the terminal).
//!
//! What the server sent is checked here, before anyone is asked: a schema toolgate cannot
//! turn into a form, or a URL that is not http(s), is refused with a JSON-RPC error that
//! says why (elicitation's own "decline" has no room for a reason). At most
//! [`MAX_WAITING_PER_SERVER`](super::elicitor::MAX_WAITING_PER_SERVER) questions of one server wait at a time; more are refused the
//! same way, so a server cannot bury the person in questions or make toolgate hang.

pub use crate::protocol::form;
pub(super) mod question;
pub(super) mod request;
pub(super) mod url;

pub use question::{ElicitationQuestion, ElicitationReply};
pub use request::{ElicitationAsk, form_from_schema};
