//! The tool pool: what the console knows of it ([`state`]), the agent events that change it
//! ([`events`]), the panel that lists it with its keys ([`panel`]), and the selected tool's
//! details ([`detail`]).

pub mod detail;
pub mod events;
pub mod panel;
pub mod state;
