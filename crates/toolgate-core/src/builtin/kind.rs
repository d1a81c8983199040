//! Which built-in a pool entry is: a handle on the tool's handler, compared by name. The
//! pool, the policy and the agent ask it (or the handler behind it) what they need, so a
//! new built-in needs no decision anywhere else. Listing, lookup by name, order and
//! reading back from text come from the registry (`registry.rs`).

use serde::{Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};

use super::handler::{BuiltinHandler, FileAccess, Judgement, Presence, RunsIn};

/// A built-in tool: its handler, known by its model-facing name.
#[derive(Clone, Copy)]
pub struct BuiltinId(&'static dyn BuiltinHandler);

impl BuiltinId {
    pub const fn new(handler: &'static dyn BuiltinHandler) -> Self {
        BuiltinId(handler)
    }

    pub fn handler(self) -> &'static dyn BuiltinHandler {
        self.0
    }

    /// The model-facing name (also the name rules and the session log use).
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    pub fn judgement(self) -> Judgement {
        self.0.judgement()
    }

    pub fn runs_in(self) -> RunsIn {
        self.0.runs_in()
    }

    pub fn presence(self) -> Presence {
        self.0.presence()
    }

    /// connect_mcp, disconnect_mcp and search_tools change the pool itself; the agent
    /// runs them.
    pub fn is_connector(self) -> bool {
        self.0.changes_pool()
    }

    /// Whether the tool runs shell command lines (bash).
    pub fn is_shell(self) -> bool {
        self.judgement() == Judgement::Shell
    }

    /// The file access of a file tool (read_file, write_file, edit_file, glob).
    pub fn file_access(self) -> Option<FileAccess> {
        match self.judgement() {
            Judgement::File(access) => Some(access),
            _ => None,
        }
    }

    /// The input field that names the file system location the tool touches: `path` for
    /// the file tools, `pattern` for glob (whose literal base is the location).
    pub fn path_field(self) -> Option<&'static str> {
        self.file_access().map(|access| access.locate.field())
    }

    /// Whether the tool changes the file its path names (write_file, edit_file).
    pub fn writes_files(self) -> bool {
        self.file_access().is_some_and(FileAccess::writes)
    }
}

impl PartialEq for BuiltinId {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for BuiltinId {}

impl Hash for BuiltinId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for BuiltinId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BuiltinId({})", self.name())
    }
}

impl fmt::Display for BuiltinId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for BuiltinId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for kind in BuiltinId::all() {
            assert_eq!(BuiltinId::from_name(kind.name()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.name())
            );
            assert_eq!(
                serde_json::from_value::<BuiltinId>(serde_json::json!(kind.name())).unwrap(),
                kind
            );
            assert_eq!(kind.to_string(), kind.name());
        }
        for other in ["rm_rf", "Bash", "mcp__docs__search", ""] {
            assert_eq!(BuiltinId::from_name(other), None, "{other}");
            assert!(serde_json::from_value::<BuiltinId>(serde_json::json!(other)).is_err());
        }
    }

    #[test]
    fn connectors_and_path_fields() {
        let connectors: Vec<&str> = BuiltinId::all()
            .filter(|k| k.is_connector())
            .map(BuiltinId::name)
            .collect();
        assert_eq!(
            connectors,
            ["connect_mcp", "disconnect_mcp", "search_tools"]
        );
        let with_paths: Vec<(&str, &str)> = BuiltinId::all()
            .filter_map(|k| Some((k.name(), k.path_field()?)))
            .collect();
        assert_eq!(
            with_paths,
            [
                ("read_file", "path"),
                ("write_file", "path"),
                ("edit_file", "path"),
                ("glob", "pattern")
            ]
        );
    }

    #[test]
    fn ids_order_as_the_pool_lists_them() {
        let mut shuffled: Vec<BuiltinId> = BuiltinId::all().collect();
        shuffled.reverse();
        shuffled.sort();
        assert!(shuffled.iter().copied().eq(BuiltinId::all()));
    }
}
