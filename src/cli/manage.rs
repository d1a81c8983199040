//! `toolgate mcp add|add-json|remove|get|enable|disable|import`: server management from
//! the command line, as `claude mcp` / `codex mcp` / `gemini mcp` do it. Every write goes
//! through [`crate::settings::edit::ServerFile`], which keeps the file's own formatting.

use crate::error::Failure;
use crate::settings::edit::{EditError, ServerFile, check_entry, parse_argument};
use crate::settings::import::{Homes, ImportSource, scan};
use crate::settings::{EMBEDDED_MCP_JSON, LoadOptions};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Which file a command writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The person's own server file (`~/.config/toolgate/mcp.json`): every workspace.
    User,
    /// The workspace's `.mcp.json`, shared with the project (and with Claude Code).
    Project,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// The file of `scope`: the workspace's `.mcp.json` or the user's `mcp.json`. The files
/// `mcp` management reads and writes are those of `places` (its `--mcp-config` files are read
/// by `get`, where they win over both scopes, and never written).
pub fn scope_file(places: &LoadOptions, scope: Scope) -> Result<PathBuf, Failure> {
    match scope {
        Scope::Project => Ok(places.workspace.join(".mcp.json")),
        Scope::User => places
            .user_config_dir
            .as_ref()
            .map(|d| d.join("mcp.json"))
            .ok_or_else(|| {
                Failure::Usage("no user config folder (set $HOME or $TOOLGATE_CONFIG_DIR)".into())
            }),
    }
}

/// `mcp add`'s arguments.
#[derive(Debug, Clone)]
pub struct AddArgs {
    pub name: String,
    pub scope: Scope,
    pub transport: Option<Transport>,
    /// `-e KEY=VALUE`
    pub env: Vec<String>,
    /// `-H 'Name: value'`
    pub headers: Vec<String>,
    /// The command and its arguments, or one URL.
    pub target: Vec<String>,
}

fn edit_failure(e: EditError) -> Failure {
    match e {
        EditError::Invalid(_) => Failure::Usage(format!("{e} (the file was not changed)")),
        _ => Failure::Run(e.to_string()),
    }
}

fn open(path: &Path) -> Result<ServerFile, Failure> {
    ServerFile::open(path).map_err(edit_failure)
}

/// The entry `mcp add` writes, in Claude Code's format.
pub fn entry_of(args: &AddArgs) -> Result<Value, Failure> {
    let usage = |m: String| Failure::Usage(m);
    let (first, rest) = args
        .target
        .split_first()
        .ok_or_else(|| usage("give a command after `--`, or a URL".into()))?;
    let looks_like_url = first.starts_with("http://") || first.starts_with("https://");
    let transport = args.transport.unwrap_or(if looks_like_url {
        Transport::Http
    } else {
        Transport::Stdio
    });
    let mut entry = Map::new();
    match transport {
        Transport::Stdio => {
            if !args.headers.is_empty() {
                return Err(usage("-H/--header is for HTTP servers".into()));
            }
            entry.insert("command".into(), first.clone().into());
            if !rest.is_empty() {
                entry.insert("args".into(), rest.to_vec().into());
            }
            let mut env = Map::new();
            for pair in &args.env {
                let (key, value) = pair
                    .split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| usage(format!("-e {pair}: expected KEY=VALUE")))?;
                env.insert(key.to_string(), value.into());
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
        }
        Transport::Http => {
            if !args.env.is_empty() {
                return Err(usage(
                    "-e/--env is for stdio servers (an HTTP server is not our process)".into(),
                ));
            }
            if !rest.is_empty() {
                return Err(usage(format!(
                    "an HTTP server takes one URL, got also: {}",
                    rest.join(" ")
                )));
            }
            entry.insert("type".into(), "http".into());
            entry.insert("url".into(), first.clone().into());
            let mut headers = Map::new();
            for header in &args.headers {
                let (name, value) = header
                    .split_once(':')
                    .filter(|(n, _)| !n.trim().is_empty())
                    .ok_or_else(|| usage(format!("-H {header}: expected 'Name: value'")))?;
                headers.insert(name.trim().to_string(), value.trim().into());
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
        }
    }
    Ok(Value::Object(entry))
}

/// `mcp add`: a new entry; an existing name is refused (remove it, or `add-json` replaces).
pub fn add(places: &LoadOptions, args: &AddArgs) -> Result<String, Failure> {
    let entry = entry_of(args)?;
    write_new(places, args.scope, &args.name, &entry, false)
}

/// `mcp add-json NAME JSON`: the entry as given, checked as the loader will read it;
/// replaces an entry of the same name in that file.
pub fn add_json(
    places: &LoadOptions,
    scope: Scope,
    name: &str,
    json: &str,
) -> Result<String, Failure> {
    let entry =
        parse_argument(json, "the JSON argument").map_err(|d| Failure::Usage(d.to_string()))?;
    write_new(places, scope, name, &entry, true)
}

fn write_new(
    places: &LoadOptions,
    scope: Scope,
    name: &str,
    entry: &Value,
    replace: bool,
) -> Result<String, Failure> {
    check_entry(name, entry).map_err(|invalid| Failure::Usage(invalid.to_string()))?;
    let path = scope_file(places, scope)?;
    let mut file = open(&path)?;
    let existed = file.get(name).is_some();
    if existed && !replace {
        return Err(Failure::Usage(format!(
            "server '{name}' already exists in {} ({} scope); remove it first, or replace it with `toolgate mcp add-json`",
            path.display(),
            scope.name()
        )));
    }
    file.set(name, entry);
    file.save().map_err(edit_failure)?;
    let verb = if existed { "Replaced" } else { "Added" };
    Ok(format!(
        "{verb} MCP server '{name}' ({} scope) in {}\n{}",
        scope.name(),
        path.display(),
        managed_note(places, name)
    ))
}

/// A note when the managed policy keeps the server from starting (decision 0082). The
/// entry is written all the same: it is the person's file, and the policy may change.
fn managed_note(places: &LoadOptions, name: &str) -> String {
    let managed = crate::settings::managed::load(&places.managed);
    let policy = crate::settings::ManagedSettings::server_policy(&managed);
    let every_file = LoadOptions {
        trust_project: true,
        ..places.clone()
    };
    crate::settings::load_servers(&every_file)
        .servers
        .iter()
        .find(|s| s.name == name)
        .and_then(|config| policy.check(config).err())
        .map(|reason| format!("note: {reason}; toolgate will not start it\n"))
        .unwrap_or_default()
}

/// The files that define servers, most significant first, with their scope name.
fn defining_files(places: &LoadOptions) -> Vec<(Scope, PathBuf)> {
    let mut files = vec![(Scope::Project, places.workspace.join(".mcp.json"))];
    if let Ok(user) = scope_file(places, Scope::User) {
        files.push((Scope::User, user));
    }
    files
}

/// `mcp remove NAME [--scope S]`: without a scope, the one file that defines it.
pub fn remove(places: &LoadOptions, name: &str, scope: Option<Scope>) -> Result<String, Failure> {
    let (scope, path, mut file) = find_one(places, name, scope, "remove")?;
    file.remove(name);
    file.save().map_err(edit_failure)?;
    Ok(format!(
        "Removed MCP server '{name}' ({} scope) from {}\n",
        scope.name(),
        path.display()
    ))
}

/// The file (of `scope`, or the only one) that defines `name`.
fn find_one(
    places: &LoadOptions,
    name: &str,
    scope: Option<Scope>,
    verb: &str,
) -> Result<(Scope, PathBuf, ServerFile), Failure> {
    let mut hits = Vec::new();
    for (file_scope, path) in defining_files(places) {
        if scope.is_some_and(|s| s != file_scope) {
            continue;
        }
        let file = open(&path)?;
        if file.get(name).is_some() {
            hits.push((file_scope, path, file));
        }
    }
    match hits.len() {
        1 => Ok(hits.remove(0)),
        0 => {
            let embedded = embedded_entry(name).is_some();
            Err(Failure::Usage(match (scope, embedded) {
                (_, true) if verb == "remove" => format!(
                    "'{name}' is one of toolgate's built-in servers; it cannot be removed, only disabled (`toolgate mcp disable {name}`)"
                ),
                (Some(scope), _) => format!(
                    "no MCP server '{name}' in the {} scope ({})",
                    scope.name(),
                    scope_file(places, scope)?.display()
                ),
                (None, _) => format!("no MCP server '{name}' is configured"),
            }))
        }
        _ => Err(Failure::Usage(format!(
            "'{name}' is defined in both scopes ({}); say which with --scope user|project",
            hits.iter()
                .map(|(_, p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn embedded_entry(name: &str) -> Option<Value> {
    let root: Value = serde_json::from_str(EMBEDDED_MCP_JSON).ok()?;
    root.get("mcpServers")?.get(name).cloned()
}

/// `mcp enable|disable NAME [--scope S]`: writes `"enabled"` into the entry that defines
/// it. A built-in server defined nowhere else gets a copy of its entry in the user file
/// (a later layer replaces a server whole, so the copy must be complete).
pub fn set_enabled(
    places: &LoadOptions,
    name: &str,
    scope: Option<Scope>,
    on: bool,
) -> Result<String, Failure> {
    let (scope, path, mut file) = match find_one(places, name, scope, "enable") {
        Ok(found) => found,
        Err(not_found) => {
            let Some(entry) = embedded_entry(name) else {
                return Err(not_found);
            };
            let scope = scope.unwrap_or(Scope::User);
            let path = scope_file(places, scope)?;
            let mut file = open(&path)?;
            if file.get(name).is_some() {
                return Err(not_found);
            }
            file.set(name, &entry);
            (scope, path, file)
        }
    };
    if !file.set_enabled(name, on) {
        return Err(Failure::Usage(format!(
            "server '{name}' in {} is not an object",
            path.display()
        )));
    }
    file.save().map_err(edit_failure)?;
    Ok(format!(
        "{} MCP server '{name}' ({} scope, {})\n",
        if on { "Enabled" } else { "Disabled" },
        scope.name(),
        path.display()
    ))
}

/// `mcp get NAME`: the definition in force, where it comes from, and any it overrides.
pub fn get(places: &LoadOptions, name: &str) -> Result<String, Failure> {
    let mut definitions: Vec<(String, Value)> = Vec::new();
    // Later flag files win, as in the loader.
    for path in places.flag_files.iter().rev() {
        let file = open(path)?;
        if let Some(entry) = file.get(name) {
            definitions.push((format!("--mcp-config ({})", path.display()), entry.clone()));
        }
    }
    for (scope, path) in defining_files(places) {
        let file = open(&path)?;
        if let Some(entry) = file.get(name) {
            definitions.push((
                format!("{} ({})", scope.name(), path.display()),
                entry.clone(),
            ));
        }
    }
    if let Some(entry) = embedded_entry(name) {
        definitions.push(("built-in (toolgate's defaults)".into(), entry));
    }
    let Some((source, entry)) = definitions.first() else {
        return Err(Failure::Usage(format!(
            "no MCP server '{name}' is configured"
        )));
    };
    let mut out = format!("{name}:\n  Scope: {source}\n");
    describe(entry, &mut out);
    for (other, _) in &definitions[1..] {
        let _ = writeln!(out, "  Overrides: {other}");
    }
    Ok(out)
}

fn describe(entry: &Value, out: &mut String) {
    let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("");
    let kind = match text("type") {
        "" => "stdio",
        other => other,
    };
    let _ = writeln!(out, "  Type: {kind}");
    if kind == "http" || kind == "streamable-http" || kind == "streamableHttp" {
        let _ = writeln!(out, "  URL: {}", text("url"));
    } else if kind == "builtin" {
        let server = entry.get("server").and_then(Value::as_str);
        let _ = writeln!(
            out,
            "  Server: toolgate serve {}",
            server.unwrap_or("(its name)")
        );
    } else {
        let _ = writeln!(out, "  Command: {}", text("command"));
    }
    if let Some(args) = entry.get("args").and_then(Value::as_array) {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
            .collect();
        let _ = writeln!(out, "  Args: {}", args.join(" "));
    }
    let map = |key: &str, title: &str, sep: &str, out: &mut String| {
        if let Some(map) = entry.get(key).and_then(Value::as_object)
            && !map.is_empty()
        {
            let _ = writeln!(out, "  {title}:");
            for (k, v) in map {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                let _ = writeln!(out, "    {k}{sep}{v}");
            }
        }
    };
    map("env", "Environment", "=", out);
    map("headers", "Headers", ": ", out);
    if let Some(cwd) = entry.get("cwd").and_then(Value::as_str) {
        let _ = writeln!(out, "  Working directory: {cwd}");
    }
    let enabled = entry
        .get("enabled")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let _ = writeln!(out, "  Enabled: {}", if enabled { "yes" } else { "no" });
    for key in ["includeTools", "excludeTools"] {
        if let Some(tools) = entry.get(key).and_then(Value::as_array) {
            let names: Vec<&str> = tools.iter().filter_map(Value::as_str).collect();
            let _ = writeln!(out, "  {key}: {}", names.join(", "));
        }
    }
}

/// `mcp import claude|codex|gemini [--scope S]`: copies the other tool's servers into
/// toolgate's file. Names that file already has are left alone (and said so).
pub fn import(
    places: &LoadOptions,
    source: ImportSource,
    homes: &Homes,
    scope: Scope,
) -> Result<String, Failure> {
    let found = scan(source, homes);
    let path = scope_file(places, scope)?;
    let mut file = open(&path)?;
    let mut out = String::new();
    let mut added = 0;
    for server in &found.found {
        if file.get(&server.name).is_some() {
            let _ = writeln!(
                out,
                "skipped {}: already defined in {}",
                server.name,
                path.display()
            );
            continue;
        }
        file.set(&server.name, &server.entry);
        added += 1;
        let _ = writeln!(out, "imported {} (from {})", server.name, server.from);
        for note in &server.notes {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    for skipped in &found.skipped {
        let _ = writeln!(out, "skipped {skipped}");
    }
    for note in &found.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for problem in &found.problems {
        let _ = writeln!(out, "error: {problem}");
    }
    if added > 0 {
        file.save().map_err(edit_failure)?;
        let _ = writeln!(
            out,
            "{added} server{} imported from {} into {} ({} scope)",
            if added == 1 { "" } else { "s" },
            source.label(),
            path.display(),
            scope.name()
        );
    } else if found.found.is_empty() && found.problems.is_empty() {
        let looked: Vec<String> = found
            .looked_at
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let _ = writeln!(
            out,
            "no {} MCP servers found (looked in {})",
            source.label(),
            looked.join(", ")
        );
    }
    if !found.problems.is_empty() {
        return Err(Failure::Usage(out.trim_end().to_string()));
    }
    Ok(out)
}
