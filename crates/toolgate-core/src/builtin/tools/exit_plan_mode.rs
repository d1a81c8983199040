//! `exit_plan_mode`: in plan mode only; shows the model's plan to the person, who may leave
//! plan mode (the agent runs it).

use serde_json::json;

use crate::builtin::BuiltinId;
use crate::builtin::definitions::{object_schema, string_property};
use crate::builtin::handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, Judgement, Presence, RunsIn,
};

pub struct ExitPlanMode;

pub const ID: BuiltinId = BuiltinId::new(&ExitPlanMode);

impl BuiltinHandler for ExitPlanMode {
    fn name(&self) -> &'static str {
        "exit_plan_mode"
    }

    fn definition(&self, _: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: "You are in plan mode: read-only. When your plan is ready, call this \
                          with the plan (markdown: the steps, the files you will change, how you \
                          will check the work). The user reads it and either approves, which \
                          leaves plan mode so you can carry it out, or keeps plan mode and tells \
                          you what to change."
                .to_string(),
            input_schema: object_schema(
                json!({ "plan": string_property("The plan, in markdown.") }),
                &["plan"],
            ),
        }
    }

    fn presence(&self) -> Presence {
        Presence::InPlanMode
    }

    // It changes nothing by itself: the person decides in its own question.
    fn judgement(&self) -> Judgement {
        Judgement::Harmless {
            default_rule: "default: plan review",
        }
    }

    fn runs_in(&self) -> RunsIn {
        RunsIn::Agent(AgentJob::ReviewPlan)
    }
}
