//! Edits of one `.mcp.json`-style server file that keep everything the person wrote:
//! key order, indentation, blank lines and comments around the entries. The text is
//! checked as strict JSON first (the loader reads it with serde_json, so a file it could not
//! read is never rewritten), then edited through jsonc-parser's concrete syntax tree.

use super::{ConfigSource, Diagnostic};
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a fresh server file starts as.
const EMPTY_FILE: &str = "{\n  \"mcpServers\": {}\n}\n";

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("cannot read {file}: {error}")]
    Read { file: String, error: std::io::Error },
    /// The file is not one the loader could read; it is left as it is.
    #[error("{0}")]
    Invalid(Diagnostic),
    #[error("cannot write {file}: {error}")]
    Write { file: String, error: std::io::Error },
}

/// One server file, parsed for editing.
pub struct ServerFile {
    path: PathBuf,
    root: CstRootNode,
    /// The file's text as strict JSON, for reading entries.
    value: Value,
    existed: bool,
}

impl ServerFile {
    /// Opens `path`; a missing file is an empty one (created on save).
    pub fn open(path: &Path) -> Result<ServerFile, EditError> {
        let label = path.display().to_string();
        let (text, existed) = match std::fs::read_to_string(path) {
            Ok(text) => (text, true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (EMPTY_FILE.to_string(), false),
            Err(error) => return Err(EditError::Read { file: label, error }),
        };
        let value = check(&text, &label)?;
        let root = CstRootNode::parse(&text, &ParseOptions::default()).map_err(|e| {
            EditError::Invalid(Diagnostic::at(
                &text,
                &label,
                e.range().start,
                format!("invalid JSON: {}", e.kind()),
            ))
        })?;
        Ok(ServerFile {
            path: path.to_path_buf(),
            root,
            value,
            existed,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn existed(&self) -> bool {
        self.existed
    }

    /// The raw entry of `name` (no `${VAR}` expanded), as written.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.value.get("mcpServers")?.get(name)
    }

    /// Every entry's name, in file order.
    pub fn names(&self) -> Vec<String> {
        self.value
            .get("mcpServers")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn servers(&self) -> CstObject {
        self.root
            .object_value_or_set()
            .object_value_or_set("mcpServers")
    }

    /// Adds the entry, or replaces it where it stands.
    pub fn set(&mut self, name: &str, entry: &Value) {
        let servers = self.servers();
        match servers.get(name) {
            Some(prop) => prop.set_value(input(entry)),
            None => {
                servers.append(name, input(entry));
            }
        }
        self.set_value(name, Some(entry.clone()));
    }

    /// Removes the entry; false when there was none.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(prop) = self.servers().get(name) else {
            return false;
        };
        prop.remove();
        self.set_value(name, None);
        true
    }

    /// Writes `"enabled": on` into the entry; false when there is no such entry (or it is
    /// not an object).
    pub fn set_enabled(&mut self, name: &str, on: bool) -> bool {
        let Some(entry) = self.servers().get(name).and_then(|p| p.object_value()) else {
            return false;
        };
        match entry.get("enabled") {
            Some(prop) => prop.set_value(CstInputValue::Bool(on)),
            None => {
                entry.append("enabled", CstInputValue::Bool(on));
            }
        }
        let mut updated = self.get(name).cloned().unwrap_or(Value::Null);
        if let Some(object) = updated.as_object_mut() {
            object.insert("enabled".into(), Value::Bool(on));
        }
        self.set_value(name, Some(updated));
        true
    }

    fn set_value(&mut self, name: &str, entry: Option<Value>) {
        if !self.value.is_object() {
            self.value = Value::Object(Default::default());
        }
        let Some(root) = self.value.as_object_mut() else {
            return;
        };
        let servers = root
            .entry("mcpServers")
            .or_insert_with(|| Value::Object(Default::default()));
        if !servers.is_object() {
            *servers = Value::Object(Default::default());
        }
        if let Some(servers) = servers.as_object_mut() {
            match entry {
                Some(entry) => {
                    servers.insert(name.to_string(), entry);
                }
                None => {
                    servers.shift_remove(name);
                }
            }
        }
    }

    /// The edited text.
    pub fn text(&self) -> String {
        let mut text = self.root.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// Writes the file through a temporary file and a rename, so a reader (a running
    /// console's watcher) never sees half of it. Creates the folder when needed.
    pub fn save(&self) -> Result<(), EditError> {
        crate::paths::write_atomically(&self.path, self.text().as_bytes()).map_err(|error| {
            EditError::Write {
                file: self.path.display().to_string(),
                error: error.source,
            }
        })
    }
}

/// Strict JSON with an object under `"mcpServers"` (when present), else a diagnostic with
/// the position.
fn check(text: &str, label: &str) -> Result<Value, EditError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        EditError::Invalid(Diagnostic {
            file: label.to_string(),
            line: e.line(),
            column: e.column(),
            message: format!("invalid JSON: {e}"),
        })
    })?;
    let Some(root) = value.as_object() else {
        return Err(EditError::Invalid(Diagnostic {
            file: label.to_string(),
            line: 1,
            column: 1,
            message: "expected a top-level object with an \"mcpServers\" key".into(),
        }));
    };
    if let Some(servers) = root.get("mcpServers")
        && !servers.is_object()
    {
        let offset = text.find("\"mcpServers\"").unwrap_or(0);
        return Err(EditError::Invalid(Diagnostic::at(
            text,
            label,
            offset,
            "\"mcpServers\" must be an object mapping server names to definitions".into(),
        )));
    }
    Ok(value)
}

/// Checks one entry the way the loader will read it (`${VAR}` references are not resolved
/// here: they may be set only where the server runs).
pub fn check_entry(name: &str, entry: &Value) -> Result<(), InvalidEntry> {
    if !super::valid_server_name(name) {
        return Err(InvalidEntry::Name(name.to_string()));
    }
    let mut servers = serde_json::Map::new();
    servers.insert(name.to_string(), entry.clone());
    let mut root = serde_json::Map::new();
    root.insert("mcpServers".into(), Value::Object(servers));
    let text = Value::Object(root).to_string();
    let (_, diagnostics) =
        super::mcp_json::parse(&text, "<entry>", &ConfigSource::Embedded, &|_| {
            Some(String::new())
        });
    match diagnostics.into_iter().next() {
        Some(d) => Err(InvalidEntry::Definition(d.message)),
        None => Ok(()),
    }
}

/// Why a server entry would not load.
#[derive(Debug, thiserror::Error)]
pub enum InvalidEntry {
    #[error("invalid server name '{0}': names must match [A-Za-z0-9_-]+")]
    Name(String),
    /// The loader's own message, naming the server and the field.
    #[error("{0}")]
    Definition(String),
}

/// A JSON text given on the command line, with the position of a syntax error.
pub fn parse_argument(text: &str, what: &str) -> Result<Value, Diagnostic> {
    serde_json::from_str(text).map_err(|e| Diagnostic {
        file: what.to_string(),
        line: e.line(),
        column: e.column(),
        message: format!("invalid JSON: {e}"),
    })
}

fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{temp_file, temp_path};
    use serde_json::json;

    #[test]
    fn edits_keep_layout_order_and_other_keys() {
        let original = "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"b\": { \"command\": \"bee\" },\n\n        \"a\": {\n            \"command\": \"ay\"\n        }\n    }\n}\n";
        let (_dir, path) = temp_file(".mcp.json", original);
        let mut file = ServerFile::open(&path).unwrap();
        file.set("c", &json!({"command": "see", "args": ["-x"]}));
        assert!(file.set_enabled("b", false));
        assert!(file.remove("a"));
        file.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"b\": {"),
            "{text}"
        );
        assert!(text.contains("\"enabled\": false"), "{text}");
        assert!(
            text.contains("        \"c\": {\n            \"command\": \"see\""),
            "{text}"
        );
        assert!(!text.contains("\"ay\""));
        let reread = ServerFile::open(&path).unwrap();
        assert_eq!(reread.names(), ["b", "c"]);
        assert_eq!(reread.get("b").unwrap()["enabled"], json!(false));
    }

    #[test]
    fn missing_file_is_created_and_bad_file_is_reported_with_position() {
        let (_dir, path) = temp_path("sub/mcp.json");
        let mut file = ServerFile::open(&path).unwrap();
        assert!(!file.existed());
        file.set("x", &json!({"command": "x"}));
        file.save().unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["mcpServers"]["x"]["command"], "x");

        std::fs::write(
            &path,
            "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\",}\n  }\n}\n",
        )
        .unwrap();
        let Err(EditError::Invalid(d)) = ServerFile::open(&path) else {
            panic!("expected a diagnostic");
        };
        assert_eq!(d.line, 3);
        assert!(
            d.to_string().starts_with(&format!("{}:3:", path.display())),
            "{d}"
        );
    }

    #[test]
    fn argument_errors_have_positions() {
        let d = parse_argument("{\"command\": }", "JSON argument").unwrap_err();
        assert_eq!((d.line, d.column), (1, 13));
        assert!(check_entry("ok", &json!({"command": "x"})).is_ok());
        assert!(check_entry("bad name", &json!({"command": "x"})).is_err());
        assert_eq!(
            check_entry("s", &json!({"args": []}))
                .unwrap_err()
                .to_string(),
            "server 's': expected a \"command\" string (or \"type\": \"http\")"
        );
    }
}
