//! Siblings: the tools of one server that act on the same resource with different verbs
//! (`list_issues`, `get_issue`, `create_issue`, `update_issue`). A near miss is usually one:
//! the ranking found the right resource but another verb, and the right tool sits just below
//! the top five. Naming the best match's siblings in the result lets the model load the
//! right one by name in one more step instead of searching again.

use super::text;
use std::collections::HashMap;

/// The tools that share a resource, found once per index.
#[derive(Debug, Clone, Default)]
pub(super) struct Siblings {
    /// Per tool (index order), its group in `groups`, if its name names a resource.
    group_of: Vec<Option<u32>>,
    /// Per group, its tools in index order.
    groups: Vec<Vec<u32>>,
    /// (server, resource words) → group, while the index is built.
    keys: HashMap<(String, Vec<String>), u32>,
}

impl Siblings {
    /// Adds the next tool of the index (ids are given in order).
    pub fn push(&mut self, server: &str, name: &str) {
        let id = self.group_of.len() as u32;
        let resource = resource(server, name);
        if resource.is_empty() {
            self.group_of.push(None);
            return;
        }
        let next = self.groups.len() as u32;
        let group = *self
            .keys
            .entry((server.to_string(), resource))
            .or_insert(next);
        if group == next {
            self.groups.push(Vec::new());
        }
        self.groups[group as usize].push(id);
        self.group_of.push(Some(group));
    }

    /// The building map is not needed once every tool is in.
    pub fn finish(&mut self) {
        self.keys = HashMap::new();
    }

    /// The other tools of `id`'s group, in index order.
    pub fn of(&self, id: u32) -> impl Iterator<Item = u32> + '_ {
        self.group_of
            .get(id as usize)
            .copied()
            .flatten()
            .into_iter()
            .flat_map(|g| self.groups[g as usize].iter().copied())
            .filter(move |&other| other != id)
    }
}

/// What a tool's name acts on: its words, stemmed, without its verb (the first word that
/// names an action, see [`text::actions_of`]) and without the server's own name
/// (`slack_list_channels` on `slack` → channel). A later action word is part of the object:
/// `add_issue_comment` acts on issue comments, not on issues. Empty when the name has no
/// verb: then it is not one of a family of verbs on one resource.
fn resource(server: &str, name: &str) -> Vec<String> {
    let server = text::terms(server);
    let mut verb = false;
    let mut out = Vec::new();
    for term in text::terms(name) {
        if !verb && text::actions_of(&term) != text::Actions::default() {
            verb = true;
        } else if !server.contains(&term) {
            out.push(term);
        }
    }
    if verb { out } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn siblings(tools: &[(&str, &str)], of: u32) -> Vec<u32> {
        let mut s = Siblings::default();
        for (server, name) in tools {
            s.push(server, name);
        }
        s.finish();
        s.of(of).collect()
    }

    #[test]
    fn verbs_on_one_resource_of_one_server_are_siblings() {
        let tools = [
            ("github", "list_issues"),
            ("github", "get_issue"),
            ("github", "add_issue_comment"),
            ("gitlab", "get_issue"),
            ("github", "create_issue"),
        ];
        assert_eq!(siblings(&tools, 0), [1, 4]);
        assert_eq!(siblings(&tools, 2), Vec::<u32>::new(), "comments differ");
        assert_eq!(siblings(&tools, 3), Vec::<u32>::new(), "another server");
    }

    #[test]
    fn the_server_prefix_and_names_without_verbs_make_no_family() {
        let tools = [
            ("slack", "slack_list_channels"),
            ("slack", "slack_get_channel_history"),
            ("postgres", "query"),
            ("postgres", "schema"),
        ];
        assert_eq!(siblings(&tools, 0), Vec::<u32>::new());
        assert_eq!(siblings(&tools, 3), Vec::<u32>::new());
    }
}
