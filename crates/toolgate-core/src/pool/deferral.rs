//! Deferred tools: which MCP tools one model call carries in its `tools` array, and which
//! wait to be found with `search_tools`. Pure: the agent passes the full pool, the servers
//! whose tools always load, and the tools loaded so far; nothing here does I/O.
//!
//! Order matters for prompt caching: the built-ins (with `search_tools`) come first, then the
//! always-loaded servers' tools, then the loaded tools in the order they were loaded, so a
//! search only appends to the array and the request's earlier prefix stays the same.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Pool, PoolTool, ToolOrigin};
use crate::settings::{SearchMode, SearchSettings};

/// Estimated tokens of one tool definition as a model request carries it (name,
/// description and input schema), by [`crate::tokens::estimate`].
pub fn definition_tokens(tool: &PoolTool) -> usize {
    crate::tokens::estimate(&tool.name)
        + crate::tokens::estimate(&tool.description)
        + crate::tokens::estimate(&tool.input_schema.to_string())
}

/// Estimated tokens of every MCP tool definition in `pool`: what `auto` compares with its
/// threshold. It serializes every schema, so the agent works it out once per change of the
/// listings, not per call.
pub fn mcp_definition_tokens(pool: &Pool) -> usize {
    pool.tools
        .iter()
        .filter(|t| t.server().is_some())
        .map(|t| definition_tokens(t))
        .sum()
}

/// What one model call carries, and what it does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deferral {
    /// The tools of the request, in request order.
    pub visible: Pool,
    /// MCP tools left out of the request, findable with `search_tools`, in pool order.
    pub deferred: Vec<Arc<PoolTool>>,
}

impl Deferral {
    /// Whether tools are deferred (and so `search_tools` is in the request).
    pub fn searching(&self) -> bool {
        !self.deferred.is_empty()
            || self.visible.tools.iter().any(|t| {
                // The built-in the pool carries only while deferring (search_tools).
                t.builtin_kind()
                    .is_some_and(|k| k.presence() == crate::builtin::Presence::WhileDeferring)
            })
    }
}

/// Splits the full pool (built-ins, then each server's tools) into what the next model call
/// carries and what it defers. `always_load` names servers whose tools are never deferred;
/// `loaded` lists the model-facing names `search_tools` loaded, oldest first.
/// `search_tool` is the definition of `search_tools`, added after the built-ins when
/// anything is deferred. `mcp_tokens` is [`mcp_definition_tokens`] of `full`.
pub fn defer(
    full: &Pool,
    settings: &SearchSettings,
    mcp_tokens: usize,
    always_load: &HashSet<&str>,
    loaded: &[String],
    search_tool: &PoolTool,
) -> Deferral {
    let is_candidate = |tool: &PoolTool| match &tool.origin {
        ToolOrigin::Mcp { server, .. } => !always_load.contains(server.as_str()),
        ToolOrigin::Builtin(_) => false,
    };
    let any_candidate = full.tools.iter().any(|t| is_candidate(t));
    let searching = any_candidate
        && match settings.mode {
            SearchMode::Off => false,
            SearchMode::On => true,
            SearchMode::Auto => mcp_tokens > settings.auto_threshold_tokens,
        };
    if !searching {
        return Deferral {
            visible: full.clone(),
            deferred: Vec::new(),
        };
    }
    let loaded_set: HashSet<&str> = loaded.iter().map(String::as_str).collect();
    let mut visible: Vec<Arc<PoolTool>> = full
        .tools
        .iter()
        .filter(|t| t.server().is_none())
        .cloned()
        .collect();
    visible.push(Arc::new(search_tool.clone()));
    visible.extend(
        full.tools
            .iter()
            .filter(|t| t.server().is_some() && !is_candidate(t))
            .cloned(),
    );
    // Loaded tools in load order: a search appends, so earlier requests stay a prefix.
    for name in loaded {
        if let Some(tool) = full
            .tools
            .iter()
            .find(|t| t.name == *name && is_candidate(t))
        {
            visible.push(tool.clone());
        }
    }
    let deferred = full
        .tools
        .iter()
        .filter(|t| is_candidate(t) && !loaded_set.contains(t.name.as_str()))
        .cloned()
        .collect();
    Deferral {
        visible: Pool { tools: visible },
        deferred,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{McpToolInfo, ServerTools, ToolClaims, assemble};
    use serde_json::json;

    fn server(name: &str, tools: &[&str]) -> Arc<ServerTools> {
        Arc::new(ServerTools::new(
            name,
            tools
                .iter()
                .map(|t| McpToolInfo {
                    name: t.to_string(),
                    description: format!("Does {t} with a description long enough to count."),
                    input_schema: Arc::new(json!({"type": "object", "properties": {}})),
                    claims: ToolClaims::default(),
                })
                .collect(),
        ))
    }

    fn search_tool() -> PoolTool {
        PoolTool::builtin(
            crate::builtin::tools::search_tools::ID,
            "find tools",
            json!({"type": "object"}),
        )
    }

    fn full() -> Pool {
        let builtins = vec![PoolTool::builtin(
            crate::builtin::tools::bash::ID,
            "bash",
            json!({"type": "object"}),
        )];
        assemble(
            &builtins,
            &[
                server("github", &["create_issue", "list_issues", "get_issue"]),
                server("slack", &["post_message", "list_channels"]),
            ],
        )
        .unwrap()
    }

    fn names(pool: &Pool) -> Vec<&str> {
        pool.names()
    }

    /// `defer` with [`search_tool`] as the search definition and `always_load` as a list.
    fn split_pool(
        full: &Pool,
        settings: &SearchSettings,
        mcp_tokens: usize,
        always_load: &[&str],
        loaded: &[String],
    ) -> Deferral {
        let always_load: HashSet<&str> = always_load.iter().copied().collect();
        defer(
            full,
            settings,
            mcp_tokens,
            &always_load,
            loaded,
            &search_tool(),
        )
    }

    #[test]
    fn off_and_small_pools_under_auto_carry_every_tool() {
        let full = full();
        for settings in [
            SearchSettings {
                mode: SearchMode::Off,
                auto_threshold_tokens: 0,
            },
            SearchSettings::default(),
        ] {
            let split = split_pool(&full, &settings, mcp_definition_tokens(&full), &[], &[]);
            assert_eq!(split.visible, full);
            assert!(split.deferred.is_empty() && !split.searching());
        }
    }

    #[test]
    fn over_the_threshold_tools_wait_and_loaded_ones_come_last_in_load_order() {
        let full = full();
        let settings = SearchSettings {
            mode: SearchMode::Auto,
            auto_threshold_tokens: 10,
        };
        let split = split_pool(&full, &settings, mcp_definition_tokens(&full), &[], &[]);
        assert_eq!(names(&split.visible), ["bash", "search_tools"]);
        assert_eq!(split.deferred.len(), 5);
        let loaded = vec![
            "mcp__slack__post_message".to_string(),
            "mcp__github__create_issue".to_string(),
            "mcp__gone__tool".to_string(),
        ];
        let split = split_pool(&full, &settings, mcp_definition_tokens(&full), &[], &loaded);
        assert_eq!(
            names(&split.visible),
            [
                "bash",
                "search_tools",
                "mcp__slack__post_message",
                "mcp__github__create_issue"
            ]
        );
        let deferred: Vec<&str> = split.deferred.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            deferred,
            [
                "mcp__github__list_issues",
                "mcp__github__get_issue",
                "mcp__slack__list_channels"
            ]
        );
    }

    #[test]
    fn always_load_servers_stay_and_alone_need_no_search() {
        let full = full();
        let on = SearchSettings {
            mode: SearchMode::On,
            ..SearchSettings::default()
        };
        let split = split_pool(&full, &on, 0, &["slack"], &[]);
        assert_eq!(
            names(&split.visible),
            [
                "bash",
                "search_tools",
                "mcp__slack__post_message",
                "mcp__slack__list_channels"
            ]
        );
        assert_eq!(split.deferred.len(), 3);
        let split = split_pool(&full, &on, 0, &["slack", "github"], &[]);
        assert_eq!(split.visible, full);
    }
}
