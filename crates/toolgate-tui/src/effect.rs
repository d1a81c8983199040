//! What `update` asks the runtime to do: the only way anything in the console reaches the
//! outside (the agent, or the process ending). Components push these; `run` carries them out.

use crate::protocol::UiCommand;

#[derive(Debug)]
pub enum Effect {
    SendCommand(UiCommand),
    Quit,
    /// Keep a sent prompt in the workspace's history file (decision 0079).
    Remember(String),
    /// Hand the terminal to the person's editor (`$VISUAL`, `$EDITOR`, `vi`); the runtime
    /// stops reading keys until it exits (decision 0079).
    Edit(super::editor::EditTarget),
    /// A question waits while the terminal is unfocused: ring and notify as `[tui]
    /// notify` says (the runtime cleans the text).
    Notify {
        title: String,
        body: String,
    },
}
