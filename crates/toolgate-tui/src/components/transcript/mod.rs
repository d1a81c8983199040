//! The conversation: its entries ([`state`]), how agent events write into it ([`events`]),
//! what part of it is on screen ([`viewport`]), Markdown for assistant messages
//! ([`markdown`]), and the widget ([`conversation`]).

pub mod conversation;
pub mod events;
pub mod highlight;
pub mod markdown;
pub mod state;
pub mod thinking;
pub mod viewport;
