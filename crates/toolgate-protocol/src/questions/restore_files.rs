//! `/undo` in the console: the files a turn changed are about to be put back as they were
//! before the turn changed them. The person sees every file and what will happen to it
//! first; a file changed again since the turn is shown with the difference, and is only
//! overwritten when the person picks that choice.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::{Card, Choice, Fact, Kind, Then, Tone};
use crate::{Change, ChangedSince, FileChange};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreFiles {
    pub checkpoint: u64,
    pub session: String,
    /// The turn of that session whose changes would be undone.
    pub turn: usize,
    /// When the checkpoint was taken (just before the turn first changed something).
    pub taken: DateTime<Utc>,
    pub workspace: PathBuf,
    pub files: Vec<FileChange>,
    /// Those of `files` changed again since the turn, with the difference.
    pub changed: Vec<ChangedSince>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreAnswer {
    /// Every file of the turn, overwriting changes made since.
    Restore,
    /// Only the files still as the turn left them.
    RestoreUntouched,
    Keep,
}

impl RestoreFiles {
    fn count(&self) -> String {
        crate::count_files(self.files.len())
    }

    fn changed_since(&self, file: &FileChange) -> Option<&ChangedSince> {
        self.changed.iter().find(|c| c.path == file.path)
    }
}

impl Kind for RestoreFiles {
    type Answer = RestoreAnswer;
    const NAME: &'static str = "undo";

    fn card(&self) -> Card {
        let created = self
            .files
            .iter()
            .filter(|f| f.change == Change::Created)
            .count();
        let mut facts = vec![Fact::new(
            "checkpoint",
            format!(
                "{} — taken {} before turn {} of session {}",
                self.checkpoint,
                self.taken
                    .with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S"),
                self.turn,
                self.session
            ),
            Tone::Dim,
        )];
        if created > 0 {
            facts.push(Fact::new(
                "removes",
                format!(
                    "{created} file{} the turn created",
                    if created == 1 { "" } else { "s" }
                ),
                Tone::Warn,
            ));
        }
        facts.push(Fact::new(
            "workspace",
            self.workspace.display().to_string(),
            Tone::Dim,
        ));
        let width = self
            .files
            .iter()
            .map(|f| f.change.undo_verb().len())
            .max()
            .unwrap_or(0);
        if !self.changed.is_empty() {
            facts.push(Fact::new(
                "changed since",
                format!(
                    "{} changed again after the turn; restoring {} loses that change",
                    crate::count_files(self.changed.len()),
                    if self.changed.len() == 1 {
                        "it"
                    } else {
                        "them"
                    }
                ),
                Tone::Warn,
            ));
        }
        let details = self
            .files
            .iter()
            .map(|f| {
                let line = format!(
                    "{:width$}  {}  ({} by the turn)",
                    f.change.undo_verb(),
                    f.path.display(),
                    f.change.past_tense()
                );
                match self.changed_since(f) {
                    None => line,
                    Some(c) => {
                        let mut text = format!("{line}  [{}]", c.reason());
                        for diff_line in c.diff.lines() {
                            text.push_str("\n    ");
                            text.push_str(diff_line);
                        }
                        text
                    }
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        Card {
            title: "Undo the last turn?".into(),
            asker: format!("You asked to undo turn {} (/undo)", self.turn),
            effect: format!(
                "toolgate puts {} back as {} before that turn: changed and deleted files are \
                 restored, created files are removed. Nothing else in the workspace changes.",
                self.count(),
                if self.files.len() == 1 {
                    "it was"
                } else {
                    "they were"
                }
            ),
            facts,
            details_title: "files".into(),
            details,
        }
    }

    fn choices(&self) -> Vec<Choice<RestoreAnswer>> {
        if self.changed.is_empty() {
            return Choice::yes_or_no(
                format!("Restore {}", self.count()),
                RestoreAnswer::Restore,
                "Keep them as they are",
                RestoreAnswer::Keep,
            );
        }
        let untouched = self.files.len() - self.changed.len();
        let mut choices = Vec::new();
        if untouched > 0 {
            choices.push(Choice::new(
                'u',
                format!(
                    "Restore the {} unchanged since, keep the rest",
                    crate::count_files(untouched)
                ),
                Then::Answer(RestoreAnswer::RestoreUntouched),
            ));
        }
        choices.push(Choice::new(
            'o',
            format!(
                "Restore all {}, overwriting the later changes",
                self.files.len()
            ),
            Then::Answer(RestoreAnswer::Restore),
        ));
        choices.push(
            Choice::new(
                'n',
                "Keep them as they are",
                Then::Answer(RestoreAnswer::Keep),
            )
            .safe(),
        );
        choices
    }

    fn safe_default(&self) -> RestoreAnswer {
        RestoreAnswer::Keep
    }

    fn outcome_line(&self, answer: &RestoreAnswer) -> String {
        match answer {
            RestoreAnswer::Restore => format!("undo of turn {} confirmed", self.turn),
            RestoreAnswer::RestoreUntouched => format!(
                "undo of turn {} confirmed for the files unchanged since",
                self.turn
            ),
            RestoreAnswer::Keep => format!("undo of turn {} declined; nothing changed", self.turn),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::questions::{HostRequest, Origin, RESERVED_KEYS, Reply, Request};
    use std::time::Instant;

    fn request() -> RestoreFiles {
        RestoreFiles {
            checkpoint: 7,
            session: "20261203-101500-abcdef".into(),
            turn: 2,
            taken: Utc::now(),
            workspace: "/w".into(),
            files: vec![
                FileChange {
                    path: "notes.txt".into(),
                    change: Change::Deleted,
                },
                FileChange {
                    path: "out/new.txt".into(),
                    change: Change::Created,
                },
            ],
            changed: vec![],
        }
    }

    #[test]
    fn a_file_changed_since_shows_its_difference_and_overwriting_is_a_choice_of_its_own() {
        let mut req = request();
        req.changed = vec![ChangedSince {
            path: "out/new.txt".into(),
            change: Change::Created,
            since: crate::Since::AfterTheTurn,
            diff: "--- as the turn left it\n+++ now\n+person".into(),
        }];
        let card = req.card();
        assert!(
            card.details
                .contains("out/new.txt  (created by the turn)  [changed since the turn]\n    --- as the turn left it"),
            "{}",
            card.details
        );
        assert!(card.details.contains("\n    +person"), "{}", card.details);
        let choices: Vec<(char, String, bool)> = req
            .choices()
            .into_iter()
            .map(|c| (c.key, c.label, c.safe))
            .collect();
        assert_eq!(
            choices,
            [
                (
                    'u',
                    "Restore the 1 file unchanged since, keep the rest".to_string(),
                    false
                ),
                (
                    'o',
                    "Restore all 2, overwriting the later changes".to_string(),
                    false
                ),
                ('n', "Keep them as they are".to_string(), true),
            ]
        );
    }

    #[test]
    fn the_card_lists_every_file_and_what_happens_to_it() {
        let card = request().card();
        assert_eq!(card.title, "Undo the last turn?");
        assert!(card.effect.starts_with("toolgate puts 2 files back"));
        assert_eq!(
            card.details,
            "restore  notes.txt  (deleted by the turn)\nremove   out/new.txt  (created by the turn)"
        );
        let labels: Vec<&str> = card.facts.iter().map(|f| f.label).collect();
        assert_eq!(labels, ["checkpoint", "removes", "workspace"]);
        assert!(
            card.facts[0]
                .value
                .contains("turn 2 of session 20261203-101500-abcdef")
        );
    }

    #[test]
    fn keep_is_the_safe_answer_and_restore_must_be_chosen() {
        let choices = request().choices();
        let keys: Vec<(char, bool)> = choices.iter().map(|c| (c.key, c.safe)).collect();
        assert_eq!(keys, [('y', false), ('n', true)]);
        assert!(keys.iter().all(|(k, _)| !RESERVED_KEYS.contains(k)));
        assert_eq!(choices[0].label, "Restore 2 files");

        let (req, mut rx) = Request::new(
            Origin::Console {
                folder: "/w".into(),
            },
            request(),
            Instant::now(),
            None,
        );
        let closed = HostRequest::from(req).dismiss();
        assert_eq!(closed.outcome, "undo of turn 2 declined; nothing changed");
        assert_eq!(
            rx.try_recv().unwrap(),
            Reply::Dismissed(RestoreAnswer::Keep)
        );
    }
}
