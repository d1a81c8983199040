//! The pool one model call sees: a pure function from the built-in tools and the connected
//! servers' tool lists to model-facing tools. No I/O here; the agent re-assembles the pool
//! before every model call so a server connected mid-turn is visible in the next call.

mod naming;

pub use naming::{MAX_NAME_LEN, model_facing_name, normalize};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// A tool's input schema, shared: the pool is re-assembled before every model call, and
/// copying every schema each time made per-tool cost grow with pool size.
pub type Schema = Arc<Value>;

/// Where a tool comes from. MCP tools keep their raw names: calls go to the server under them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOrigin {
    /// bash, read_file, write_file, edit_file, glob.
    Builtin,
    /// connect_mcp / disconnect_mcp: tools that change the pool itself.
    Connector,
    Mcp {
        server: String,
        tool: String,
    },
}

impl ToolOrigin {
    pub fn server(&self) -> Option<&str> {
        match self {
            ToolOrigin::Mcp { server, .. } => Some(server),
            _ => None,
        }
    }
}

/// What a server *claims* about a tool (MCP annotations). Shown to the user, never used to
/// authorize anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolClaims {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolClaims {
    pub fn is_empty(&self) -> bool {
        self == &ToolClaims::default()
    }

    /// Human-readable list such as `readOnlyHint=true, destructiveHint=false`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.title {
            parts.push(format!("title={t:?}"));
        }
        for (label, v) in [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ] {
            if let Some(v) = v {
                parts.push(format!("{label}={v}"));
            }
        }
        parts.join(", ")
    }
}

/// A tool as an MCP server listed it (raw name, raw schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolInfo {
    pub name: String,
    pub description: String,
    pub input_schema: Schema,
    pub claims: ToolClaims,
}

/// The tool list of one connected server, in the server's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerTools {
    pub server: String,
    pub tools: Vec<McpToolInfo>,
}

/// One entry of the pool, as the model sees it plus what the UI needs to explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub fn builtin(name: &str, description: &str, input_schema: Value) -> Self {
        PoolTool {
            name: name.to_string(),
            origin: ToolOrigin::Builtin,
            description: description.to_string(),
            input_schema: Arc::new(input_schema),
            claims: ToolClaims::default(),
            shortened: false,
        }
    }

    pub fn server(&self) -> Option<&str> {
        self.origin.server()
    }

    /// `server/tool` for MCP tools, the name for the rest: what error messages call it.
    pub fn origin_label(&self) -> String {
        match &self.origin {
            ToolOrigin::Mcp { server, tool } => format!("MCP tool '{server}'/'{tool}'"),
            _ => format!("built-in tool '{}'", self.name),
        }
    }
}

/// The assembled pool for one model call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    pub tools: Vec<PoolTool>,
}

impl Pool {
    pub fn get(&self, name: &str) -> Option<&PoolTool> {
        self.tools.iter().find(|t| t.name == name)
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
    #[error(
        "MCP tool '{server}'/'{tool}' has an inputSchema whose root is not type \"object\" ({found}); model APIs require an object schema"
    )]
    NonObjectSchema {
        server: String,
        tool: String,
        found: String,
    },
}

/// Builds the pool: built-ins first (in the given order), then each server's tools in
/// connection order. Any collision or invalid schema is an error and no pool is produced,
/// so the caller can refuse the connection that caused it and keep the previous pool.
pub fn assemble(builtins: &[PoolTool], servers: &[ServerTools]) -> Result<Pool, PoolError> {
    let total = builtins.len() + servers.iter().map(|s| s.tools.len()).sum::<usize>();
    let mut tools = Vec::with_capacity(total);
    tools.extend(builtins.iter().cloned());
    for server in servers {
        for tool in &server.tools {
            check_object_schema(&server.server, tool)?;
            let (name, shortened) = model_facing_name(&server.server, &tool.name);
            tools.push(PoolTool {
                name,
                origin: ToolOrigin::Mcp {
                    server: server.server.clone(),
                    tool: tool.name.clone(),
                },
                description: tool.description.clone(),
                input_schema: tool.input_schema.clone(),
                claims: tool.claims.clone(),
                shortened,
            });
        }
    }
    // Collisions are checked over the finished list, borrowing the names: no second copy
    // of every name just to index them. The first occurrence wins the report's "first".
    let mut by_name: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(total);
    for (index, tool) in tools.iter().enumerate() {
        if let Some(&existing) = by_name.get(tool.name.as_str()) {
            return Err(PoolError::Collision {
                name: tool.name.clone(),
                first: tools[existing].origin_label(),
                second: tool.origin_label(),
            });
        }
        by_name.insert(&tool.name, index);
    }
    Ok(Pool { tools })
}

fn check_object_schema(server: &str, tool: &McpToolInfo) -> Result<(), PoolError> {
    match tool.input_schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        other => Err(PoolError::NonObjectSchema {
            server: server.to_string(),
            tool: tool.name.clone(),
            found: match other {
                Some(v) => format!("type {v}"),
                None => "no type".to_string(),
            },
        }),
    }
}

#[cfg(test)]
mod tests;
