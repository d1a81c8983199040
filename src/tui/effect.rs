//! What `update` asks the runtime to do: the only way anything in the console reaches the
//! outside (the agent, or the process ending). Components push these; `run` carries them out.

use crate::protocol::UiCommand;

#[derive(Debug)]
pub enum Effect {
    SendCommand(UiCommand),
    Quit,
}
