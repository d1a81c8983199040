use super::*;
use serde_json::json;

fn tool(name: &str) -> McpToolInfo {
    McpToolInfo {
        name: name.to_string(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object", "properties": {}}),
        claims: ToolClaims::default(),
    }
}

fn server(name: &str, tools: &[&str]) -> ServerTools {
    ServerTools {
        server: name.to_string(),
        tools: tools.iter().map(|t| tool(t)).collect(),
    }
}

#[test]
fn names_are_prefixed_and_normalized() {
    let pool = assemble(&[], &[server("docs", &["search", "get.version", "ünï"])]).unwrap();
    assert_eq!(
        pool.names(),
        vec![
            "mcp__docs__search",
            "mcp__docs__get_version",
            "mcp__docs___n_"
        ]
    );
    match &pool.tools[1].origin {
        ToolOrigin::Mcp { server, tool } => {
            assert_eq!(server, "docs");
            assert_eq!(tool, "get.version");
        }
        other => panic!("unexpected origin {other:?}"),
    }
}

#[test]
fn collision_names_both_origins() {
    let err = assemble(
        &[],
        &[
            server("docs.one", &["get.version"]),
            server("docs_one", &["get_version"]),
        ],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP tool name collision after normalization: 'mcp__docs_one__get_version' maps both \
         MCP tool 'docs.one'/'get.version' and MCP tool 'docs_one'/'get_version'"
    );
}

#[test]
fn long_names_are_shortened_stably_and_uniquely() {
    let long_a = "a".repeat(120);
    let long_b = format!("{}b", "a".repeat(119));
    let (n1, s1) = model_facing_name("server", &long_a);
    let (n2, _) = model_facing_name("server", &long_a);
    let (n3, s3) = model_facing_name("server", &long_b);
    assert!(s1 && s3);
    assert_eq!(n1, n2, "same raw names give the same shortened name");
    assert_ne!(n1, n3, "different raw names stay distinct");
    assert!(n1.len() <= MAX_NAME_LEN && n3.len() <= MAX_NAME_LEN);
    assert!(n1.starts_with("mcp__server__aaaa"));
    // Raw names that normalize identically still differ after shortening.
    let (d1, _) = model_facing_name("srv", &format!("{}.x", "t".repeat(80)));
    let (d2, _) = model_facing_name("srv", &format!("{}_x", "t".repeat(80)));
    assert_ne!(d1, d2);
    let (short, shortened) = model_facing_name("docs", "search");
    assert_eq!((short.as_str(), shortened), ("mcp__docs__search", false));
}

#[test]
fn exactly_64_is_kept() {
    let tool_name = "t".repeat(MAX_NAME_LEN - "mcp__s__".len());
    let (name, shortened) = model_facing_name("s", &tool_name);
    assert_eq!(name.len(), 64);
    assert!(!shortened);
}

#[test]
fn non_object_schema_is_refused() {
    let mut bad = tool("weird");
    bad.input_schema = json!({"type": "string"});
    let err = assemble(
        &[],
        &[ServerTools {
            server: "x".into(),
            tools: vec![bad],
        }],
    )
    .unwrap_err();
    assert!(matches!(err, PoolError::NonObjectSchema { .. }));
    assert!(err.to_string().contains("'x'/'weird'"));
}

#[test]
fn builtin_name_cannot_be_shadowed() {
    let builtin = PoolTool::builtin("mcp__a__b", "odd builtin", json!({"type": "object"}));
    let err = assemble(&[builtin], &[server("a", &["b"])]).unwrap_err();
    assert!(matches!(err, PoolError::Collision { .. }));
}
