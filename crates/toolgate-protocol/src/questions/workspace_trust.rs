//! A folder with its own `.mcp.json` / `.toolgate/config.toml` that the person has not
//! trusted yet: asked by the console before the agent starts.

use std::path::PathBuf;

use super::{Card, Choice, Fact, Kind, Then, Tone};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceTrust {
    pub folder: PathBuf,
    /// The project files that would take effect.
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    /// For this run only.
    Once,
    /// Remembered in the state dir.
    Always,
    No,
}

impl Kind for WorkspaceTrust {
    type Answer = TrustAnswer;
    const NAME: &'static str = "workspace trust";

    fn card(&self) -> Card {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        Card {
            title: "Trust this workspace?".into(),
            asker: format!(
                "This folder has its own configuration: {}",
                self.folder.display()
            ),
            effect: "Trusting it lets its .mcp.json and .toolgate/config.toml take effect: \
                     they can start programs and change what tools may do."
                .into(),
            facts: vec![Fact::new(
                "why",
                "project files are ignored until you trust the folder",
                Tone::Warn,
            )],
            details_title: "files".into(),
            details: files.join("\n"),
        }
    }

    fn choices(&self) -> Vec<Choice<TrustAnswer>> {
        vec![
            Choice::new('y', "Trust this session", Then::Answer(TrustAnswer::Once)),
            Choice::new('s', "Always trust", Then::Answer(TrustAnswer::Always)),
            Choice::new('n', "Don't trust", Then::Answer(TrustAnswer::No)).safe(),
        ]
    }

    fn safe_default(&self) -> TrustAnswer {
        TrustAnswer::No
    }

    fn outcome_line(&self, answer: &TrustAnswer) -> String {
        let folder = self.folder.display();
        match answer {
            TrustAnswer::Once => format!("{folder} trusted for this session"),
            TrustAnswer::Always => format!("{folder} trusted (remembered)"),
            TrustAnswer::No => format!("{folder} not trusted: its project files are ignored"),
        }
    }
}
