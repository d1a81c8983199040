//! `search_tools`: finds deferred MCP tools and loads them into the pool; in the pool while
//! MCP tools are deferred (the agent runs it). Its definition does not depend on the
//! connections, so it never breaks a cached prompt prefix by itself.

use serde_json::json;

use crate::builtin::BuiltinId;
use crate::builtin::definitions::{object_schema, string_property};
use crate::builtin::handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, Judgement, Presence, RunsIn,
};

pub struct SearchTools;

pub const ID: BuiltinId = BuiltinId::new(&SearchTools);

/// Most hits one `search_tools` call returns (and loads).
pub const SEARCH_LIMIT_MAX: u64 = 20;
/// Hits when the call gives no `limit`.
pub const SEARCH_LIMIT_DEFAULT: u64 = 5;

impl BuiltinHandler for SearchTools {
    fn name(&self) -> &'static str {
        "search_tools"
    }

    fn definition(&self, ctx: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: "Load MCP tools not in your tool list (the rest are deferred). Query: \
                          the action in a few words (\"create a github issue\") or exact tool \
                          names. For a task of several steps, give one query per step in \
                          `queries`. Found tools are callable from your next step and stay \
                          loaded; the answer also names, unloaded, other tools on the same \
                          resource."
                .to_string(),
            input_schema: object_schema(
                json!({
                    "query": string_property("What to do, or tool names, comma-separated."),
                    "queries": {
                        "type": "array",
                        "items": {"type": "string"},
                        "maxItems": ctx.max_search_queries,
                        "description": "One query per step."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": SEARCH_LIMIT_MAX,
                        "description": format!("Default {SEARCH_LIMIT_DEFAULT}.")
                    }
                }),
                &[],
            ),
        }
    }

    fn presence(&self) -> Presence {
        Presence::WhileDeferring
    }

    // It only reads the listings toolgate already holds; loading a tool grants nothing
    // (each call of it is decided on its own). A rule can still deny it.
    fn judgement(&self) -> Judgement {
        Judgement::Harmless {
            default_rule: "default: tool search",
        }
    }

    fn changes_pool(&self) -> bool {
        true
    }

    fn runs_in(&self) -> RunsIn {
        RunsIn::Agent(AgentJob::SearchTools)
    }
}
