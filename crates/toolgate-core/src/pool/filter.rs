//! Per-server tool filters (`includeTools` / `excludeTools` of a `.mcp.json` entry, the
//! names gemini-cli uses): globs over the server's raw tool names. An excluded tool never
//! enters a pool, so no model request carries it; the panel still lists it, greyed, with
//! the reason.

use globset::GlobMatcher;
use serde::{Deserialize, Serialize};

use crate::settings::{PoolSettings, ToolPatternError, tool_glob};

/// Compiled include and exclude patterns of one server. Exclude wins over include.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// None: every tool is included unless excluded.
    include: Option<Vec<Pattern>>,
    exclude: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    matcher: GlobMatcher,
}

impl Pattern {
    fn new(text: &str) -> Result<Pattern, ToolPatternError> {
        Ok(Pattern {
            text: text.to_string(),
            matcher: tool_glob(text)?.compile_matcher(),
        })
    }
}

/// Why a tool of a server is kept out of the pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Exclusion {
    /// It matches this `excludeTools` pattern.
    ExcludeTools { pattern: String },
    /// `includeTools` is set and no pattern of it matches.
    NotIncluded,
}

impl std::fmt::Display for Exclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exclusion::ExcludeTools { pattern } => write!(f, "excludeTools \"{pattern}\""),
            Exclusion::NotIncluded => write!(f, "not in includeTools"),
        }
    }
}

impl ToolFilter {
    /// Compiles the patterns; a pattern that is not a valid glob is an error naming it.
    pub fn new(
        include: Option<&[String]>,
        exclude: &[String],
    ) -> Result<ToolFilter, ToolPatternError> {
        let compile = |patterns: &[String]| {
            patterns
                .iter()
                .map(|p| Pattern::new(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ToolFilter {
            include: include.map(compile).transpose()?,
            exclude: compile(exclude)?,
        })
    }

    /// The filter of a server's `.mcp.json` entry. Patterns are checked when the entry is
    /// read; one that does not compile anyway (a hand-built config) keeps every tool out
    /// rather than letting all in.
    pub fn of(settings: &PoolSettings) -> ToolFilter {
        ToolFilter::new(settings.include_tools.as_deref(), &settings.exclude_tools)
            .unwrap_or_else(|_| ToolFilter::nothing())
    }

    /// Lets every tool through.
    pub fn all() -> ToolFilter {
        ToolFilter::default()
    }

    /// Keeps every tool out (a filter whose patterns could not be compiled fails closed).
    pub fn nothing() -> ToolFilter {
        ToolFilter {
            include: Some(Vec::new()),
            exclude: Vec::new(),
        }
    }

    pub fn is_all(&self) -> bool {
        self.include.is_none() && self.exclude.is_empty()
    }

    /// Why `raw_name` is kept out, or None when it enters the pool.
    pub fn check(&self, raw_name: &str) -> Option<Exclusion> {
        if let Some(p) = self.exclude.iter().find(|p| p.matcher.is_match(raw_name)) {
            return Some(Exclusion::ExcludeTools {
                pattern: p.text.clone(),
            });
        }
        match &self.include {
            Some(include) if !include.iter().any(|p| p.matcher.is_match(raw_name)) => {
                Some(Exclusion::NotIncluded)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globs_include_and_exclude_wins() {
        let include = strings(&["get_*", "search"]);
        let filter = ToolFilter::new(Some(&include), &strings(&["get_secret*"])).unwrap();
        assert_eq!(filter.check("get_issue"), None);
        assert_eq!(filter.check("search"), None);
        assert_eq!(filter.check("delete_repo"), Some(Exclusion::NotIncluded));
        let excluded = filter.check("get_secret_key").unwrap();
        assert_eq!(excluded.to_string(), "excludeTools \"get_secret*\"");
        // Names with dots (allowed in MCP) match too; `?` is one character.
        let filter = ToolFilter::new(None, &strings(&["admin.*", "rm?"])).unwrap();
        assert!(filter.check("admin.drop").is_some());
        assert!(filter.check("rmx").is_some());
        assert_eq!(filter.check("rmxx"), None);
        assert!(ToolFilter::all().check("anything").is_none());
        assert!(ToolFilter::nothing().check("anything").is_some());
    }

    #[test]
    fn a_bad_glob_is_named() {
        let err = ToolFilter::new(None, &strings(&["a[b"]))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("invalid tool pattern 'a[b'"), "{err}");
    }
}
