//! Pieces the tools' definitions share. The descriptions (in each tool's file) are the only
//! manual the model gets, so they state formats, limits and failure behaviour.

use serde_json::{Value, json};

/// "Configured servers: …" or that there are none (connect_mcp's description).
pub(super) fn available(server_names: &[String]) -> String {
    if server_names.is_empty() {
        "No MCP servers are configured.".to_string()
    } else {
        format!("Configured servers: {}.", server_names.join(", "))
    }
}

/// An object with one required `name` that must be one of `server_names`.
pub(super) fn server_name_schema(server_names: &[String], what: &str) -> Value {
    let mut name = json!({"type": "string", "description": what});
    // An empty `enum` matches nothing and some model APIs reject it; with no servers the
    // description says so and the agent answers any name with the (empty) list.
    if !server_names.is_empty() {
        name["enum"] = json!(server_names);
    }
    object_schema(json!({ "name": name }), &["name"])
}

/// The `server` property of the resource tools: one of `servers`.
pub(super) fn resource_server_property(servers: &[String]) -> Value {
    let mut server = json!({"type": "string", "enum": servers});
    server["description"] = json!("Name of the connected MCP server.");
    server
}

pub(super) fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A string property with its description.
pub(super) fn string_property(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// The `path` property of the file tools: the file to `verb`, relative or absolute.
pub(super) fn path_property(verb: &str) -> Value {
    string_property(&format!(
        "File to {verb}, relative to the workspace (or absolute)."
    ))
}
