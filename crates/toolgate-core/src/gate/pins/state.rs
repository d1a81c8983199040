//! The session's side of pinned definitions: the project's pins ("always" grants, in
//! `.toolgate/pins.json`), the pins of rules' first uses (in the state directory), the
//! session's pins, and which tools are new (listed after their server's first listing this
//! session). The gate consults it before a call; the agent feeds it
//! every listing and sends the panel its marks.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::file::{self as pins, Pin, PinCheck, Pins, pin_key};
use crate::pool::{Pool, PoolTool, ServerTools};
use crate::protocol::{DefinitionMark, ExcludedTool, ToolMark};

#[derive(Debug, Default)]
pub struct Pinning {
    project_path: PathBuf,
    project: Pins,
    /// None: no state directory; rules' first uses are pinned for this session only.
    used_path: Option<PathBuf>,
    used: Pins,
    session: Pins,
    /// Raw tool names per server: its first listing this session, plus tools the person
    /// has since let run. A server absent here has not been listed yet.
    known: HashMap<String, HashSet<String>>,
    /// Servers whose entry says `"trustNewTools": true`.
    trusting: HashSet<String>,
    /// The listings last looked at, to skip unchanged ones (compared by pointer).
    observed: HashMap<String, Arc<ServerTools>>,
    /// Why the project's pins could not be read (told once at start).
    pub load_problem: Option<String>,
    /// Set when pins or listings changed since the panel's marks were last computed.
    dirty: bool,
    last_marks: Option<(Vec<ToolMark>, Vec<ExcludedTool>)>,
}

impl Pinning {
    /// `pins_dir`: the state directory's `pins` folder (None: rule pins stay in memory).
    pub fn load(workspace: &std::path::Path, pins_dir: Option<&std::path::Path>) -> Pinning {
        let mut problems = Vec::new();
        let mut read = |path: &std::path::Path| {
            pins::load(path).unwrap_or_else(|e| {
                problems.push(e.to_string());
                Pins::default()
            })
        };
        let project_path = pins::project_pins_path(workspace);
        let project = read(&project_path);
        let used_path = pins_dir.map(|dir| pins::used_pins_path(dir, workspace));
        let used = used_path.as_deref().map(&mut read).unwrap_or_default();
        let load_problem = (!problems.is_empty()).then(|| {
            format!(
                "{}; those pinned definitions are not checked this session",
                problems.join("; ")
            )
        });
        Pinning {
            project_path,
            project,
            used_path,
            used,
            load_problem,
            dirty: true,
            ..Pinning::default()
        }
    }

    /// Looks at the connected servers' listings: a server listed for the first time makes
    /// its tools known; a tool listed later (list_changed, reconnect) is new, unless its
    /// server trusts new tools.
    pub fn observe(&mut self, listings: &[Arc<ServerTools>], trusts_new: impl Fn(&str) -> bool) {
        for listing in listings {
            let server = listing.server();
            if self
                .observed
                .get(server)
                .is_some_and(|seen| Arc::ptr_eq(seen, listing))
            {
                continue;
            }
            self.observed.insert(server.to_string(), listing.clone());
            self.dirty = true;
            let first = !self.known.contains_key(server);
            if trusts_new(server) {
                self.trusting.insert(server.to_string());
            }
            let known = self.known.entry(server.to_string()).or_default();
            if first || self.trusting.contains(server) {
                known.extend(listing.tools().iter().map(|t| t.name.clone()));
            }
        }
    }

    /// Listed after its server's first listing, and not let run by the person since.
    pub fn is_new(&self, tool: &PoolTool) -> bool {
        let Some(server) = tool.server() else {
            return false;
        };
        let crate::pool::ToolOrigin::Mcp { tool: raw, .. } = &tool.origin else {
            return false;
        };
        self.known
            .get(server)
            .is_some_and(|known| !known.contains(raw))
    }

    /// The session's pin first (a definition accepted for this session), then the
    /// project's ("always"), then the one a rule's first use left.
    pub fn check(&self, tool: &PoolTool) -> PinCheck {
        let pin = self
            .session
            .get(tool)
            .or_else(|| self.project.get(tool))
            .or_else(|| self.used.get(tool));
        pins::check(pin, tool)
    }

    /// The person let it run: it is no longer new.
    pub fn acknowledge(&mut self, tool: &PoolTool) {
        if let crate::pool::ToolOrigin::Mcp { server, tool: raw } = &tool.origin {
            self.known
                .entry(server.clone().into_string())
                .or_default()
                .insert(raw.clone());
            self.dirty = true;
        }
    }

    pub fn pin_session(&mut self, tool: &PoolTool) {
        self.dirty |= self.session.pin(tool, "session grant");
    }

    /// Pins `tool` for the project in memory and returns what to write to the pins file
    /// (the caller writes it off the async executor). A session pin of it is dropped: the
    /// project's is the newer word.
    pub fn pin_project(
        &mut self,
        tool: &PoolTool,
        pinned_by: &str,
    ) -> Option<(PathBuf, String, Pin)> {
        let key = pin_key(tool)?;
        let pin = Pin::of(tool, pinned_by)?;
        self.project.insert(key.clone(), pin.clone());
        self.session.remove_named(&tool.name);
        self.dirty = true;
        Some((self.project_path.clone(), key, pin))
    }

    /// Pins what a rule's first use covered; returns what to write (None: no state
    /// directory, or a built-in), the caller writes it off the async executor.
    pub fn pin_used(&mut self, tool: &PoolTool, pinned_by: &str) -> Option<(PathBuf, String, Pin)> {
        let key = pin_key(tool)?;
        let pin = Pin::of(tool, pinned_by)?;
        self.used.insert(key.clone(), pin.clone());
        self.dirty = true;
        Some((self.used_path.clone()?, key, pin))
    }

    /// A revoked session grant takes its session pin with it.
    pub fn forget_session(&mut self, name: &str) {
        self.session.remove_named(name);
        self.dirty = true;
    }

    /// The panel's marks (changed, new) and excluded tools, when they differ from the last
    /// ones returned.
    pub fn marks_if_changed(
        &mut self,
        pool: &Pool,
        deferred: &[Arc<PoolTool>],
        listings: &[Arc<ServerTools>],
    ) -> Option<(Vec<ToolMark>, Vec<ExcludedTool>)> {
        if !self.dirty {
            return None;
        }
        self.dirty = false;
        // Deferred tools too: a changed or new definition asks on its first call whether or
        // not it was loaded yet, and the panel lists both kinds.
        let marks: Vec<ToolMark> = pool
            .tools
            .iter()
            .chain(deferred)
            .filter(|t| t.server().is_some())
            .filter_map(|tool| {
                let mark = match self.check(tool) {
                    PinCheck::Changed(pin) => DefinitionMark::Changed {
                        pinned_by: pin.pinned_by,
                    },
                    _ if self.is_new(tool) => DefinitionMark::New,
                    _ => return None,
                };
                Some(ToolMark {
                    tool: tool.name.clone(),
                    mark,
                })
            })
            .collect();
        let excluded: Vec<ExcludedTool> = listings
            .iter()
            .flat_map(|listing| {
                listing.excluded().iter().map(|(tool, why)| ExcludedTool {
                    server: listing.server().to_string().into(),
                    tool: tool.name.clone(),
                    why: why.to_string(),
                })
            })
            .collect();
        let fresh = (marks, excluded);
        if self.last_marks.as_ref() == Some(&fresh) {
            return None;
        }
        self.last_marks = Some(fresh.clone());
        Some(fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{McpToolInfo, assemble};
    use serde_json::json;

    fn listing(server: &str, names: &[&str], description: &str) -> Arc<ServerTools> {
        let tools = names
            .iter()
            .map(|n| McpToolInfo {
                name: n.to_string(),
                description: description.into(),
                input_schema: Arc::new(json!({"type": "object"})),
                claims: Default::default(),
            })
            .collect();
        Arc::new(ServerTools::new(server, tools))
    }

    fn tool(listing: &Arc<ServerTools>, name: &str) -> PoolTool {
        let pool = assemble(&[], std::slice::from_ref(listing)).unwrap();
        let found = pool.tools.iter().find(|t| t.name.ends_with(name)).unwrap();
        PoolTool::clone(found)
    }

    #[test]
    fn tools_after_the_first_listing_are_new_unless_the_server_trusts_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut pinning = Pinning::load(dir.path(), None);
        assert_eq!(pinning.load_problem, None);
        let first = listing("a", &["one"], "d");
        pinning.observe(&[first.clone(), listing("b", &["one"], "d")], |s| s == "b");
        assert!(!pinning.is_new(&tool(&first, "one")));
        let later = listing("a", &["one", "two"], "d");
        let trusted = listing("b", &["one", "two"], "d");
        pinning.observe(&[later.clone(), trusted.clone()], |s| s == "b");
        assert!(pinning.is_new(&tool(&later, "two")));
        assert!(!pinning.is_new(&tool(&trusted, "two")));
        // "two" is deferred (not in the request): it is marked all the same.
        let mut pool = assemble(&[], std::slice::from_ref(&later)).unwrap();
        let (deferred, visible): (Vec<_>, Vec<_>) =
            pool.tools.drain(..).partition(|t| t.name == "mcp__a__two");
        pool.tools = visible;
        assert_eq!(deferred.len(), 1);
        let (marks, excluded) = pinning
            .marks_if_changed(&pool, &deferred, std::slice::from_ref(&later))
            .unwrap();
        assert_eq!(
            marks,
            [ToolMark {
                tool: "mcp__a__two".into(),
                mark: DefinitionMark::New
            }]
        );
        assert!(excluded.is_empty());
        assert_eq!(
            pinning.marks_if_changed(&pool, &deferred, std::slice::from_ref(&later)),
            None
        );
        pinning.acknowledge(&tool(&later, "two"));
        assert!(!pinning.is_new(&tool(&later, "two")));
    }

    #[test]
    fn session_pin_wins_over_the_project_pin_until_the_project_is_repinned() {
        let dir = tempfile::tempdir().unwrap();
        let mut pinning = Pinning::load(dir.path(), None);
        let old = tool(&listing("a", &["one"], "old"), "one");
        let new = tool(&listing("a", &["one"], "new"), "one");
        let (path, key, pin) = pinning.pin_project(&old, "always grant").unwrap();
        pins::save(&path, &key, &pin).unwrap();
        assert!(matches!(pinning.check(&new), PinCheck::Changed(_)));
        pinning.pin_session(&new);
        assert_eq!(pinning.check(&new), PinCheck::Same);
        pinning.forget_session(&new.name);
        assert!(matches!(pinning.check(&new), PinCheck::Changed(_)));
        // A rule's first use pins outside the workspace; the project's pin still wins.
        let state = tempfile::tempdir().unwrap();
        let mut with_state = Pinning::load(dir.path(), Some(state.path()));
        let (path, key, pin) = with_state.pin_used(&new, "rule mcp__a__*").unwrap();
        assert!(path.starts_with(state.path()));
        pins::save(&path, &key, &pin).unwrap();
        let reloaded = Pinning::load(dir.path(), Some(state.path()));
        assert!(matches!(reloaded.check(&new), PinCheck::Changed(_)));
        std::fs::remove_file(pins::project_pins_path(dir.path())).unwrap();
        let reloaded = Pinning::load(dir.path(), Some(state.path()));
        assert_eq!(reloaded.check(&new), PinCheck::Same);
        std::fs::write(&path, "[]").unwrap();
        let broken = Pinning::load(dir.path(), Some(state.path()));
        assert!(
            broken
                .load_problem
                .as_deref()
                .is_some_and(|p| p.contains("not a valid pins file")),
            "{:?}",
            broken.load_problem
        );
        pins::save(
            &pins::project_pins_path(dir.path()),
            &key,
            &Pin::of(&old, "always grant").unwrap(),
        )
        .unwrap();
        // A later session reads the project's pin from the file.
        let reloaded = Pinning::load(dir.path(), None);
        assert!(matches!(reloaded.check(&new), PinCheck::Changed(_)));
        assert_eq!(reloaded.check(&old), PinCheck::Same);
    }
}
