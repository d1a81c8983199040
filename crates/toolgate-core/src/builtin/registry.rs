//! The built-in tools, in pool order: the one list a new tool is added to, and what
//! depends on the list (every built-in, lookup by name, order, reading a name back).

use serde::{Deserialize, Deserializer};
use std::cmp::Ordering;

use super::BuiltinId;
use super::handler::BuiltinHandler;
use super::tools;

pub(super) static HANDLERS: &[&dyn BuiltinHandler] = &[
    &tools::bash::Bash,
    &tools::read_file::ReadFile,
    &tools::write_file::WriteFile,
    &tools::edit_file::EditFile,
    &tools::glob::Glob,
    &tools::connect_mcp::ConnectMcp,
    &tools::disconnect_mcp::DisconnectMcp,
    &tools::list_mcp_resources::ListMcpResources,
    &tools::read_mcp_resource::ReadMcpResource,
    &tools::search_tools::SearchTools,
    &tools::exit_plan_mode::ExitPlanMode,
];

impl BuiltinId {
    /// Every built-in, in pool order.
    pub fn all() -> impl Iterator<Item = BuiltinId> {
        HANDLERS.iter().map(|handler| BuiltinId::new(*handler))
    }

    /// The built-in with this model-facing name, if any.
    pub fn from_name(name: &str) -> Option<BuiltinId> {
        BuiltinId::all().find(|id| id.name() == name)
    }

    /// The position in pool order.
    fn position(self) -> usize {
        BuiltinId::all()
            .position(|id| id.name() == self.name())
            .unwrap_or(usize::MAX)
    }
}

impl PartialOrd for BuiltinId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Pool order, as the enum this replaced ordered them.
impl Ord for BuiltinId {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.position(), self.name()).cmp(&(other.position(), other.name()))
    }
}

/// Only a registered name reads back; anything else is refused, never guessed.
impl<'de> Deserialize<'de> for BuiltinId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        BuiltinId::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown built-in tool `{name}`")))
    }
}
