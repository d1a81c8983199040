//! The types that cross between the front ends (console, headless) and the agent task.

pub mod questions;
