//! Deferred tools on the agent's side: which tools the next model call carries (the pure
//! split is `pool::deferral`), the search index over the connected servers' tools, and the
//! `search_tools` built-in, which loads what it finds from the next model call on. Loaded
//! tools stay for the session (also across a server's reconnect). Part of the pool keeper.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::tool_run::ToolRun;
use crate::builtin::{SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX};
use crate::pool::deferral::{self, Deferral};
use crate::pool::search::{IndexedTool, Loading, SearchRequest, ToolIndex, answer};
use crate::pool::{Pool, PoolTool, ServerTools, search_tools_tool};
use crate::settings::SearchSettings;

/// What deferral keeps between model calls.
#[derive(Default)]
pub(super) struct ToolSearch {
    pub settings: SearchSettings,
    /// Model-facing names `search_tools` loaded, oldest first.
    loaded: Vec<String>,
    /// The index and the definitions' token estimate, for the listings they were built
    /// from (compared by pointer: the hub shares one `Arc` per `tools/list`).
    cache: Option<ListingCache>,
    /// The deferred tools of the last assembled pool.
    deferred: Vec<Arc<PoolTool>>,
    /// The deferred tools the front end was last told about (names), to send only changes.
    announced: Option<Vec<String>>,
}

struct ListingCache {
    listings: Vec<Arc<ServerTools>>,
    /// Built on the first search over these listings: below the threshold, or with
    /// search off, nobody searches and building it (tens of ms at a thousand tools) is
    /// wasted on every connect.
    index: std::sync::OnceLock<Arc<ToolIndex>>,
    mcp_tokens: usize,
}

impl ListingCache {
    fn index(&self) -> Arc<ToolIndex> {
        self.index
            .get_or_init(|| Arc::new(ToolIndex::new(&self.listings)))
            .clone()
    }
}

impl ToolSearch {
    pub fn new(settings: SearchSettings) -> Self {
        ToolSearch {
            settings,
            ..ToolSearch::default()
        }
    }

    /// Index and token estimate for these listings, rebuilt only when they changed.
    fn cache_for(&mut self, listings: &[Arc<ServerTools>], full: &Pool) -> &ListingCache {
        let same = self.cache.as_ref().is_some_and(|c| {
            c.listings.len() == listings.len()
                && c.listings
                    .iter()
                    .zip(listings)
                    .all(|(a, b)| Arc::ptr_eq(a, b))
        });
        if !same {
            self.cache = None;
        }
        self.cache.get_or_insert_with(|| ListingCache {
            listings: listings.to_vec(),
            index: std::sync::OnceLock::new(),
            mcp_tokens: deferral::mcp_definition_tokens(full),
        })
    }

    /// Tools loaded in an earlier run of a resumed session come first, in their order.
    pub fn restore_loaded(&mut self, tools: Vec<String>) {
        let mut restored: Vec<String> = Vec::with_capacity(tools.len() + self.loaded.len());
        for tool in tools.into_iter().chain(std::mem::take(&mut self.loaded)) {
            if !restored.contains(&tool) {
                restored.push(tool);
            }
        }
        self.loaded = restored;
    }

    /// How many tools the last assembled pool deferred.
    /// The tools kept out of the request until a search loads them.
    pub fn deferred(&self) -> &[Arc<PoolTool>] {
        &self.deferred
    }

    /// Tools `search_tools` loaded this session, oldest first.
    pub fn loaded(&self) -> &[String] {
        &self.loaded
    }

    pub fn deferred_count(&self) -> usize {
        self.deferred.len()
    }
}

impl ToolSearch {
    /// Splits the full pool of these listings into the tools the next model call carries
    /// and the deferred ones (kept here), when deferral applies.
    pub(super) fn split(
        &mut self,
        full: &Pool,
        listings: &[Arc<ServerTools>],
        always_load: &HashSet<&str>,
    ) -> Pool {
        let search = self;
        let mcp_tokens = search.cache_for(listings, full).mcp_tokens;
        let Deferral { visible, deferred } = deferral::defer(
            full,
            &search.settings,
            mcp_tokens,
            always_load,
            &search.loaded,
            &search_tools_tool(),
        );
        search.deferred = deferred;
        visible
    }

    /// Whether the deferred tools differ from the ones the front end was last told about
    /// (and takes them as told).
    pub(super) fn deferred_changed(&mut self) -> bool {
        let names: Vec<String> = self.deferred.iter().map(|t| t.name.clone()).collect();
        // Nothing announced yet counts as none deferred: a session that never defers sends
        // no `tools_deferred` at all.
        if self.announced.as_deref().unwrap_or_default() == names.as_slice() {
            return false;
        }
        self.announced = Some(names);
        true
    }

    /// A call of a tool that is not in the request: for a deferred tool, say how to load it.
    pub(super) fn unknown_tool(&self, name: &str) -> ToolRun {
        if self.deferred.iter().any(|t| t.name == name) {
            ToolRun::error(format!(
                "{name} is deferred and not loaded yet: call search_tools with {{\"query\": \"{name}\"}} first; it can be called from the step after that."
            ))
        } else {
            ToolRun::error(format!("Unknown tool: {name}"))
        }
    }

    /// `search_tools`: ranks the connected servers' tools for the query, loads the deferred
    /// ones among the best, and lists them for the model; with the tools it newly loaded
    /// (the caller records them and shows the pool with them).
    /// The tools are `None` when the search found nothing to list.
    pub(super) fn search_tools(&mut self, input: &Value) -> (ToolRun, Option<Vec<String>>) {
        let mut found = None;
        let run = self.search(input, &mut found);
        (run, found)
    }

    fn search(&mut self, input: &Value, found: &mut Option<Vec<String>>) -> ToolRun {
        let request = match request_of(input) {
            Ok(request) => request,
            Err(message) => return ToolRun::error(message),
        };
        let limit = match input.get("limit") {
            None | Some(Value::Null) => SEARCH_LIMIT_DEFAULT,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=SEARCH_LIMIT_MAX).contains(&n) => n,
                _ => {
                    return ToolRun::error(format!(
                        "Invalid arguments for search_tools: limit must be a whole number from 1 to {SEARCH_LIMIT_MAX}"
                    ));
                }
            },
        } as usize;
        // The index of the listings the last pool was built from.
        let Some(index) = self.cache.as_ref().map(ListingCache::index) else {
            return ToolRun::ok("No MCP server is connected, so there are no tools to search.");
        };
        let found_tools = index.find(&request, limit);
        if found_tools.hits.is_empty() {
            let servers: Vec<String> = index.tools().iter().map(|t| t.server.to_string()).fold(
                Vec::new(),
                |mut all, s| {
                    if !all.contains(&s) {
                        all.push(s);
                    }
                    all
                },
            );
            return ToolRun::ok(format!(
                "No tool matches \"{}\". Connected MCP servers: {}. Try other words (the action and the object, e.g. \"list pull requests\") or a server name.",
                request.whole(),
                servers.join(", ")
            ));
        }
        let deferred: HashSet<&str> = self.deferred.iter().map(|t| t.name.as_str()).collect();
        let loading = |tool: &IndexedTool| {
            if deferred.contains(tool.name.as_str()) {
                Loading::Loaded
            } else {
                Loading::AlreadyListed
            }
        };
        let text = answer(&request, &found_tools, loading);
        let newly_loaded: Vec<String> = found_tools
            .hits
            .iter()
            .filter(|h| loading(h.tool) == Loading::Loaded)
            .map(|h| h.tool.name.clone())
            .collect();
        drop(deferred);
        for name in &newly_loaded {
            if !self.loaded.contains(name) {
                self.loaded.push(name.clone());
            }
        }
        *found = Some(newly_loaded);
        ToolRun::ok(text)
    }
}

/// The request in `search_tools`' arguments: `query` (one text), `queries` (one text per part
/// of the task), or both.
fn request_of(input: &Value) -> Result<SearchRequest, &'static str> {
    const EXPECTED: &str = "Invalid arguments for search_tools: expected {\"query\": \"<what you want to do, or tool names>\"} or {\"queries\": [\"<one part of the task>\", ...]}";
    let mut texts: Vec<&str> = Vec::new();
    match input.get("query") {
        None | Some(Value::Null) => {}
        Some(Value::String(q)) => texts.push(q),
        Some(_) => return Err(EXPECTED),
    }
    match input.get("queries") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                texts.push(item.as_str().ok_or(EXPECTED)?);
            }
        }
        Some(_) => return Err(EXPECTED),
    }
    let request = SearchRequest::queries(texts);
    if request.is_empty() {
        return Err(EXPECTED);
    }
    Ok(request)
}
