//! One search over a request of several parts ([`SearchRequest`]): each part is ranked alone
//! and the rankings are merged, and the best matches' siblings are named beside them.
//!
//! The merge rule (decision 0075): the lists take turns, one place each, in a fixed order —
//! the whole request first when the host split it, then the parts in the order the request
//! gives them; a tool already placed is skipped, and a list with nothing left drops out,
//! until `limit` tools are placed. So a query the host split in two gets, in five places, the
//! whole request's best, each part's best, then the second of each: every part has its best
//! match in the top three, and a request split where it should not have been still has its
//! whole ranking in front. Parts the model gave (`queries`) take turns alone.
//! Each part is ranked with the servers the whole request names, which a part's own words
//! may no longer say ("… on gitlab and open an issue for it").

use super::request::SearchRequest;
use super::{Expansions, IndexedTool, SearchHit, ToolIndex, text};

/// Most sibling names one result carries: enough for a resource's usual verbs (list, get,
/// create, update, search) on one or two best matches, few enough to stay a line.
pub const MAX_SIBLINGS: usize = 8;

/// What one search found: the ranked tools (at most the limit), then the names of the best
/// matches' siblings that are not among them.
#[derive(Debug, Clone, PartialEq)]
pub struct Found<'a> {
    pub hits: Vec<SearchHit<'a>>,
    pub siblings: Vec<&'a IndexedTool>,
}

impl ToolIndex {
    /// The best `limit` tools for `request`, merged from its parts' rankings (see the module
    /// comment), and the siblings of each ranking's best match. A list that names tools
    /// exactly keeps only those: a named tool is what was asked for.
    pub fn find(&self, request: &SearchRequest, limit: usize) -> Found<'_> {
        let mut lists: Vec<Vec<SearchHit<'_>>> = Vec::with_capacity(request.parts().len() + 1);
        let mut expansions = Expansions::default();
        if request.whole_leads() {
            lists.push(self.search_with(request.whole(), limit, &mut expansions));
        }
        let named = if request.parts().len() > 1 {
            self.named_servers(request.whole())
        } else {
            Vec::new()
        };
        for part in request.parts() {
            lists.push(self.search_with(&with_context(part, &named), limit, &mut expansions));
        }
        for list in &mut lists {
            if list.iter().any(|h| h.exact) {
                list.retain(|h| h.exact);
            }
        }
        let hits = take_turns(&lists, limit);
        let mut siblings: Vec<&IndexedTool> = Vec::new();
        for best in lists.iter().filter_map(|l| l.first()) {
            for id in self.siblings.of(best.id) {
                let tool = &self.tools[id as usize];
                let placed = hits.iter().any(|h| h.id == id);
                if !placed && !siblings.iter().any(|s| std::ptr::eq(*s, tool)) {
                    siblings.push(tool);
                }
            }
        }
        siblings.truncate(MAX_SIBLINGS);
        Found { hits, siblings }
    }
}

impl ToolIndex {
    /// The servers `text` names (all words of the server's name are words of it), once each.
    fn named_servers(&self, text: &str) -> Vec<&str> {
        let terms: Vec<String> = text::query_terms(text)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let mut named: Vec<&str> = Vec::new();
        for (tool, server_terms) in self.tools.iter().zip(&self.server_terms) {
            let server = tool.server.as_str();
            if !server_terms.is_empty()
                && !named.contains(&server)
                && server_terms.iter().all(|t| terms.contains(t))
            {
                named.push(server);
            }
        }
        named
    }
}

/// A part with the servers the whole request names: "open an issue for it" in "get the
/// failing pipeline on gitlab and open an issue for it" means a gitlab issue, and the part's
/// own words no longer say so.
fn with_context(part: &str, servers: &[&str]) -> String {
    let mut text = part.to_string();
    for server in servers {
        if !part.to_lowercase().contains(&server.to_lowercase()) {
            text.push_str(" (");
            text.push_str(server);
            text.push(')');
        }
    }
    text
}

/// The lists' tools taking turns, one place each, first list first; repeats skipped.
fn take_turns<'a>(lists: &[Vec<SearchHit<'a>>], limit: usize) -> Vec<SearchHit<'a>> {
    let mut out: Vec<SearchHit<'a>> = Vec::with_capacity(limit);
    let mut next = vec![0usize; lists.len()];
    while out.len() < limit {
        let mut placed_any = false;
        for (list, at) in lists.iter().zip(next.iter_mut()) {
            if out.len() == limit {
                break;
            }
            // This list's next tool not placed yet.
            while let Some(hit) = list.get(*at) {
                *at += 1;
                if !out.iter().any(|h| h.id == hit.id) {
                    out.push(*hit);
                    placed_any = true;
                    break;
                }
            }
        }
        if !placed_any {
            break;
        }
    }
    out
}
