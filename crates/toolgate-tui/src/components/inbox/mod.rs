//! The inbox: the requests waiting for the person with their keys ([`state`]), and the
//! modal that shows them ([`modal`]).

pub mod modal;
pub mod preview;
pub mod state;
