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

use super::Diagnostic;
use super::toml::set;

/// `[tools] search` in `config.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// Defer when the MCP tool definitions exceed the threshold.
    #[default]
    Auto,
    /// Always defer MCP tools (those of `alwaysLoad` servers excepted).
    On,
    /// Never defer: every connected tool is in every request.
    Off,
}

impl SearchMode {
    pub const NAMES: &'static str = "\"auto\", \"on\" or \"off\"";

    pub fn parse(text: &str) -> Option<SearchMode> {
        match text {
            "auto" => Some(SearchMode::Auto),
            "on" => Some(SearchMode::On),
            "off" => Some(SearchMode::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Auto => "auto",
            SearchMode::On => "on",
            SearchMode::Off => "off",
        }
    }
}

/// Estimated tokens of MCP tool definitions above which `auto` defers them: 10,000, i.e. 5 %
/// of a 200k-token context window, about 25 typical tools (the default docs, deploy and fs
/// servers together stay well below it).
pub const DEFAULT_AUTO_THRESHOLD_TOKENS: usize = 10_000;

/// The `[tools]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSettings {
    pub mode: SearchMode,
    /// `[tools] search_threshold`: the `auto` budget in estimated tokens.
    pub auto_threshold_tokens: usize,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            mode: SearchMode::Auto,
            auto_threshold_tokens: DEFAULT_AUTO_THRESHOLD_TOKENS,
        }
    }
}

/// Applies one file's `[tools]` table over `settings`. A file that is not TOML at all is
/// reported by the other readers of the same file ([permissions], [sandbox]); here it only
/// means no `[tools]` settings.
pub fn apply_tools_layer(settings: &mut SearchSettings, text: &str, file: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return diagnostics;
    };
    let table = match super::toml::table(&doc, "tools", text, file) {
        Ok(Some(table)) => table,
        Ok(None) => return diagnostics,
        Err(problem) => return vec![problem],
    };
    let at = super::toml::offset;
    let diag = |offset: usize, message: String| Diagnostic::at(text, file, offset, message);
    for (key, value) in table.iter() {
        let here = at(value);
        match key {
            "search" => {
                let read = value.as_str().and_then(SearchMode::parse);
                diagnostics.extend(set(&mut settings.mode, read, |kept| {
                    diag(
                        here,
                        format!(
                            "expected tools.search = {}; keeping \"{}\"",
                            SearchMode::NAMES,
                            kept.as_str()
                        ),
                    )
                }));
            }
            "search_threshold" => {
                let read = super::toml::whole(value, |_: &usize| true);
                diagnostics.extend(set(&mut settings.auto_threshold_tokens, read, |kept| {
                    diag(
                        here,
                        format!(
                            "expected tools.search_threshold = a number of tokens; keeping {kept}"
                        ),
                    )
                }));
            }
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
        let messages = crate::settings::shown(&diags);
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
