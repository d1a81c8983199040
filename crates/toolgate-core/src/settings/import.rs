//! Reading the MCP servers other agent tools have configured, as toolgate entries
//! (`.mcp.json` format): Claude Code (`~/.claude.json`, user and per-project entries),
//! Codex CLI (`$CODEX_HOME/config.toml`, `[mcp_servers.NAME]`) and gemini-cli
//! (`~/.gemini/settings.json`). Read-only: nothing here writes.

use super::Diagnostic;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportSource {
    Claude,
    Codex,
    Gemini,
}

impl ImportSource {
    pub fn label(self) -> &'static str {
        match self {
            ImportSource::Claude => "Claude Code",
            ImportSource::Codex => "Codex CLI",
            ImportSource::Gemini => "gemini-cli",
        }
    }
}

/// Where the other tools keep their files.
#[derive(Debug, Clone)]
pub struct Homes {
    pub home: PathBuf,
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex_home: PathBuf,
    /// The workspace: Claude Code keys its per-project entries by this folder.
    pub workspace: PathBuf,
}

impl Homes {
    /// From `$HOME` and `$CODEX_HOME`; None without a home folder.
    pub fn from_env(workspace: &Path) -> Option<Homes> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(dirs::home_dir)?;
        let codex_home = std::env::var_os("CODEX_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"));
        Some(Homes {
            home,
            codex_home,
            workspace: workspace.to_path_buf(),
        })
    }
}

/// One server found, as a toolgate entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub name: String,
    pub entry: Value,
    /// The file (and part of it) it came from.
    pub from: String,
    /// What did not carry over exactly.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub found: Vec<Found>,
    /// Entries that could not be imported, each with the reason.
    pub skipped: Vec<String>,
    /// Files that exist but could not be read, with the position of the problem.
    pub problems: Vec<Diagnostic>,
    /// Other things the person should know (e.g. a file toolgate already reads).
    pub notes: Vec<String>,
    /// Every file looked at, present or not.
    pub looked_at: Vec<PathBuf>,
}

pub fn scan(source: ImportSource, homes: &Homes) -> Scan {
    let mut scan = Scan::default();
    match source {
        ImportSource::Claude => claude(homes, &mut scan),
        ImportSource::Codex => codex(homes, &mut scan),
        ImportSource::Gemini => gemini(homes, &mut scan),
    }
    scan
}

fn read(path: &Path, scan: &mut Scan) -> Option<String> {
    scan.looked_at.push(path.to_path_buf());
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            scan.problems.push(Diagnostic {
                file: path.display().to_string(),
                line: 0,
                column: 0,
                message: format!("cannot read: {e}"),
            });
            None
        }
    }
}

fn strict_json(text: &str, path: &Path, scan: &mut Scan) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        Err(e) => {
            scan.problems.push(Diagnostic {
                file: path.display().to_string(),
                line: e.line(),
                column: e.column(),
                message: format!("invalid JSON: {e}"),
            });
            None
        }
    }
}

fn claude(homes: &Homes, scan: &mut Scan) {
    let path = homes.home.join(".claude.json");
    if let Some(text) = read(&path, scan)
        && let Some(root) = strict_json(&text, &path, scan)
    {
        let file = path.display().to_string();
        if let Some(servers) = root.get("mcpServers").and_then(Value::as_object) {
            for (name, entry) in servers {
                claude_entry(name, entry, &format!("{file} (user)"), scan);
            }
        }
        // Claude Code's "local" scope: entries private to one project, keyed by its path.
        let projects = root.get("projects").and_then(Value::as_object);
        let canonical = std::fs::canonicalize(&homes.workspace).ok();
        let keys = [Some(homes.workspace.clone()), canonical];
        let project = keys.iter().flatten().find_map(|key| {
            projects?
                .get(&key.display().to_string())?
                .get("mcpServers")?
                .as_object()
        });
        for (name, entry) in project.into_iter().flatten() {
            claude_entry(name, entry, &format!("{file} (local, this project)"), scan);
            if let Some(found) = scan
                .found
                .iter_mut()
                .find(|f| &f.name == name && f.from.ends_with("(local, this project)"))
            {
                found.notes.push(
                    "private to this project in Claude Code; in toolgate's user scope every workspace sees it (--scope project shares it with the project instead)"
                        .into(),
                );
            }
        }
    }
    let project_file = homes.workspace.join(".mcp.json");
    if project_file.is_file() {
        scan.notes.push(format!(
            "{} is Claude Code's project file and toolgate's own: its servers are already toolgate's project servers (not copied)",
            project_file.display()
        ));
    }
}

fn claude_entry(name: &str, entry: &Value, from: &str, scan: &mut Scan) {
    if entry.get("type").and_then(Value::as_str) == Some("sse") {
        scan.skipped.push(format!(
            "{name} ({from}): the HTTP+SSE transport is not supported; add it with --transport http if the server also speaks Streamable HTTP"
        ));
        return;
    }
    push(scan, name, entry.clone(), from, Vec::new());
}

fn push(scan: &mut Scan, name: &str, entry: Value, from: &str, notes: Vec<String>) {
    if let Err(why) = super::edit::check_entry(name, &entry) {
        scan.skipped.push(format!("{name} ({from}): {why}"));
        return;
    }
    // A later file of the same tool wins, as in that tool (Claude's local over user).
    scan.found.retain(|f| f.name != name);
    scan.found.push(Found {
        name: name.to_string(),
        entry,
        from: from.to_string(),
        notes,
    });
}

fn codex(homes: &Homes, scan: &mut Scan) {
    let path = homes.codex_home.join("config.toml");
    let Some(text) = read(&path, scan) else {
        return;
    };
    let table: toml::Table = match toml::from_str(&text) {
        Ok(table) => table,
        Err(e) => {
            let offset = e.span().map_or(0, |s| s.start);
            scan.problems.push(Diagnostic::at(
                &text,
                &path.display().to_string(),
                offset,
                format!("invalid TOML: {}", e.message()),
            ));
            return;
        }
    };
    let from = path.display().to_string();
    let Some(servers) = table.get("mcp_servers").and_then(toml::Value::as_table) else {
        return;
    };
    for (name, server) in servers {
        let from = format!("{from} [mcp_servers.{name}]");
        match codex_entry(server) {
            Ok((entry, notes)) => push(scan, name, entry, &from, notes),
            Err(why) => scan.skipped.push(format!("{name} ({from}): {why}")),
        }
    }
}

fn toml_str(table: &toml::Table, key: &str) -> Result<Option<String>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

fn toml_strings(table: &toml::Table, key: &str) -> Result<Option<Vec<Value>>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(|s| Value::String(s.to_string()))
                    .ok_or_else(|| format!("`{key}` must be a list of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("`{key}` must be a list of strings")),
    }
}

fn toml_map(table: &toml::Table, key: &str) -> Result<Map<String, Value>, String> {
    match table.get(key) {
        None => Ok(Map::new()),
        Some(toml::Value::Table(t)) => t
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), Value::String(s.to_string())))
                    .ok_or_else(|| format!("`{key}.{k}` must be a string"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be a table of strings")),
    }
}

fn codex_entry(server: &toml::Value) -> Result<(Value, Vec<String>), String> {
    let table = server.as_table().ok_or("expected a table")?;
    let mut entry = Map::new();
    let mut notes = Vec::new();
    match (toml_str(table, "command")?, toml_str(table, "url")?) {
        (Some(command), _) => {
            entry.insert("command".into(), command.into());
            if let Some(args) = toml_strings(table, "args")? {
                entry.insert("args".into(), Value::Array(args));
            }
            let mut env = toml_map(table, "env")?;
            // Variables Codex passes through from its own environment.
            for name in toml_strings(table, "env_vars")?.unwrap_or_default() {
                if let Some(name) = name.as_str() {
                    env.insert(name.to_string(), format!("${{{name}}}").into());
                }
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
            if let Some(cwd) = toml_str(table, "cwd")? {
                entry.insert("cwd".into(), cwd.into());
            }
        }
        (None, Some(url)) => {
            entry.insert("type".into(), "http".into());
            entry.insert("url".into(), url.into());
            let mut headers = toml_map(table, "http_headers")?;
            for (header, var) in toml_map(table, "env_http_headers")? {
                if let Some(var) = var.as_str() {
                    headers.insert(header, format!("${{{var}}}").into());
                }
            }
            if let Some(var) = toml_str(table, "bearer_token_env_var")? {
                headers.insert("Authorization".into(), format!("Bearer ${{{var}}}").into());
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
        }
        (None, None) => return Err("neither `command` nor `url`".into()),
    }
    if let Some(on) = table.get("enabled") {
        let on = on.as_bool().ok_or("`enabled` must be true or false")?;
        entry.insert("enabled".into(), on.into());
    }
    if let Some(secs) = table.get("tool_timeout_sec") {
        let secs = secs
            .as_float()
            .or_else(|| secs.as_integer().map(|i| i as f64))
            .filter(|s| *s > 0.0)
            .ok_or("`tool_timeout_sec` must be a positive number")?;
        entry.insert("timeout".into(), json!((secs * 1000.0).round() as u64));
    }
    if let Some(tools) = toml_strings(table, "enabled_tools")? {
        entry.insert("includeTools".into(), Value::Array(tools));
    }
    if let Some(tools) = toml_strings(table, "disabled_tools")? {
        entry.insert("excludeTools".into(), Value::Array(tools));
    }
    if table.contains_key("startup_timeout_sec") || table.contains_key("startup_timeout_ms") {
        notes.push("the startup timeout is not carried over (toolgate's own applies)".into());
    }
    Ok((Value::Object(entry), notes))
}

fn gemini(homes: &Homes, scan: &mut Scan) {
    let path = homes.home.join(".gemini").join("settings.json");
    let Some(text) = read(&path, scan) else {
        return;
    };
    // gemini-cli reads its settings with comments allowed, so we do too.
    let root: Value = match jsonc_parser::parse_to_serde_value(&text, &Default::default()) {
        Ok(root) => root,
        Err(e) => {
            scan.problems.push(Diagnostic::at(
                &text,
                &path.display().to_string(),
                e.range().start,
                format!("invalid JSON: {}", e.kind()),
            ));
            return;
        }
    };
    let from = path.display().to_string();
    let Some(servers) = root.get("mcpServers").and_then(Value::as_object) else {
        return;
    };
    for (name, server) in servers {
        match gemini_entry(server) {
            Ok((entry, notes)) => push(scan, name, entry, &from, notes),
            Err(why) => scan.skipped.push(format!("{name} ({from}): {why}")),
        }
    }
}

fn gemini_entry(server: &Value) -> Result<(Value, Vec<String>), String> {
    let object = server.as_object().ok_or("expected an object")?;
    let mut entry = Map::new();
    let mut notes = Vec::new();
    let copy = |entry: &mut Map<String, Value>, keys: &[&str]| {
        for key in keys {
            if let Some(value) = object.get(*key) {
                entry.insert((*key).to_string(), value.clone());
            }
        }
    };
    let url = object.get("httpUrl").or_else(|| object.get("url"));
    match (object.get("command"), url) {
        (Some(_), _) => copy(&mut entry, &["command", "args", "env", "cwd"]),
        (None, Some(url)) => {
            let declared = object.get("type").and_then(Value::as_str);
            if object.get("httpUrl").is_none() && declared != Some("http") {
                if declared == Some("sse") {
                    return Err("the HTTP+SSE transport is not supported".into());
                }
                notes.push(
                    "`url` is gemini-cli's SSE endpoint; imported as Streamable HTTP: check the address"
                        .into(),
                );
            }
            entry.insert("type".into(), "http".into());
            entry.insert("url".into(), url.clone());
            copy(&mut entry, &["headers"]);
        }
        (None, None) => return Err("neither \"command\" nor \"httpUrl\"/\"url\"".into()),
    }
    copy(&mut entry, &["timeout", "includeTools", "excludeTools"]);
    if object.get("trust").and_then(Value::as_bool) == Some(true) {
        notes.push("`trust: true` is not carried over: toolgate's permission rules decide".into());
    }
    Ok((Value::Object(entry), notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scans a home whose `~/.codex/config.toml` is `text`.
    fn scan_codex(text: &str) -> (tempfile::TempDir, Scan) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".codex")).unwrap();
        std::fs::write(dir.path().join(".codex/config.toml"), text).unwrap();
        let scan = scan(ImportSource::Codex, &homes(dir.path()));
        (dir, scan)
    }

    fn homes(dir: &Path) -> Homes {
        Homes {
            home: dir.to_path_buf(),
            codex_home: dir.join(".codex"),
            workspace: dir.join("ws"),
        }
    }

    #[test]
    fn codex_toml_with_comments_maps_every_field() {
        let (_dir, scan) = scan_codex(
            "# my codex\nmodel = \"o3\"\n\n[mcp_servers.fetch]  # the fetcher\ncommand = \"uvx\"\nargs = [\"mcp-server-fetch\"]\nenv = { LOG = \"1\" }\nenabled = false\ntool_timeout_sec = 2.5\n\n[mcp_servers.remote]\nurl = \"https://example.test/mcp\"\nbearer_token_env_var = \"TOKEN\"\n\n[mcp_servers.\"bad.name\"]\ncommand = \"x\"\n",
        );
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        assert_eq!(scan.found.len(), 2);
        assert_eq!(
            scan.found[0].entry,
            json!({"command": "uvx", "args": ["mcp-server-fetch"], "env": {"LOG": "1"}, "enabled": false, "timeout": 2500})
        );
        assert_eq!(
            scan.found[1].entry,
            json!({"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}})
        );
        assert!(
            scan.skipped[0].starts_with("bad.name"),
            "{:?}",
            scan.skipped
        );
    }

    #[test]
    fn toml_error_names_file_and_line() {
        let (_dir, scan) = scan_codex("[mcp_servers.a]\ncommand = \n");
        assert_eq!(scan.problems.len(), 1);
        assert_eq!(scan.problems[0].line, 2);
        assert!(scan.problems[0].file.ends_with(".codex/config.toml"));
    }
}
