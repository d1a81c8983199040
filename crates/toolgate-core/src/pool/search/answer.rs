//! The text `search_tools` answers with: what was loaded (one line per tool: name, server,
//! what it does; the full definitions reach the model in the next request's tool list), then
//! the siblings by name only. Pure, so the benchmark measures the same bytes the model reads.

use super::{Found, IndexedTool, SearchRequest};

/// Whether a found tool was loaded by this search or was in the model's tool list already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loading {
    Loaded,
    AlreadyListed,
}

/// The answer for `found`; `loading` says per hit whether this search loaded it.
pub fn answer(
    request: &SearchRequest,
    found: &Found<'_>,
    loading: impl Fn(&IndexedTool) -> Loading,
) -> String {
    let mut lines = Vec::with_capacity(found.hits.len() + 2);
    let mut loaded = 0;
    for hit in &found.hits {
        let tool = hit.tool;
        let state = match loading(tool) {
            Loading::Loaded => {
                loaded += 1;
                ""
            }
            Loading::AlreadyListed => " (already in your tool list)",
        };
        lines.push(format!(
            "- {} (server {}){}: {}",
            tool.name, tool.server, state, tool.summary
        ));
    }
    // The parts searched, each quoted (the whole request when it is one part): shows the
    // model how a request was split without repeating it.
    let quoted: Vec<String> = request.parts().iter().map(|p| format!("\"{p}\"")).collect();
    let quoted = quoted.join(", ");
    let head = if loaded == 0 {
        format!(
            "{} tools for {quoted}, all already in your tool list:",
            found.hits.len()
        )
    } else {
        format!(
            "Loaded {loaded} tool{} for {quoted}; callable from your next step:",
            if loaded == 1 { "" } else { "s" },
        )
    };
    lines.insert(0, head);
    if !found.siblings.is_empty() {
        let names: Vec<&str> = found.siblings.iter().map(|t| t.name.as_str()).collect();
        lines.push(format!(
            "Same resource, not loaded (search the exact name to load): {}",
            names.join(", ")
        ));
    }
    lines.join("\n")
}
