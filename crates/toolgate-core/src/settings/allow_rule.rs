//! Saving an "always" rule: `[permissions] allow` of a config.toml gains one entry, with
//! the file's comments, order and other keys kept (toml_edit). Settings is the one module
//! that reads and writes configuration files; the gate calls this on a blocking thread.

use std::path::{Path, PathBuf};

/// Why a rule could not be added; the file is left as it was in every case.
#[derive(Debug, thiserror::Error)]
pub enum AllowRuleError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid TOML, left unchanged: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}: {what} is not a table/array as expected, left unchanged")]
    Shape { path: PathBuf, what: String },
}

impl From<crate::paths::WriteError> for AllowRuleError {
    fn from(error: crate::paths::WriteError) -> AllowRuleError {
        AllowRuleError::Io {
            path: error.path,
            source: error.source,
        }
    }
}

/// Adds `rule` to `[permissions] allow` of the TOML file at `path` (for "always": the
/// file and text of a [`crate::policy::AlwaysRule`]), creating file and table as needed.
/// Returns false when the rule was already there. A file that is not valid TOML, or whose
/// `permissions`/`allow` have another shape, is left untouched and reported.
pub fn append_allow_rule(path: &Path, rule: &str) -> Result<bool, AllowRuleError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(AllowRuleError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| AllowRuleError::Toml {
                path: path.to_path_buf(),
                message: e.message().trim().to_string(),
            })?;
    let shape = |what: &str| AllowRuleError::Shape {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    let permissions = doc
        .entry("permissions")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| shape("permissions"))?;
    let allow = permissions
        .entry("allow")
        .or_insert(toml_edit::Item::Value(toml_edit::Value::Array(
            toml_edit::Array::new(),
        )))
        .as_array_mut()
        .ok_or_else(|| shape("permissions.allow"))?;
    if allow.iter().any(|v| v.as_str() == Some(rule)) {
        return Ok(false);
    }
    allow.push(rule);
    crate::paths::write_atomically(path, doc.to_string().as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{temp_file, temp_path};

    #[test]
    fn keeps_comments_other_keys_and_does_not_duplicate() {
        let original = "# my settings\n[model]\nname = \"local\" # keep me\n\n[permissions]\n# reviewed rules\nallow = [\"mcp__docs__search\"]\ndeny = [\"Bash(curl:*)\"]\n";
        let (_dir, path) = temp_file("config.toml", original);
        assert!(append_allow_rule(&path, "Bash(rm:*)").unwrap());
        assert!(!append_allow_rule(&path, "Bash(rm:*)").unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        for kept in [
            "# my settings",
            "name = \"local\" # keep me",
            "# reviewed rules",
            "deny = [\"Bash(curl:*)\"]",
        ] {
            assert!(text.contains(kept), "{kept} missing from:\n{text}");
        }
        assert_eq!(text.matches("Bash(rm:*)").count(), 1);
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let allow = parsed["permissions"]["allow"].as_array().unwrap();
        assert_eq!(allow.len(), 2);
    }

    #[test]
    fn malformed_file_is_left_alone() {
        let (_dir, path) = temp_file("config.toml", "[permissions\n");
        assert!(matches!(
            append_allow_rule(&path, "mcp__x").unwrap_err(),
            AllowRuleError::Toml { .. }
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[permissions\n");
        std::fs::write(&path, "permissions = 3\n").unwrap();
        assert!(matches!(
            append_allow_rule(&path, "mcp__x").unwrap_err(),
            AllowRuleError::Shape { .. }
        ));
    }

    #[test]
    fn creates_missing_file_and_folder() {
        let (_dir, path) = temp_path(".toolgate/config.toml");
        assert!(append_allow_rule(&path, "mcp__deploy__trigger").unwrap());
        let parsed: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            parsed["permissions"]["allow"][0].as_str(),
            Some("mcp__deploy__trigger")
        );
    }
}
