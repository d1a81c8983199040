//! A server defined by the (trusted) project's `.mcp.json` is about to start a program of
//! the project's choosing: asked once per session, showing the exact command line.

use super::{Card, Choice, Fact, Kind, Tone};
use crate::ids::ServerName;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectServer {
    pub server: ServerName,
    /// The command line (or URL) that would run.
    pub command_line: String,
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectServerAnswer {
    /// Start it; don't ask again this session while its command line stays the same.
    Start,
    DontStart,
}

impl Kind for ProjectServer {
    type Answer = ProjectServerAnswer;
    const NAME: &'static str = "project server";

    fn card(&self) -> Card {
        Card {
            title: "Start a project server?".into(),
            asker: format!("The project defines the MCP server '{}'", self.server),
            effect: "toolgate starts this program now and offers its tools to the agent.".into(),
            facts: vec![Fact::new("why", &self.why, Tone::Warn)],
            details_title: "command line".into(),
            details: self.command_line.clone(),
        }
    }

    fn choices(&self) -> Vec<Choice<ProjectServerAnswer>> {
        Choice::yes_or_no(
            "Start it this session",
            ProjectServerAnswer::Start,
            "Don't start",
            ProjectServerAnswer::DontStart,
        )
    }

    fn safe_default(&self) -> ProjectServerAnswer {
        ProjectServerAnswer::DontStart
    }

    fn outcome_line(&self, answer: &ProjectServerAnswer) -> String {
        match answer {
            ProjectServerAnswer::Start => format!("project server '{}' approved", self.server),
            ProjectServerAnswer::DontStart => {
                format!("project server '{}' not started", self.server)
            }
        }
    }
}
