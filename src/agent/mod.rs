//! The agent loop on a background task. It talks to a front end (console or headless)
//! only through the channels in [`events`].

pub mod events;

use tokio::sync::mpsc;

/// The front end's side of a running agent.
pub struct AgentHandle {
    pub commands: mpsc::Sender<UiCommand>,
    pub events: mpsc::Receiver<AgentEvent>,
}

pub use events::{AgentEvent, UiCommand};
