//! Server names given twice in one `.mcp.json`. JSON parsers keep the last of duplicate
//! keys without a word (serde_json included), so a second `"github": {…}` pasted further
//! down silently replaced the first. The later entry still wins (so a file that worked
//! keeps working); the file, the name and the lines are reported.

use super::{Diagnostic, line_column};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

/// The keys of `mcpServers`, in file order, duplicates kept.
struct ServerKeys(Vec<String>);

impl<'de> Deserialize<'de> for ServerKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = ServerKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ServerKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(ServerKeys(keys))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

#[derive(Deserialize)]
struct Root {
    #[serde(rename = "mcpServers")]
    servers: Option<ServerKeys>,
}

/// One diagnostic per server name defined more than once in `text`, placed at its last
/// definition (the one in force). A file that does not parse has none: its syntax error
/// is reported instead.
pub(super) fn duplicates(text: &str, file_label: &str) -> Vec<Diagnostic> {
    let Ok(Root {
        servers: Some(ServerKeys(keys)),
    }) = serde_json::from_str::<Root>(text)
    else {
        return Vec::new();
    };
    let mut reported: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for key in &keys {
        let count = keys.iter().filter(|k| *k == key).count();
        if count < 2 || reported.contains(&key.as_str()) {
            continue;
        }
        reported.push(key);
        let offsets = key_offsets(text, key);
        let lines: Vec<String> = offsets
            .iter()
            .map(|&o| line_column(text, o).0.to_string())
            .collect();
        let place = if lines.len() == count {
            format!(" (lines {})", lines.join(", "))
        } else {
            String::new()
        };
        out.push(Diagnostic::at(
            text,
            file_label,
            offsets.last().copied().unwrap_or(0),
            format!(
                "server '{key}' is defined {count} times in this file{place}; the last definition is used"
            ),
        ));
    }
    out
}

/// Byte offsets of `"key"` used as an object key (followed by `:`), anywhere in `text`.
/// Server names are plain ASCII words, so their JSON spelling is the name in quotes; a
/// nested key of the same name would be counted too, and then no lines are given.
fn key_offsets(text: &str, key: &str) -> Vec<usize> {
    let quoted = format!("\"{key}\"");
    text.match_indices(&quoted)
        .filter(|(at, _)| text[at + quoted.len()..].trim_start().starts_with(':'))
        .map(|(at, _)| at)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_given_twice_is_reported_at_its_last_definition() {
        let text = "{\"mcpServers\": {\n  \"fx\": {\"command\": \"a\"},\n  \"ok\": {\"command\": \"b\"},\n  \"fx\" : {\"command\": \"c\"}\n}}";
        let diags = duplicates(text, "/w/.mcp.json");
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!((diags[0].line, diags[0].column), (4, 3));
        assert_eq!(
            diags[0].to_string(),
            "/w/.mcp.json:4:3: server 'fx' is defined 2 times in this file (lines 2, 4); the last definition is used"
        );
    }

    #[test]
    fn distinct_names_and_broken_files_give_nothing() {
        assert!(
            duplicates(
                r#"{"mcpServers": {"a": {}, "b": {"env": {"a": "1"}}}}"#,
                "f"
            )
            .is_empty()
        );
        assert!(duplicates(r#"{"mcpServers": {"a": {}, "#, "f").is_empty());
        assert!(duplicates(r#"{"mcpServers": []}"#, "f").is_empty());
    }
}
