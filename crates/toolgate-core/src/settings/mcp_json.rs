//! Parsing one `.mcp.json` file into server definitions, with diagnostics that say where
//! and what was expected. A bad entry is skipped; the others still load.

use super::expand::{Env, expand};
use super::{ConfigSource, Diagnostic, ServerConfig, ServerSandbox, ServerTransport};
use super::{NetworkAccess, SandboxMode, ServerNetwork};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 60_000;

/// Parses `text` (the content of `file_label`). Returns the servers in file order.
pub fn parse(
    text: &str,
    file_label: &str,
    source: &ConfigSource,
    env: Env<'_>,
) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            diags.push(Diagnostic {
                file: file_label.to_string(),
                line: e.line(),
                column: e.column(),
                message: format!("invalid JSON: {e}"),
            });
            return (Vec::new(), diags);
        }
    };
    let at = |needle: &str| position_of(text, needle);
    let Some(servers) = root.get("mcpServers") else {
        let (line, column) = (1, 1);
        diags.push(Diagnostic {
            file: file_label.to_string(),
            line,
            column,
            message: "expected a top-level object with an \"mcpServers\" key".into(),
        });
        return (Vec::new(), diags);
    };
    let Some(servers) = servers.as_object() else {
        let (line, column) = at("\"mcpServers\"");
        diags.push(Diagnostic {
            file: file_label.to_string(),
            line,
            column,
            message: "\"mcpServers\" must be an object mapping server names to definitions".into(),
        });
        return (Vec::new(), diags);
    };
    diags.extend(super::mcp_json_keys::duplicates(text, file_label));
    let mut out = Vec::new();
    for (name, entry) in servers {
        let (line, column) = at(&format!("\"{name}\""));
        let mut report = |message: String| {
            diags.push(Diagnostic {
                file: file_label.to_string(),
                line,
                column,
                message: format!("server '{name}': {message}"),
            })
        };
        if !valid_server_name(name) {
            report("server names must match [A-Za-z0-9_-]+".into());
            continue;
        }
        match parse_entry(name, entry, source, env) {
            Ok(server) => out.push(server),
            Err(message) => report(message),
        }
    }
    (out, diags)
}

pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn parse_entry(
    name: &str,
    entry: &Value,
    source: &ConfigSource,
    env: Env<'_>,
) -> Result<ServerConfig, String> {
    let obj = entry
        .as_object()
        .ok_or("expected an object with \"command\" or \"type\": \"http\"")?;
    let kind = match obj.get("type") {
        None => "stdio",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err("\"type\" must be a string".into()),
    };
    let transport = match kind {
        "stdio" => ServerTransport::Stdio {
            command: expand(
                required_str(
                    obj,
                    "command",
                    "a \"command\" string (or \"type\": \"http\")",
                )?,
                env,
            )
            .map_err(|e| e.to_string())?,
            args: string_list(obj, "args", env)?,
            env: string_map(obj, "env", env)?,
            cwd: optional_str(obj, "cwd", env)?.map(Into::into),
        },
        "http" | "streamable-http" | "streamableHttp" => ServerTransport::Http {
            url: expand(required_str(obj, "url", "a \"url\" string")?, env)
                .map_err(|e| e.to_string())?,
            headers: string_map(obj, "headers", env)?,
            oauth: super::oauth::parse(obj, env)?,
        },
        "sse" => {
            return Err(
                "\"type\": \"sse\" (the deprecated HTTP+SSE transport) is not supported; use \"type\": \"http\""
                    .into(),
            );
        }
        "builtin" => {
            let server = optional_str(obj, "server", env)?.unwrap_or_else(|| name.to_string());
            if !matches!(server.as_str(), "docs" | "deploy" | "fs") {
                return Err(format!(
                    "unknown builtin server '{server}' (expected docs, deploy or fs)"
                ));
            }
            ServerTransport::Builtin {
                server,
                args: string_list(obj, "args", env)?,
            }
        }
        other => {
            return Err(format!(
                "unknown \"type\": \"{other}\" (expected \"stdio\", \"http\" or \"builtin\")"
            ));
        }
    };
    let call_timeout_ms = match obj.get("timeout") {
        None => DEFAULT_CALL_TIMEOUT_MS,
        Some(v) => v
            .as_u64()
            .filter(|ms| *ms > 0)
            .ok_or("\"timeout\" must be a positive number of milliseconds")?,
    };
    let sandbox = ServerSandbox {
        mode: match obj.get("sandbox") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                value
                    .as_str()
                    .and_then(SandboxMode::parse)
                    .ok_or_else(|| format!("\"sandbox\" must be {}", SandboxMode::NAMES))?,
            ),
        },
        network: match obj.get("network") {
            None | Some(Value::Null) => None,
            Some(value) => Some(server_network(value)?),
        },
    };
    let always_load = match obj.get("alwaysLoad") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(on)) => *on,
        Some(_) => return Err("\"alwaysLoad\" must be true or false".into()),
    };
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        source: source.clone(),
        call_timeout_ms,
        sandbox,
        pool: super::pool_settings::parse(obj)?,
        always_load,
    })
}

fn required_str<'a>(obj: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a str, String> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(format!("\"{key}\" must be a non-empty string")),
        None => Err(format!("expected {what}")),
    }
}

fn optional_str(
    obj: &Map<String, Value>,
    key: &str,
    env: Env<'_>,
) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => expand(s, env).map(Some).map_err(|e| e.to_string()),
        Some(_) => Err(format!("\"{key}\" must be a string")),
    }
}

fn string_list(obj: &Map<String, Value>, key: &str, env: Env<'_>) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => expand(s, env).map_err(|e| e.to_string()),
                _ => Err(format!("\"{key}\"[{i}] must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("\"{key}\" must be an array of strings")),
    }
}

fn string_map(
    obj: &Map<String, Value>,
    key: &str,
    env: Env<'_>,
) -> Result<BTreeMap<String, String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => expand(s, env)
                    .map(|s| (k.clone(), s))
                    .map_err(|e| e.to_string()),
                _ => Err(format!("\"{key}\".{k} must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("\"{key}\" must be an object of strings")),
    }
}

/// 1-based line and column of the first occurrence of `needle`, or (1, 1). serde_json
/// gives no spans for valid documents, and a key's first occurrence is where a user
/// looks for it.
fn position_of(text: &str, needle: &str) -> (usize, usize) {
    let Some(offset) = text.find(needle) else {
        return (1, 1);
    };
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, column)
}

/// A server entry's `"network"`: `false`, `true`, `"proxy"` or a list of hosts, each
/// `host`, `host:port` or `*.domain` (optionally with a port).
fn server_network(value: &Value) -> Result<ServerNetwork, String> {
    const EXPECTED: &str = "\"network\" must be true, false, \"proxy\" or a list of hosts such as [\"registry.npmjs.org\", \"*.example.org:8443\"]";
    match value {
        Value::Bool(false) => Ok(ServerNetwork::Access(NetworkAccess::None)),
        Value::Bool(true) => Ok(ServerNetwork::Access(NetworkAccess::Full)),
        Value::String(text) if text == "proxy" => Ok(ServerNetwork::Access(NetworkAccess::Proxy)),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(host) => host_pattern(host)
                    .map(|()| host.clone())
                    .map_err(|why| format!("\"network\" host {host:?}: {why}")),
                other => Err(format!("{EXPECTED}; {other} is not a string")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(ServerNetwork::Hosts),
        _ => Err(EXPECTED.into()),
    }
}

/// Checks one host of a server's list: an optional `*.`, a host name or IP literal
/// (`[v6]` when a port follows), an optional `:port`.
fn host_pattern(text: &str) -> Result<(), String> {
    let bare = text.strip_prefix("*.").unwrap_or(text);
    let (host, port) = match bare.rsplit_once(':') {
        // A bare IPv6 literal has colons but no port.
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => (host, Some(port)),
        _ => (bare, None),
    };
    if let Some(port) = port {
        match port.parse::<u16>() {
            Ok(p) if p > 0 => {}
            _ => return Err(format!("{port:?} is not a port")),
        }
    }
    let parsed = crate::egress::Host::parse(host).map_err(|e| e.to_string())?;
    if bare.len() != text.len() && matches!(parsed, crate::egress::Host::Ip(_)) {
        return Err("a wildcard needs a domain name, not an IP address".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_string())
    }

    fn run(text: &str) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
        parse(
            text,
            "/w/.mcp.json",
            &ConfigSource::Project("/w/.mcp.json".into()),
            &env,
        )
    }

    #[test]
    fn reads_claude_code_format() {
        let (servers, diags) = run(r#"{"mcpServers": {
            "git": {"command": "uvx", "args": ["mcp-server-git", "--repo", "${REPO:-.}"], "env": {"K": "${TOKEN}"}},
            "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "mydocs": {"type": "builtin", "server": "docs", "timeout": 5000}
        }}"#);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(servers.len(), 3);
        assert_eq!(servers[0].command_line(), "uvx mcp-server-git --repo .");
        match &servers[0].transport {
            ServerTransport::Stdio { env, .. } => assert_eq!(env["K"], "s3cret"),
            other => panic!("{other:?}"),
        }
        match &servers[1].transport {
            ServerTransport::Http { headers, .. } => {
                assert_eq!(headers["Authorization"], "Bearer s3cret")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(servers[2].call_timeout_ms, 5000);
        assert_eq!(servers[0].call_timeout_ms, DEFAULT_CALL_TIMEOUT_MS);
    }

    #[test]
    fn bad_entries_are_reported_with_position_and_skipped() {
        let text = "{\"mcpServers\": {\n  \"good\": {\"command\": \"x\"},\n  \"bad\": {\"args\": []},\n  \"bad name\": {\"command\": \"y\"},\n  \"nov\": {\"command\": \"${MISSING}\"}\n}}";
        let (servers, diags) = run(text);
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].name, "good");
        assert_eq!(diags.len(), 3, "{diags:?}");
        assert_eq!((diags[0].line, diags[0].column), (3, 3));
        assert!(
            diags[0]
                .message
                .contains("server 'bad': expected a \"command\"")
        );
        assert!(diags[1].message.contains("[A-Za-z0-9_-]+"));
        assert!(diags[2].message.contains("MISSING is not set"));
        assert_eq!(
            diags[0].to_string(),
            "/w/.mcp.json:3:3: server 'bad': expected a \"command\" string (or \"type\": \"http\")"
        );
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let (servers, diags) = run("{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}");
        assert!(servers.is_empty());
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].line, 2);
        assert!(diags[0].message.starts_with("invalid JSON"));
    }

    #[test]
    fn always_load_is_read_and_a_wrong_type_skips_the_entry() {
        let (servers, diags) = run(r#"{"mcpServers": {
            "plain": {"command": "x"},
            "pinned": {"command": "x", "alwaysLoad": true},
            "bad": {"command": "x", "alwaysLoad": "yes"}
        }}"#);
        let loaded: Vec<(&str, bool)> = servers
            .iter()
            .map(|s| (s.name.as_str(), s.always_load))
            .collect();
        assert_eq!(loaded, [("plain", false), ("pinned", true)]);
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0]
                .message
                .contains("\"alwaysLoad\" must be true or false")
        );
    }

    #[test]
    fn sandbox_and_network_are_read_and_bad_values_skip_the_entry() {
        let (servers, diags) = run(r#"{"mcpServers": {
            "plain": {"command": "x"},
            "boxed": {"command": "x", "sandbox": "read-only", "network": true},
            "bad": {"command": "x", "sandbox": "strict"},
            "worse": {"command": "x", "network": "yes"},
            "proxied": {"command": "x", "network": "proxy"},
            "listed": {"command": "x", "network": ["registry.npmjs.org", "api.example.com:8443", "*.example.org", "127.0.0.2", "[::1]:99"]},
            "badhost": {"command": "x", "network": ["ok.example", "bad host"]},
            "badport": {"command": "x", "network": ["example.com:99999"]},
            "off": {"command": "x", "network": false}
        }}"#);
        assert_eq!(servers.len(), 5);
        assert_eq!(
            servers[2].sandbox.network,
            Some(ServerNetwork::Access(NetworkAccess::Proxy))
        );
        let listed = servers[3].sandbox.network.clone().unwrap();
        assert_eq!(listed.access(), NetworkAccess::Proxy);
        assert_eq!(listed.hosts().len(), 5);
        assert_eq!(
            servers[4].sandbox.network,
            Some(ServerNetwork::Access(NetworkAccess::None))
        );
        assert_eq!(servers[0].sandbox, ServerSandbox::default());
        assert_eq!(
            servers[1].sandbox,
            ServerSandbox {
                mode: Some(SandboxMode::ReadOnly),
                network: Some(ServerNetwork::Access(NetworkAccess::Full))
            }
        );
        assert_eq!(
            diags[0].message,
            "server 'bad': \"sandbox\" must be \"workspace-write\", \"read-only\" or \"off\""
        );
        assert_eq!(diags[0].line, 4);
        assert!(
            diags[1].message.starts_with(
                "server 'worse': \"network\" must be true, false, \"proxy\" or a list of hosts"
            ),
            "{}",
            diags[1].message
        );
        assert!(
            diags[2]
                .message
                .starts_with("server 'badhost': \"network\" host \"bad host\": "),
            "{}",
            diags[2].message
        );
        assert_eq!(
            diags[3].message,
            "server 'badport': \"network\" host \"example.com:99999\": \"99999\" is not a port"
        );
    }

    #[test]
    fn filters_enabled_and_trust_new_tools() {
        let (servers, diags) = run(r#"{"mcpServers": {
            "plain": {"command": "x"},
            "gh": {"command": "x", "enabled": false, "includeTools": ["get_*", "search"],
                   "excludeTools": ["get_secret*"], "trustNewTools": true},
            "bad1": {"command": "x", "excludeTools": "delete_*"},
            "bad2": {"command": "x", "includeTools": ["a[b"]},
            "bad3": {"command": "x", "enabled": "no"}
        }}"#);
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].pool, crate::settings::PoolSettings::default());
        assert!(servers[0].pool.enabled);
        let gh = &servers[1].pool;
        assert!(!gh.enabled && gh.trust_new_tools);
        let filter = crate::pool::ToolFilter::of(gh);
        assert_eq!(filter.check("get_issue"), None);
        assert!(filter.check("get_secret_key").is_some());
        assert!(filter.check("delete_repo").is_some());
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "server 'bad1': \"excludeTools\" must be an array of tool names or globs",
                "server 'bad2': invalid tool pattern 'a[b': unclosed character class; missing ']'",
                "server 'bad3': \"enabled\" must be true or false",
            ]
        );
    }

    #[test]
    fn trust_marks_a_servers_results_as_the_persons_data() {
        let (servers, diags) = run(r#"{"mcpServers": {
            "mine": {"command": "x", "trust": "trusted"},
            "theirs": {"command": "x", "trust": "untrusted"},
            "bad": {"command": "x", "trust": true}
        }}"#);
        assert_eq!(servers.len(), 2);
        assert!(servers[0].pool.trusted && !servers[1].pool.trusted);
        assert_eq!(
            diags[0].message,
            "server 'bad': \"trust\" must be \"trusted\" or \"untrusted\""
        );
    }

    #[test]
    fn unknown_builtin_and_type() {
        let (_, diags) = run(
            r#"{"mcpServers": {"a": {"type": "builtin", "server": "nope"}, "b": {"type": "ws"}}}"#,
        );
        assert!(diags[0].message.contains("unknown builtin server 'nope'"));
        assert!(diags[1].message.contains("unknown \"type\": \"ws\""));
    }
}
