//! Writing one field of a server's entry back into the `.mcp.json` it came from, changing
//! nothing else in the file: the value's text is replaced in place, or the member is
//! inserted in the entry's own style. `/mcp enable|disable NAME --save` uses it, and so can
//! `toolgate mcp enable|disable`.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum EntryEditError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("not valid JSON, left unchanged: {0}")]
    Json(String),
    #[error("no \"mcpServers\" entry named '{0}'")]
    NoServer(String),
    #[error("{0} is not an object, left unchanged")]
    Shape(String),
}

/// Sets `"enabled"` of server `server` in the file at `path` (atomically; the file's mode is
/// kept).
pub fn write_enabled(path: &Path, server: &str, enabled: bool) -> Result<(), EntryEditError> {
    let io = |source| EntryEditError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    let edited = set_member(
        &text,
        server,
        "enabled",
        if enabled { "true" } else { "false" },
    )?;
    if edited == text {
        return Ok(());
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mcp.json".into());
    let temp = path.with_file_name(format!(".{file_name}.toolgate-{}", std::process::id()));
    std::fs::write(&temp, &edited).map_err(io)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        io(e)
    })
}

/// `text` with member `key` of `mcpServers.<server>` set to the JSON literal `value`.
pub fn set_member(
    text: &str,
    server: &str,
    key: &str,
    value: &str,
) -> Result<String, EntryEditError> {
    serde_json::from_str::<serde_json::Value>(text)
        .map_err(|e| EntryEditError::Json(e.to_string()))?;
    let bytes = text.as_bytes();
    let root = skip_ws(bytes, 0);
    let servers = find_member(text, root, "mcpServers")?
        .ok_or_else(|| EntryEditError::NoServer(server.to_string()))?;
    if bytes.get(servers.value.0) != Some(&b'{') {
        return Err(EntryEditError::Shape("\"mcpServers\"".into()));
    }
    let entry = find_member(text, servers.value.0, server)?
        .ok_or_else(|| EntryEditError::NoServer(server.to_string()))?;
    let open = entry.value.0;
    if bytes.get(open) != Some(&b'{') {
        return Err(EntryEditError::Shape(format!("server '{server}'")));
    }
    if let Some(existing) = find_member(text, open, key)? {
        let (start, end) = existing.value;
        return Ok(format!("{}{value}{}", &text[..start], &text[end..]));
    }
    // Insert as the first member, in the style of the entry's first member (its indent).
    let first = skip_ws(bytes, open + 1);
    let lead = &text[open + 1..first];
    let member = format!("\"{key}\": {value}");
    let inserted = if bytes.get(first) == Some(&b'}') {
        format!("{lead}{member}{lead}")
    } else if lead.is_empty() {
        format!("{member}, ")
    } else {
        format!("{lead}{member},")
    };
    Ok(format!(
        "{}{inserted}{}",
        &text[..open + 1],
        &text[open + 1..]
    ))
}

/// A member of an object: its value's byte range.
struct Member {
    value: (usize, usize),
}

/// The last member named `name` of the object starting at `open` (JSON's last one wins).
fn find_member(text: &str, open: usize, name: &str) -> Result<Option<Member>, EntryEditError> {
    let bytes = text.as_bytes();
    let bad = || EntryEditError::Json("unexpected structure".into());
    if bytes.get(open) != Some(&b'{') {
        return Err(bad());
    }
    let mut i = skip_ws(bytes, open + 1);
    let mut found = None;
    if bytes.get(i) == Some(&b'}') {
        return Ok(None);
    }
    loop {
        let key_end = skip_string(bytes, i).ok_or_else(bad)?;
        let key: String = serde_json::from_str(&text[i..key_end]).map_err(|_| bad())?;
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return Err(bad());
        }
        let value_start = skip_ws(bytes, i + 1);
        let value_end = skip_value(bytes, value_start).ok_or_else(bad)?;
        if key == name {
            found = Some(Member {
                value: (value_start, value_end),
            });
        }
        i = skip_ws(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i = skip_ws(bytes, i + 1),
            Some(b'}') => return Ok(found),
            _ => return Err(bad()),
        }
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting at `i`.
fn skip_string(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match bytes.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

/// The end (exclusive) of the value starting at `i`.
fn skip_value(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match bytes.get(j)? {
                    b'"' => {
                        j = skip_string(bytes, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while !matches!(
                bytes.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_an_existing_value_in_place() {
        let text = "{\n  // not json\n}";
        assert!(matches!(
            set_member(text, "a", "enabled", "false"),
            Err(EntryEditError::Json(_))
        ));
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\", \"enabled\": true  },\n    \"b\": {\"args\": [\"{\", \"}\"], \"command\": \"y\"}\n  }\n}\n";
        let out = set_member(text, "a", "enabled", "false").unwrap();
        assert_eq!(
            out,
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\", \"enabled\": false  },\n    \"b\": {\"args\": [\"{\", \"}\"], \"command\": \"y\"}\n  }\n}\n"
        );
    }

    #[test]
    fn inserts_in_the_entry_style() {
        let pretty = "{\n  \"mcpServers\": {\n    \"git\": {\n      \"command\": \"uvx\",\n      \"args\": [\"mcp-server-git\"]\n    }\n  }\n}\n";
        let out = set_member(pretty, "git", "enabled", "false").unwrap();
        assert_eq!(
            out,
            "{\n  \"mcpServers\": {\n    \"git\": {\n      \"enabled\": false,\n      \"command\": \"uvx\",\n      \"args\": [\"mcp-server-git\"]\n    }\n  }\n}\n"
        );
        let compact = r#"{"mcpServers":{"b":{"command":"y"},"a":{"command":"x"}}}"#;
        let out = set_member(compact, "a", "enabled", "false").unwrap();
        assert_eq!(
            out,
            r#"{"mcpServers":{"b":{"command":"y"},"a":{"enabled": false, "command":"x"}}}"#
        );
        let empty = r#"{"mcpServers": {"e": {}}}"#;
        assert_eq!(
            set_member(empty, "e", "enabled", "true").unwrap(),
            r#"{"mcpServers": {"e": {"enabled": true}}}"#
        );
        assert!(matches!(
            set_member(compact, "zz", "enabled", "true"),
            Err(EntryEditError::NoServer(_))
        ));
    }

    #[test]
    fn writes_the_file_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, "{\"mcpServers\": {\"s\": {\"command\": \"x\"}}}\n").unwrap();
        write_enabled(&path, "s", false).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"mcpServers\": {\"s\": {\"enabled\": false, \"command\": \"x\"}}}\n"
        );
        write_enabled(&path, "s", true).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"enabled\": true"), "{text}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
