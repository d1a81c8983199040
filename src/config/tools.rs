//! `[tools]` in `config.toml` (the user's file and, in a trusted workspace, the project's
//! `.toolgate/config.toml`): whether MCP tools are deferred behind `search_tools`.
//!
//! ```toml
//! [tools]
//! search = "auto"            # "auto" (default), "on" or "off"
//! search_threshold = 10000   # auto: defer above this many estimated tokens of definitions
//! ```
//!
//! A later file's values replace the earlier ones; a malformed value is a diagnostic and the
//! value keeps what it had.

use std::path::{Path, PathBuf};

use super::Diagnostic;
use crate::pool::deferral::{SearchMode, SearchSettings};

/// Reads the `[tools]` tables of the user's file (`user_config_dir/config.toml`) and, when
/// `trusted`, the workspace's `.toolgate/config.toml`.
pub fn load_tool_settings(
    workspace: &Path,
    user_config_dir: Option<&Path>,
    trusted: bool,
) -> (SearchSettings, Vec<Diagnostic>) {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(dir) = user_config_dir {
        files.push(dir.join("config.toml"));
    }
    if trusted {
        files.push(crate::paths::workspace_dir(workspace).join("config.toml"));
    }
    let mut settings = SearchSettings::default();
    let mut diagnostics = Vec::new();
    for path in files {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                diagnostics.push(Diagnostic {
                    file: path.display().to_string(),
                    line: 0,
                    column: 0,
                    message: format!("cannot read: {e}; its [tools] settings do not apply"),
                });
                continue;
            }
        };
        diagnostics.extend(apply_tools_layer(
            &mut settings,
            &text,
            &path.display().to_string(),
        ));
    }
    (settings, diagnostics)
}

/// Applies one file's `[tools]` table over `settings`. A file that is not TOML at all is
/// reported by the other readers of the same file ([permissions], [sandbox]); here it only
/// means no `[tools]` settings.
pub fn apply_tools_layer(settings: &mut SearchSettings, text: &str, file: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return diagnostics;
    };
    let Some(item) = doc.get("tools") else {
        return diagnostics;
    };
    let at = |item: &toml_edit::Item| item.span().map(|s| s.start).unwrap_or(0);
    let diag = |offset: usize, message: String| Diagnostic::at(text, file, offset, message);
    let Some(table) = item.as_table_like() else {
        diagnostics.push(diag(at(item), "expected [tools] to be a table".into()));
        return diagnostics;
    };
    for (key, value) in table.iter() {
        let here = at(value);
        match key {
            "search" => match value.as_str().and_then(SearchMode::parse) {
                Some(mode) => settings.mode = mode,
                None => diagnostics.push(diag(
                    here,
                    format!(
                        "expected tools.search = {}; keeping \"{}\"",
                        SearchMode::NAMES,
                        settings.mode.as_str()
                    ),
                )),
            },
            "search_threshold" => match value.as_integer().and_then(|n| usize::try_from(n).ok()) {
                Some(tokens) => settings.auto_threshold_tokens = tokens,
                None => diagnostics.push(diag(
                    here,
                    format!(
                        "expected tools.search_threshold = a number of tokens; keeping {}",
                        settings.auto_threshold_tokens
                    ),
                )),
            },
            other => diagnostics.push(diag(
                here,
                format!("unknown key tools.{other} (expected search or search_threshold); ignored"),
            )),
        }
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_threshold_and_mistakes() {
        let mut settings = SearchSettings::default();
        let diags = apply_tools_layer(
            &mut settings,
            "[tools]\nsearch = \"on\"\nsearch_threshold = 500\n",
            "a.toml",
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(settings.mode, SearchMode::On);
        assert_eq!(settings.auto_threshold_tokens, 500);
        let diags = apply_tools_layer(
            &mut settings,
            "[tools]\nsearch = \"sometimes\"\nsearch_threshold = -1\nfoo = 1\n",
            "b.toml",
        );
        assert_eq!(settings.mode, SearchMode::On);
        assert_eq!(settings.auto_threshold_tokens, 500);
        let messages: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "b.toml:2:10: expected tools.search = \"auto\", \"on\" or \"off\"; keeping \"on\"",
                "b.toml:3:20: expected tools.search_threshold = a number of tokens; keeping 500",
                "b.toml:4:7: unknown key tools.foo (expected search or search_threshold); ignored",
            ]
        );
    }
}
