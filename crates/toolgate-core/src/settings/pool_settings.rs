//! How one server's tools enter the pool, from its `.mcp.json` entry: `"enabled"`,
//! `"includeTools"` / `"excludeTools"` (gemini-cli's names; globs over raw tool names;
//! exclude wins) and `"trustNewTools"` (tools that appear mid-session are not asked about
//! first when a server-wide rule allows them).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolSettings {
    /// `"enabled": false` keeps the server from being connected (by the agent or the
    /// person) until it is enabled again.
    pub enabled: bool,
    /// None: every tool (unless excluded).
    pub include_tools: Option<Vec<String>>,
    pub exclude_tools: Vec<String>,
    /// A tool that appears after the first connect is covered by server-wide rules at once.
    pub trust_new_tools: bool,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            enabled: true,
            include_tools: None,
            exclude_tools: Vec::new(),
            trust_new_tools: false,
        }
    }
}

/// One `includeTools` / `excludeTools` pattern as a glob; an error names the pattern. The
/// pool compiles its filters with this, so an entry that was read compiles the same way.
pub fn tool_glob(text: &str) -> Result<globset::Glob, ToolPatternError> {
    globset::Glob::new(text).map_err(|e| ToolPatternError {
        pattern: text.to_string(),
        kind: e.kind().clone(),
    })
}

/// An `includeTools` / `excludeTools` pattern that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tool pattern '{pattern}': {kind}")]
pub struct ToolPatternError {
    pub pattern: String,
    kind: globset::ErrorKind,
}

/// Reads the entry's pool settings; an error names the field and what was expected.
pub(super) fn parse(obj: &Map<String, Value>) -> Result<PoolSettings, String> {
    let flag = |key: &str, default: bool| match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("\"{key}\" must be true or false")),
    };
    let patterns = |key: &str| -> Result<Option<Vec<String>>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) if !s.is_empty() => Ok(s.clone()),
                    _ => Err(format!("\"{key}\" must be an array of tool names or globs")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(format!("\"{key}\" must be an array of tool names or globs")),
        }
    };
    let settings = PoolSettings {
        enabled: flag("enabled", true)?,
        include_tools: patterns("includeTools")?,
        exclude_tools: patterns("excludeTools")?.unwrap_or_default(),
        trust_new_tools: flag("trustNewTools", false)?,
    };
    for pattern in settings.include_tools.iter().flatten() {
        tool_glob(pattern).map_err(|e| e.to_string())?;
    }
    for pattern in &settings.exclude_tools {
        tool_glob(pattern).map_err(|e| e.to_string())?;
    }
    Ok(settings)
}
