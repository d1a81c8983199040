//! The built-in part of the pool: order, origins, schemas, the connector tools.

use super::*;

fn names(servers: &[&str]) -> Vec<String> {
    servers.iter().map(|s| s.to_string()).collect()
}

#[test]
fn tools_come_in_order_with_origins() {
    let starting: Vec<String> = builtin_tools(&names(&["docs", "deploy"]))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        starting,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp"
        ],
        "before anything is connected the pool is exactly these six"
    );
    let tools = pool_builtins(&names(&["docs", "deploy"]), &names(&["docs"]));
    assert_eq!(
        tools[6].input_schema["properties"]["name"]["enum"],
        json!(["docs"])
    );
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        listed,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp",
            "disconnect_mcp"
        ]
    );
    for (tool, kind) in tools.iter().zip(BuiltinId::all()) {
        assert_eq!(tool.origin, ToolOrigin::Builtin(kind), "{}", tool.name);
        assert_eq!(tool.name, kind.name());
    }
    let origins: Vec<&str> = tools.iter().map(|t| t.origin.as_str()).collect();
    assert_eq!(
        origins,
        [
            "builtin",
            "builtin",
            "builtin",
            "builtin",
            "builtin",
            "connector",
            "connector"
        ]
    );
}

#[test]
fn every_schema_is_a_closed_object_with_its_fields() {
    let tools = pool_builtins(&names(&["docs"]), &names(&["docs"]));
    let expected: [(&str, &[&str], &[&str]); 7] = [
        (
            "bash",
            &["command", "timeout_ms", "unsandboxed", "justification"],
            &["command"],
        ),
        ("read_file", &["path", "limit"], &["path"]),
        ("write_file", &["path", "content"], &["path", "content"]),
        (
            "edit_file",
            &["path", "old_text", "new_text"],
            &["path", "old_text", "new_text"],
        ),
        ("glob", &["pattern"], &["pattern"]),
        ("connect_mcp", &["name"], &["name"]),
        ("disconnect_mcp", &["name"], &["name"]),
    ];
    for (tool, (name, props, required)) in tools.iter().zip(expected) {
        assert_eq!(tool.name, name);
        let schema = &tool.input_schema;
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert_eq!(schema["required"], json!(required), "{name}");
        let keys: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, props, "{name}");
        assert!(
            tool.description.len() > 80,
            "{name} needs a real description"
        );
    }
}

#[test]
fn connector_tools_enumerate_the_configured_servers() {
    let tools = builtin_tools(&names(&["docs", "deploy", "fs"]));
    for tool in &tools[5..] {
        assert_eq!(
            tool.input_schema["properties"]["name"]["enum"],
            json!(["docs", "deploy", "fs"])
        );
        assert!(
            tool.description
                .contains("Configured servers: docs, deploy, fs."),
            "{}",
            tool.description
        );
    }
    let none = builtin_tools(&[]);
    assert!(
        none[5].input_schema["properties"]["name"]
            .get("enum")
            .is_none()
    );
    assert!(
        none[5]
            .description
            .contains("No MCP servers are configured.")
    );
}
