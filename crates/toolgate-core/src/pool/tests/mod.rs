mod builtins;

use super::*;
use serde_json::json;

fn tool(name: &str) -> McpToolInfo {
    McpToolInfo {
        name: name.to_string(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object", "properties": {}}).into(),
        claims: ToolClaims::default(),
    }
}

fn server(name: &str, tools: &[&str]) -> Arc<ServerTools> {
    Arc::new(ServerTools::new(
        name,
        tools.iter().map(|t| tool(t)).collect(),
    ))
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
fn a_non_object_schema_leaves_out_that_tool_only() {
    let mut bad = tool("weird");
    bad.input_schema = json!({"type": "string"}).into();
    let listing = ServerTools::new("x", vec![tool("fine"), bad]);
    assert_eq!(
        listing.invalid(),
        &[InvalidTool {
            name: "weird".into(),
            problem: SchemaProblem::RootNotObject("type \"string\"".into()),
        }]
    );
    assert_eq!(listing.tools().len(), 1);
    let pool = assemble(&[], &[Arc::new(listing)]).unwrap();
    assert_eq!(pool.names(), vec!["mcp__x__fine"]);
}

#[test]
fn builtin_name_cannot_be_shadowed() {
    // No built-in is named like an MCP tool today; the check must not rely on that.
    let mut builtin = PoolTool::builtin(
        crate::builtin::tools::bash::ID,
        "odd builtin",
        json!({"type": "object"}),
    );
    builtin.name = "mcp__a__b".into();
    let err = assemble(&[builtin], &[server("a", &["b"])]).unwrap_err();
    assert!(matches!(err, PoolError::Collision { .. }));
}

#[test]
fn a_left_out_tool_does_not_hide_a_collision() {
    let mut bad = tool("weird");
    bad.input_schema = json!({"type": "array"}).into();
    let err = assemble(
        &[],
        &[
            server("docs.one", &["get.version"]),
            server("docs_one", &["get_version"]),
            Arc::new(ServerTools::new("late", vec![bad])),
        ],
    )
    .unwrap_err();
    assert!(matches!(&err, PoolError::Collision { .. }), "{err}");
}

#[test]
fn pools_share_the_listing_entries() {
    // The agent assembles before every model call; the MCP entries must be the listing's
    // own, not copies, or the per-call cost grows with the pool again.
    let listing = server("docs", &["search", "get_version"]);
    let first = assemble(&[], std::slice::from_ref(&listing)).unwrap();
    let second = assemble(&[], std::slice::from_ref(&listing)).unwrap();
    assert_eq!(first, second);
    for (a, b) in first.tools.iter().zip(&second.tools) {
        assert!(Arc::ptr_eq(a, b), "{} was copied", a.name);
    }
}

#[test]
fn two_builtins_with_one_name_collide() {
    let a = PoolTool::builtin(
        crate::builtin::tools::bash::ID,
        "one",
        json!({"type": "object"}),
    );
    let b = PoolTool::builtin(
        crate::builtin::tools::bash::ID,
        "two",
        json!({"type": "object"}),
    );
    let err = assemble(&[a, b], &[]).unwrap_err();
    assert!(
        matches!(err, PoolError::Collision { ref name, .. } if name == "bash"),
        "{err}"
    );
}

#[test]
fn name_check_by_name_finds_what_the_hash_index_would_miss() {
    // The fallback for a 64-bit hash clash between different names: it must still catch
    // a real duplicate anywhere in the list.
    let pool = assemble(&[], &[server("a", &["x", "y"]), server("b", &["z"])]).unwrap();
    assert!(check_collisions_by_name(&pool.tools).is_ok());
    let mut tools = pool.tools.clone();
    tools.push(pool.tools[1].clone());
    let err = check_collisions_by_name(&tools).unwrap_err();
    assert!(
        matches!(err, PoolError::Collision { ref name, .. } if name == "mcp__a__y"),
        "{err}"
    );
}

#[test]
fn origins_serialize_with_the_kind_users_see() {
    let cases = [
        (
            ToolOrigin::Builtin(crate::builtin::tools::bash::ID),
            json!({"kind": "builtin", "tool": "bash"}),
        ),
        (
            ToolOrigin::Builtin(crate::builtin::tools::disconnect_mcp::ID),
            json!({"kind": "connector", "tool": "disconnect_mcp"}),
        ),
        (
            ToolOrigin::Mcp {
                server: "docs".into(),
                tool: "get.version".into(),
            },
            json!({"kind": "mcp", "server": "docs", "tool": "get.version"}),
        ),
    ];
    for (origin, wire) in cases {
        assert_eq!(serde_json::to_value(&origin).unwrap(), wire);
        assert_eq!(wire["kind"], origin.as_str());
        assert_eq!(serde_json::from_value::<ToolOrigin>(wire).unwrap(), origin);
    }
    // A built-in filed under the other kind is refused rather than guessed.
    for wrong in [
        json!({"kind": "connector", "tool": "bash"}),
        json!({"kind": "builtin", "tool": "connect_mcp"}),
        json!({"kind": "builtin", "tool": "rm_rf"}),
    ] {
        assert!(
            serde_json::from_value::<ToolOrigin>(wrong.clone()).is_err(),
            "{wrong}"
        );
    }
}

#[test]
fn filtered_tools_stay_out_of_the_pool_and_a_colliding_excluded_tool_is_harmless() {
    let exclude = vec!["get?version".to_string()];
    let filter = ToolFilter::new(None, &exclude).unwrap();
    let listing = ServerTools::filtered(
        "docs",
        vec![tool("search"), tool("get.version"), tool("get_version")],
        &filter,
    );
    // `get.version` and `get_version` would collide; both are excluded, so nothing does.
    let pool = assemble(&[], &[Arc::new(listing.clone())]).unwrap();
    assert_eq!(pool.names(), ["mcp__docs__search"]);
    assert_eq!(listing.tools().len(), 1);
    assert_eq!(listing.listed().len(), 3);
    let excluded: Vec<(&str, String)> = listing
        .excluded()
        .iter()
        .map(|(t, why)| (t.name.as_str(), why.to_string()))
        .collect();
    assert_eq!(
        excluded,
        [
            ("get.version", "excludeTools \"get?version\"".to_string()),
            ("get_version", "excludeTools \"get?version\"".to_string())
        ]
    );
}
