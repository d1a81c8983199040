//! Completion in the composer: what the word at the cursor asks for ([`query`], pure), the
//! popup and the prompt-argument questions as state and update ([`assist`]), and their
//! widgets ([`popup`]).

pub mod assist;
pub mod popup;
pub mod project;
pub mod query;
