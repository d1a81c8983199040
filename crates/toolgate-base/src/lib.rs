//! The bottom layer of toolgate: what every other crate speaks and nothing here depends on
//! another toolgate crate. Ids as newtypes, canonical JSON for hashes, text made safe for a
//! terminal, token estimates, and where toolgate keeps its state.

pub mod canonical;
pub mod ids;
pub mod paths;
pub mod sanitize;
pub mod tokens;
