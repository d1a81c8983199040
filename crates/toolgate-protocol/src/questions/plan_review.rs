//! `exit_plan_mode`: the model, in plan mode, presents its plan. The person reads it
//! (rendered as markdown) and either approves it, choosing the mode the work goes on in,
//! or keeps plan mode, optionally telling the model what to change.

use super::{Card, Choice, Fact, Kind, Then, Tone};
use crate::PermissionMode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanReview {
    /// The plan as the model wrote it (markdown).
    pub plan: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanAnswer {
    /// Leave plan mode for this mode (`default` or `accept-edits`).
    Approve(PermissionMode),
    /// Stay in plan mode; the note (possibly empty) goes to the model.
    KeepPlanning(String),
}

impl PlanAnswer {
    fn keep_planning(note: String) -> PlanAnswer {
        PlanAnswer::KeepPlanning(note.trim().to_string())
    }
}

impl Kind for PlanReview {
    type Answer = PlanAnswer;
    const NAME: &'static str = "plan";

    fn card(&self) -> Card {
        Card {
            title: "Plan ready for review".into(),
            asker: "The agent, in plan mode, presents its plan (exit_plan_mode)".into(),
            effect: "Approving leaves plan mode: the agent goes on with the plan and may change \
                     files. Keeping plan mode leaves everything read-only; your note goes to \
                     the agent."
                .into(),
            facts: vec![Fact::new("mode now", "plan (read-only)", Tone::Dim)],
            details_title: "plan".into(),
            details: self.plan.clone(),
        }
    }

    fn choices(&self) -> Vec<Choice<PlanAnswer>> {
        vec![
            Choice::new(
                'y',
                "Approve, then ask as usual (default mode)",
                Then::Answer(PlanAnswer::Approve(PermissionMode::Default)),
            ),
            Choice::new(
                'a',
                "Approve and accept edits",
                Then::Answer(PlanAnswer::Approve(PermissionMode::AcceptEdits)),
            ),
            Choice::new(
                'd',
                "Keep planning, with a note",
                Then::AskNote(PlanAnswer::keep_planning),
            ),
            Choice::new(
                'n',
                "Keep planning",
                Then::Answer(PlanAnswer::KeepPlanning(String::new())),
            )
            .safe(),
        ]
    }

    fn safe_default(&self) -> PlanAnswer {
        PlanAnswer::KeepPlanning(String::new())
    }

    fn outcome_line(&self, answer: &PlanAnswer) -> String {
        match answer {
            PlanAnswer::Approve(mode) => format!("plan approved; {mode} mode"),
            PlanAnswer::KeepPlanning(note) if note.is_empty() => "plan not approved".into(),
            PlanAnswer::KeepPlanning(note) => format!("plan not approved: {note}"),
        }
    }

    fn markdown_details(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::questions::RESERVED_KEYS;

    #[test]
    fn keeping_plan_mode_is_the_safe_choice_and_no_key_is_reserved() {
        let review = PlanReview {
            plan: "# Plan\n- edit a.txt".into(),
        };
        let choices = review.choices();
        let keys: Vec<(char, bool)> = choices.iter().map(|c| (c.key, c.safe)).collect();
        assert_eq!(
            keys,
            [('y', false), ('a', false), ('d', false), ('n', true)]
        );
        assert!(keys.iter().all(|(k, _)| !RESERVED_KEYS.contains(k)));
        assert_eq!(review.card().details, "# Plan\n- edit a.txt");
        assert_eq!(
            review.safe_default(),
            PlanAnswer::KeepPlanning(String::new())
        );
    }
}
