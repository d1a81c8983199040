//! The pool one model call sees: a pure function from the built-in tools and the connected
//! servers' tool lists to model-facing tools. No I/O here; the agent re-assembles the pool
//! before every model call so a server connected mid-turn is visible in the next call.

mod builtins;
pub mod deferral;
mod definition;
mod filter;
mod naming;
pub mod search;

pub use builtins::{
    builtin_tools, plan_mode_tools, pool_builtins, pool_builtins_with_resources, search_tools_tool,
};
#[cfg(test)]
pub(crate) use definition::listed_tool;
pub use definition::{DefinitionHash, canonical_json, definition_hash};
pub use filter::{Exclusion, ToolFilter};
pub use naming::{MAX_NAME_LEN, model_facing_name, normalize};

use crate::builtin::BuiltinId;
use crate::ids::ServerName;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

/// A tool's input schema, shared: the pool is re-assembled before every model call, and
/// copying every schema each time made per-tool cost grow with pool size.
pub type Schema = Arc<Value>;

/// Where a tool comes from. MCP tools keep their raw names: calls go to the server under them.
// Serialized through `OriginWire`, whose `kind` is what users see ("builtin", "connector",
// "mcp"); connectors are built-ins here so that matches on the tool kind stay exhaustive.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "OriginWire", try_from = "OriginWire")]
pub enum ToolOrigin {
    /// bash, read_file, write_file, edit_file, glob, and the connectors connect_mcp /
    /// disconnect_mcp (tools that change the pool itself).
    Builtin(BuiltinId),
    Mcp {
        server: ServerName,
        tool: String,
    },
}

impl ToolOrigin {
    pub fn server(&self) -> Option<&str> {
        match self {
            ToolOrigin::Mcp { server, .. } => Some(server),
            ToolOrigin::Builtin(_) => None,
        }
    }

    /// Which built-in this is; None for MCP tools.
    pub fn builtin(&self) -> Option<BuiltinId> {
        match self {
            ToolOrigin::Builtin(kind) => Some(*kind),
            ToolOrigin::Mcp { .. } => None,
        }
    }

    /// `builtin`, `connector` or `mcp`: the origin as the headless JSONL and the serialized
    /// form name it.
    pub fn as_str(&self) -> &'static str {
        match self {
            ToolOrigin::Builtin(kind) if kind.is_connector() => "connector",
            ToolOrigin::Builtin(_) => "builtin",
            ToolOrigin::Mcp { .. } => "mcp",
        }
    }
}

/// The serialized form of [`ToolOrigin`]: `{"kind": "builtin"|"connector", "tool": NAME}` or
/// `{"kind": "mcp", "server": …, "tool": RAW_NAME}`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum OriginWire {
    Builtin { tool: BuiltinId },
    Connector { tool: BuiltinId },
    Mcp { server: ServerName, tool: String },
}

impl From<ToolOrigin> for OriginWire {
    fn from(origin: ToolOrigin) -> Self {
        match origin {
            ToolOrigin::Builtin(tool) if tool.is_connector() => OriginWire::Connector { tool },
            ToolOrigin::Builtin(tool) => OriginWire::Builtin { tool },
            ToolOrigin::Mcp { server, tool } => OriginWire::Mcp { server, tool },
        }
    }
}

impl TryFrom<OriginWire> for ToolOrigin {
    type Error = String;

    fn try_from(wire: OriginWire) -> Result<Self, String> {
        let (tool, listed_as_connector) = match wire {
            OriginWire::Builtin { tool } => (tool, false),
            OriginWire::Connector { tool } => (tool, true),
            OriginWire::Mcp { server, tool } => return Ok(ToolOrigin::Mcp { server, tool }),
        };
        if tool.is_connector() == listed_as_connector {
            Ok(ToolOrigin::Builtin(tool))
        } else {
            Err(format!("{tool} is listed under the wrong kind"))
        }
    }
}

pub use crate::protocol::ToolClaims;

/// A tool as an MCP server listed it (raw name, raw schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolInfo {
    pub name: String,
    pub description: String,
    pub input_schema: Schema,
    pub claims: ToolClaims,
}

/// The tool list of one connected server, in the server's order, prepared for assembly.
///
/// Everything the pool needs per tool (model-facing name, schema check, the entry the
/// model sees) is worked out here, once per `tools/list`, not in [`assemble`]: the pool is
/// re-assembled before every model call, and doing that work there made the cost per tool
/// grow with the number of servers (more live memory per call, more cache misses). What is
/// left per call is one reference-count increment and one hash-table insert per tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTools {
    server: ServerName,
    /// The tools that pass the server's filter: the only ones a pool (or a search) sees.
    tools: Vec<McpToolInfo>,
    /// The whole listing, in the server's order (to tell whether a re-list changed it).
    listed: Vec<McpToolInfo>,
    /// Tools the server's `includeTools` / `excludeTools` keep out, with the reason.
    excluded: Vec<(McpToolInfo, Exclusion)>,
    /// Tools left out because their input schema cannot go to a model API: one bad tool
    /// must not cost the server's other tools (decision 0069).
    invalid: Vec<InvalidTool>,
    /// The pool entries of `tools`, in order, each with the hash of its model-facing name.
    prepared: Vec<PreparedTool>,
}

/// A tool a server listed that no pool takes, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTool {
    /// The raw name ("(unnamed)" when the listing had none).
    pub name: String,
    pub problem: SchemaProblem,
}

/// What is wrong with a listed tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaProblem {
    /// The listing has no `inputSchema`.
    Missing,
    /// `inputSchema` is JSON but not an object (`true`, a string…); shown shortened.
    NotAnObject(String),
    /// An object whose root `type` is not "object" (`found`: "type \"array\"", "no type").
    RootNotObject(String),
    /// The tool entry itself could not be read (`why`: the decoder's message).
    Unreadable(String),
}

impl std::fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaProblem::Missing => f.write_str("it has no inputSchema"),
            SchemaProblem::NotAnObject(value) => write!(
                f,
                "its inputSchema is not a JSON object ({value}); model APIs require an object schema"
            ),
            SchemaProblem::RootNotObject(found) => write!(
                f,
                "its inputSchema's root is not type \"object\" ({found}); model APIs require an object schema"
            ),
            SchemaProblem::Unreadable(why) => write!(f, "its entry cannot be read ({why})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct PreparedTool {
    name_hash: u64,
    entry: Arc<PoolTool>,
}

impl ServerTools {
    pub fn new(server: impl Into<String>, tools: Vec<McpToolInfo>) -> Self {
        Self::filtered(server, tools, &ToolFilter::all())
    }

    /// Adds tools the listing itself could not read (no object schema): they are left out
    /// like the ones whose schema's root is not an object.
    pub fn with_unreadable(mut self, unreadable: Vec<InvalidTool>) -> Self {
        self.invalid.extend(unreadable);
        self
    }

    /// The listing with the server's filter applied: excluded tools are kept aside (for
    /// the panel) and never prepared for a pool.
    pub fn filtered(
        server: impl Into<String>,
        listed: Vec<McpToolInfo>,
        filter: &ToolFilter,
    ) -> Self {
        let server = server.into();
        let (tools, excluded) = if filter.is_all() {
            (listed.clone(), Vec::new())
        } else {
            let mut tools = Vec::with_capacity(listed.len());
            let mut excluded = Vec::new();
            for tool in &listed {
                match filter.check(&tool.name) {
                    None => tools.push(tool.clone()),
                    Some(why) => excluded.push((tool.clone(), why)),
                }
            }
            (tools, excluded)
        };
        let mut invalid = Vec::new();
        let tools: Vec<McpToolInfo> = tools
            .into_iter()
            .filter(|tool| match check_object_schema(tool) {
                Ok(()) => true,
                Err(problem) => {
                    invalid.push(InvalidTool {
                        name: tool.name.clone(),
                        problem,
                    });
                    false
                }
            })
            .collect();
        let prepared = tools
            .iter()
            .map(|tool| {
                let (name, shortened) = model_facing_name(&server, &tool.name);
                PreparedTool {
                    name_hash: name_hash(&name),
                    entry: Arc::new(PoolTool {
                        name,
                        origin: ToolOrigin::Mcp {
                            server: server.clone().into(),
                            tool: tool.name.clone(),
                        },
                        description: tool.description.clone(),
                        input_schema: tool.input_schema.clone(),
                        claims: tool.claims.clone(),
                        shortened,
                    }),
                }
            })
            .collect();
        ServerTools {
            server: server.into(),
            tools,
            listed,
            excluded,
            invalid,
            prepared,
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tools as the server listed them (raw names, raw schemas), without the ones its
    /// filter excludes.
    pub fn tools(&self) -> &[McpToolInfo] {
        &self.tools
    }

    /// Everything the server listed, excluded tools included.
    pub fn listed(&self) -> &[McpToolInfo] {
        &self.listed
    }

    /// The tools the server's filter keeps out of every pool, with the reason.
    pub fn excluded(&self) -> &[(McpToolInfo, Exclusion)] {
        &self.excluded
    }

    /// The tools left out because their schema cannot go to a model API.
    pub fn invalid(&self) -> &[InvalidTool] {
        &self.invalid
    }
}

/// One entry of the pool, as the model sees it plus what the UI needs to explain it.
// Eq lets `Arc<PoolTool>` compare by pointer first, so comparing two pools that share
// their MCP entries (the agent does before every call) does not walk the schemas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolTool {
    /// Model-facing name (`bash`, `mcp__docs__search`, …), at most 64 characters.
    pub name: String,
    pub origin: ToolOrigin,
    pub description: String,
    pub input_schema: Schema,
    pub claims: ToolClaims,
    /// True when the name was shortened to fit 64 characters (the UI marks it).
    pub shortened: bool,
}

impl PoolTool {
    /// A built-in's entry; its model-facing name is the kind's name.
    pub fn builtin(kind: BuiltinId, description: &str, input_schema: Value) -> Self {
        PoolTool {
            name: kind.name().to_string(),
            origin: ToolOrigin::Builtin(kind),
            description: description.to_string(),
            input_schema: Arc::new(input_schema),
            claims: ToolClaims::default(),
            shortened: false,
        }
    }

    pub fn server(&self) -> Option<&str> {
        self.origin.server()
    }

    /// Which built-in this is; None for MCP tools.
    pub fn builtin_kind(&self) -> Option<BuiltinId> {
        self.origin.builtin()
    }

    /// `server/tool` for MCP tools, the name for the rest: what error messages call it.
    pub fn origin_label(&self) -> String {
        match &self.origin {
            ToolOrigin::Mcp { server, tool } => format!("MCP tool '{server}'/'{tool}'"),
            ToolOrigin::Builtin(_) => format!("built-in tool '{}'", self.name),
        }
    }
}

/// The assembled pool for one model call. Entries are shared with the listings they came
/// from, so a pool costs one pointer per tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pool {
    pub tools: Vec<Arc<PoolTool>>,
}

impl Pool {
    pub fn get(&self, name: &str) -> Option<&PoolTool> {
        self.tools.iter().find(|t| t.name == name).map(|t| &**t)
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoolError {
    #[error("MCP tool name collision after normalization: '{name}' maps both {first} and {second}")]
    Collision {
        name: String,
        first: String,
        second: String,
    },
}

/// Builds the pool: built-ins first (in the given order), then each server's tools in
/// connection order. Any collision is an error and no pool is produced, so the caller can
/// refuse the connection that caused it and keep the previous pool. Tools with an invalid
/// schema were left out when their listing was prepared ([`ServerTools::invalid`]).
pub fn assemble(builtins: &[PoolTool], servers: &[Arc<ServerTools>]) -> Result<Pool, PoolError> {
    let prepared: Vec<&Vec<PreparedTool>> = servers.iter().map(|s| &s.prepared).collect();
    let total = builtins.len() + prepared.iter().map(|tools| tools.len()).sum::<usize>();
    let mut tools = Vec::with_capacity(total);
    let mut seen = NameIndex::with_capacity(total);
    for builtin in builtins {
        seen.insert(name_hash(&builtin.name), tools.len());
        tools.push(Arc::new(builtin.clone()));
    }
    for tool in prepared.into_iter().flatten() {
        if let Some(first) = seen.insert(tool.name_hash, tools.len())
            && tools[first].name == tool.entry.name
        {
            return Err(collision(&tools[first], &tool.entry));
        }
        tools.push(tool.entry.clone());
    }
    if seen.hashes_collided {
        // Two different names with one 64-bit hash: practically never, but then the index
        // above may have missed a clash, so check by name.
        check_collisions_by_name(&tools)?;
    }
    Ok(Pool { tools })
}

fn collision(first: &PoolTool, second: &PoolTool) -> PoolError {
    PoolError::Collision {
        name: second.name.clone(),
        first: first.origin_label(),
        second: second.origin_label(),
    }
}

fn check_collisions_by_name(tools: &[Arc<PoolTool>]) -> Result<(), PoolError> {
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        if let Some(&first) = by_name.get(tool.name.as_str()) {
            return Err(collision(&tools[first], tool));
        }
        by_name.insert(&tool.name, index);
    }
    Ok(())
}

/// Hash of a model-facing name; fixed keys so it is the same for a listing prepared in one
/// place and a built-in hashed in another.
fn name_hash(name: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

/// Pool positions by name hash. The keys are already hashes, so the table uses them as they
/// are instead of hashing them again.
struct NameIndex {
    positions: HashMap<u64, usize, BuildHasherDefault<PassThroughHasher>>,
    hashes_collided: bool,
}

impl NameIndex {
    fn with_capacity(capacity: usize) -> Self {
        NameIndex {
            positions: HashMap::with_capacity_and_hasher(capacity, Default::default()),
            hashes_collided: false,
        }
    }

    /// Records `position` under `hash`; returns the position that already had this hash
    /// (kept as the "first" of a collision report).
    fn insert(&mut self, hash: u64, position: usize) -> Option<usize> {
        match self.positions.entry(hash) {
            Entry::Occupied(existing) => {
                self.hashes_collided = true;
                Some(*existing.get())
            }
            Entry::Vacant(slot) => {
                slot.insert(position);
                None
            }
        }
    }
}

#[derive(Default)]
struct PassThroughHasher(u64);

impl Hasher for PassThroughHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed here; fold anything else in so it still works.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

fn check_object_schema(tool: &McpToolInfo) -> Result<(), SchemaProblem> {
    match tool.input_schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        Some(other) => Err(SchemaProblem::RootNotObject(format!("type {other}"))),
        None if !tool.input_schema.is_object() => {
            Err(SchemaProblem::NotAnObject(tool.input_schema.to_string()))
        }
        None => Err(SchemaProblem::RootNotObject("no type".to_string())),
    }
}

#[cfg(test)]
mod tests;
