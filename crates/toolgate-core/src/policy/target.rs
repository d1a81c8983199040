//! Which location a file tool's call touches, worked out from its input alone, and the
//! form in which the caller hands the resolved location to the decision. Resolving (the
//! only file-system access a decision needs) happens outside: see [`super::resolve_target`].

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::beneath::FileTarget;
use crate::builtin::{BuiltinId, Locate};
use crate::pool::PoolTool;

/// The resolved location of a path a tool wants to touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub absolute: PathBuf,
    /// Workspace-relative with `/` separators when inside, None when outside.
    pub relative: Option<String>,
}

impl Resolved {
    pub fn inside(&self) -> bool {
        self.relative.is_some()
    }

    /// What a file tool opens for this location: beneath the workspace when inside it,
    /// else the resolved absolute path with no link followed (decision 0089).
    pub fn file_target(&self) -> FileTarget {
        match &self.relative {
            Some(rel) => FileTarget::Workspace(PathBuf::from(rel)),
            None => FileTarget::Approved(self.absolute.clone()),
        }
    }

    /// The text `Read(…)`/`Edit(…)`/`Write(…)` rules are matched against.
    pub fn rule_path(&self) -> String {
        match &self.relative {
            Some(rel) => rel.clone(),
            None => self.absolute.to_string_lossy().into_owned(),
        }
    }
}

/// A file tool's path as the caller resolved it for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedTarget {
    /// The text that was resolved, as [`path_to_resolve`] gives it for the call. The
    /// decision uses the target only when this matches its own reading of the input, so a
    /// context resolved for another call can never allow this one.
    pub requested: String,
    pub resolved: Resolved,
}

/// What a file tool's call names, before anything is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathRequest {
    /// The input as the model wrote it (`path`, or glob's `pattern`): what messages quote.
    pub shown: String,
    /// What must be resolved: the path itself, or glob's literal base directory.
    pub to_resolve: String,
    /// For glob, the pattern after its literal base ("" when it has no wildcard part).
    pub glob_rest: Option<String>,
    /// For glob, a `..` after a wildcard, which could climb out of any base.
    pub escapes: bool,
}

/// The text that has to be resolved for this call: the `path` of read_file, write_file
/// and edit_file, or the literal base of glob's pattern. None for tools without a path
/// and for calls that lack the field (the decision asks about those without looking).
pub fn path_to_resolve(tool: &PoolTool, input: &Value) -> Option<String> {
    path_request(tool.builtin_kind()?, input).map(|request| request.to_resolve)
}

pub(crate) fn path_request(tool: BuiltinId, input: &Value) -> Option<PathRequest> {
    // Only the file tools have a path field: read_file, write_file, edit_file and glob.
    let locate = tool.file_access()?.locate;
    let shown = input.get(locate.field()).and_then(Value::as_str)?;
    if locate == Locate::GlobPattern {
        return Some(glob_request(
            shown,
            input.get("path").and_then(Value::as_str),
        ));
    }
    Some(PathRequest {
        shown: shown.to_string(),
        to_resolve: shown.to_string(),
        glob_rest: None,
        escapes: false,
    })
}

/// Splits glob's pattern at the first component with a metacharacter; the part before it
/// (joined to an optional base directory) is what the search starts from.
fn glob_request(pattern: &str, base: Option<&str>) -> PathRequest {
    let is_meta = |s: &str| s.contains(['*', '?', '[', '{']);
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').collect();
    let split = parts.iter().position(|p| is_meta(p)).unwrap_or(parts.len());
    let literal = parts[..split].join("/");
    let rest = parts[split..].join("/");
    let escapes = parts[split..].contains(&"..");
    let literal = if literal.is_empty() && absolute {
        "/".to_string()
    } else if literal.is_empty() {
        ".".to_string()
    } else {
        literal
    };
    let to_resolve = match base {
        Some(b) if !Path::new(&literal).is_absolute() => {
            format!("{}/{literal}", b.trim_end_matches('/'))
        }
        _ => literal,
    };
    PathRequest {
        shown: pattern.to_string(),
        to_resolve,
        glob_rest: Some(rest),
        escapes,
    }
}

impl PathRequest {
    /// The texts file rules are matched against once the location is resolved: the path,
    /// or for glob its base and the whole pattern under the resolved base.
    pub(crate) fn rule_candidates(&self, resolved: &Resolved) -> Vec<String> {
        let base = resolved.rule_path();
        match self.glob_rest.as_deref() {
            None => vec![base],
            Some("") => vec![base.clone(), base],
            Some(rest) if base == "." => vec![base, rest.to_string()],
            Some(rest) => {
                let full = format!("{}/{rest}", base.trim_end_matches('/'));
                vec![base, full]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn glob(input: Value) -> PathRequest {
        path_request(crate::builtin::tools::glob::ID, &input).unwrap()
    }

    #[test]
    fn glob_patterns_split_at_the_first_wildcard() {
        let r = glob(json!({"pattern": "src/**/*.rs"}));
        assert_eq!(
            (r.to_resolve.as_str(), r.glob_rest.as_deref(), r.escapes),
            ("src", Some("**/*.rs"), false)
        );
        assert_eq!(glob(json!({"pattern": "**/*.rs"})).to_resolve, ".");
        assert_eq!(glob(json!({"pattern": "/etc/*"})).to_resolve, "/etc");
        assert_eq!(glob(json!({"pattern": "/*"})).to_resolve, "/");
        assert!(glob(json!({"pattern": "*/../../x"})).escapes);
        assert_eq!(
            glob(json!({"pattern": "*.rs", "path": "sub/"})).to_resolve,
            "sub/."
        );
        assert_eq!(
            glob(json!({"pattern": "/abs/*", "path": "sub"})).to_resolve,
            "/abs"
        );
    }

    #[test]
    fn only_file_tools_with_their_field_have_a_path() {
        let path = json!({"path": "a.txt", "pattern": "*.rs", "command": "ls"});
        let wanted: Vec<(BuiltinId, Option<String>)> = BuiltinId::all()
            .map(|t| (t, path_request(t, &path).map(|r| r.to_resolve)))
            .collect();
        assert_eq!(
            wanted,
            [
                (crate::builtin::tools::bash::ID, None),
                (crate::builtin::tools::read_file::ID, Some("a.txt".into())),
                (crate::builtin::tools::write_file::ID, Some("a.txt".into())),
                (crate::builtin::tools::edit_file::ID, Some("a.txt".into())),
                // glob starts from its `path` base when one is given.
                (crate::builtin::tools::glob::ID, Some("a.txt/.".into())),
                (crate::builtin::tools::connect_mcp::ID, None),
                (crate::builtin::tools::disconnect_mcp::ID, None),
                (crate::builtin::tools::list_mcp_resources::ID, None),
                (crate::builtin::tools::read_mcp_resource::ID, None),
                (crate::builtin::tools::search_tools::ID, None),
                (crate::builtin::tools::exit_plan_mode::ID, None),
            ]
        );
        assert_eq!(
            path_request(crate::builtin::tools::read_file::ID, &json!({"path": 3})),
            None
        );
    }
}
