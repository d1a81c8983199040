//! The hash a grant is bound to: a tool's definition as its server lists it (raw name,
//! description, input schema, annotations), over canonical JSON so that key order and
//! whitespace do not count.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{PoolTool, ToolOrigin};
pub use crate::canonical::canonical_json;

/// SHA-256 of a tool definition, 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DefinitionHash(String);

impl DefinitionHash {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 digits, enough to tell two definitions apart on screen.
    pub fn short(&self) -> &str {
        self.0.get(..12).unwrap_or(&self.0)
    }
}

impl std::fmt::Display for DefinitionHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The definition hash of an MCP tool; None for built-ins (their definitions are ours).
pub fn definition_hash(tool: &PoolTool) -> Option<DefinitionHash> {
    let ToolOrigin::Mcp { tool: raw, .. } = &tool.origin else {
        return None;
    };
    let definition = json!({
        "name": raw,
        "description": tool.description,
        "inputSchema": &*tool.input_schema,
        "annotations": serde_json::to_value(&tool.claims).unwrap_or(Value::Null),
    });
    Some(DefinitionHash(hex::encode(Sha256::digest(
        canonical_json(&definition).as_bytes(),
    ))))
}

/// The pool tool of an MCP server `srv` that lists one tool `name` (tests).
#[cfg(test)]
pub(crate) fn listed_tool(name: &str, description: &str, schema: Value) -> PoolTool {
    let listing = super::ServerTools::new(
        "srv",
        vec![super::McpToolInfo {
            name: name.into(),
            description: description.into(),
            input_schema: std::sync::Arc::new(schema),
            claims: Default::default(),
        }],
    );
    let pool = crate::pool::assemble(&[], &[std::sync::Arc::new(listing)]).unwrap();
    PoolTool::clone(&pool.tools[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(description: &str, schema: Value) -> PoolTool {
        listed_tool("t", description, schema)
    }

    #[test]
    fn key_order_does_not_count_content_does() {
        let a = tool(
            "d",
            json!({"type": "object", "properties": {"x": {}, "y": {}}}),
        );
        let b = tool(
            "d",
            json!({"properties": {"y": {}, "x": {}}, "type": "object"}),
        );
        assert_eq!(definition_hash(&a), definition_hash(&b));
        let c = tool(
            "d2",
            json!({"type": "object", "properties": {"x": {}, "y": {}}}),
        );
        assert_ne!(definition_hash(&a), definition_hash(&c));
        let mut d = a.clone();
        d.claims.destructive = Some(true);
        assert_ne!(definition_hash(&a), definition_hash(&d));
        let hash = definition_hash(&a).unwrap();
        assert_eq!(hash.as_str().len(), 64);
        assert_eq!(hash.short().len(), 12);
        let builtin = PoolTool::builtin(crate::builtin::tools::bash::ID, "d", json!({}));
        assert_eq!(definition_hash(&builtin), None);
    }
}
