//! The (trusted) project's `.toolgate/config.toml` defines hooks: commands of the project's
//! choosing that would run on the session's events. Asked once per session, showing every
//! command (decision 0086); until the person agrees none of them runs.

use super::{Card, Choice, Fact, Kind, Tone};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectHooks {
    /// `EVENT: command` for each hook.
    pub hooks: Vec<String>,
    /// The file that defines them.
    pub file: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectHooksAnswer {
    /// Run them for this session.
    Run,
    DontRun,
}

impl Kind for ProjectHooks {
    type Answer = ProjectHooksAnswer;
    const NAME: &'static str = "project hooks";

    fn card(&self) -> Card {
        Card {
            title: "Run this project's hooks?".into(),
            asker: format!("The project's {} defines hooks", self.file),
            effect: "toolgate runs these commands on the session's events (they may allow or deny tool calls).".into(),
            facts: vec![Fact::new(
                "hooks",
                format!("{} command(s)", self.hooks.len()),
                Tone::Warn,
            )],
            details_title: "commands".into(),
            details: self.hooks.join("\n"),
        }
    }

    fn choices(&self) -> Vec<Choice<ProjectHooksAnswer>> {
        Choice::yes_or_no(
            "Run them this session",
            ProjectHooksAnswer::Run,
            "Don't run",
            ProjectHooksAnswer::DontRun,
        )
    }

    fn safe_default(&self) -> ProjectHooksAnswer {
        ProjectHooksAnswer::DontRun
    }

    fn outcome_line(&self, answer: &ProjectHooksAnswer) -> String {
        match answer {
            ProjectHooksAnswer::Run => "the project's hooks run this session".into(),
            ProjectHooksAnswer::DontRun => "the project's hooks do not run".into(),
        }
    }
}
