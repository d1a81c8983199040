//! The `glob` tool. It walks the workspace itself through directory handles (never
//! following symbolic links, each folder opened beneath the one that listed it) and
//! matches each file's workspace-relative path, so no pattern can list a file outside it.

use super::BuiltinOutput;
use super::args::Args;
use globset::GlobBuilder;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

use crate::beneath::Beneath;

/// Paths listed at most; the rest are counted.
pub const MAX_RESULTS: usize = 200;
/// Directories never searched: version-control internals and build output are noise for
/// the model and can hold hundreds of thousands of files.
const SKIPPED_DIRS: [&str; 2] = [".git", "target"];

pub async fn run_glob(
    input: &serde_json::Value,
    workspace: &Path,
    cancel: CancellationToken,
) -> BuiltinOutput {
    let pattern = match Args::new(input, &["pattern"]).and_then(|a| a.string("pattern")) {
        Ok(p) => p.to_string(),
        Err(e) => return BuiltinOutput::error(format!("Invalid input for glob: {e}")),
    };
    if !workspace.is_dir() {
        return BuiltinOutput::error(format!(
            "glob: the workspace directory {} does not exist",
            workspace.display()
        ));
    }
    let relative = match workspace_relative(&pattern, workspace) {
        Ok(r) => r,
        Err(why) => return BuiltinOutput::error(format!("glob: {why}")),
    };
    let matcher = match GlobBuilder::new(&relative).literal_separator(true).build() {
        Ok(glob) => glob.compile_matcher(),
        Err(e) => return BuiltinOutput::error(format!("glob: invalid pattern '{pattern}': {e}")),
    };
    let root = workspace.to_path_buf();
    let walked = tokio::task::spawn_blocking(move || {
        Beneath::open_root(&root).map(|top| walk(top, &matcher, &cancel))
    })
    .await;
    let (mut matches, unreadable) = match walked {
        Ok(Ok(Some(found))) => found,
        Ok(Ok(None)) => return BuiltinOutput::error("glob: cancelled by the user"),
        Ok(Err(e)) => return BuiltinOutput::error(format!("glob: {e}")),
        Err(e) => return BuiltinOutput::error(format!("glob: internal error: {e}")),
    };
    matches.sort();
    let total = matches.len();
    let mut text = if total == 0 {
        format!("No files in the workspace match '{pattern}'.")
    } else {
        matches.truncate(MAX_RESULTS);
        matches.join("\n")
    };
    if total > MAX_RESULTS {
        text.push_str(&format!(
            "\n[showing the first {MAX_RESULTS} of {total} matches; use a more specific pattern]"
        ));
    }
    if unreadable > 0 {
        text.push_str(&format!(
            "\n[{unreadable} entries could not be read and were skipped]"
        ));
    }
    BuiltinOutput::ok(text)
}

/// Walks the workspace through directory handles: each folder is opened beneath the one
/// that listed it with no link followed, so a folder swapped for a link meanwhile is not
/// entered. The matched paths and the count of entries that could not be read; None when
/// cancelled.
fn walk(
    top: Beneath,
    matcher: &globset::GlobMatcher,
    cancel: &CancellationToken,
) -> Option<(Vec<String>, usize)> {
    let mut matches = Vec::new();
    let mut unreadable = 0usize;
    let mut pending: Vec<(Beneath, PathBuf)> = vec![(top, PathBuf::new())];
    while let Some((dir, rel_dir)) = pending.pop() {
        let Ok(entries) = dir.entries() else {
            unreadable += 1;
            continue;
        };
        for (name, kind) in entries {
            if cancel.is_cancelled() {
                return None;
            }
            let rel = rel_dir.join(&name);
            if kind.is_dir() {
                if is_skipped(&name) {
                    continue;
                }
                match dir.child_dir(&name, false) {
                    Ok(child) => pending.push((child, rel)),
                    Err(_) => unreadable += 1,
                }
                continue;
            }
            // A symbolic link to a directory is a directory to the model; it is not
            // descended into, so nothing behind it is listed.
            if kind.is_symlink() && dir.link_is_dir(&name) {
                continue;
            }
            if matcher.is_match(&rel) {
                matches.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    Some((matches, unreadable))
}

fn is_skipped(name: &std::ffi::OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|d| name == *d)
}

/// The pattern relative to the workspace root, or why it cannot be searched there.
fn workspace_relative(pattern: &str, workspace: &Path) -> Result<String, String> {
    if pattern.is_empty() {
        return Err("field 'pattern' must not be empty".to_string());
    }
    let mut relative = pattern.to_string();
    if Path::new(pattern).is_absolute() {
        relative = strip_workspace_prefix(pattern, workspace).ok_or_else(|| {
            format!(
                "the pattern '{pattern}' points outside the workspace ({}); glob only searches \
                 inside it, so give a pattern relative to the workspace root",
                workspace.display()
            )
        })?;
    }
    while let Some(rest) = relative.strip_prefix("./") {
        relative = rest.to_string();
    }
    // `..` could only ever match nothing (walked paths have no `..`), but saying so is
    // clearer than an empty result. Alternatives (`{..,src}`) are split on too.
    if relative
        .split(['/', '{', '}', ','])
        .any(|segment| segment == "..")
    {
        return Err(format!(
            "the pattern '{pattern}' contains '..'; glob only searches inside the workspace"
        ));
    }
    if relative.is_empty() {
        // The pattern named the workspace root itself.
        relative = "**".to_string();
    }
    Ok(relative)
}

/// An absolute pattern is fine when it starts with the workspace path, written either as
/// given or with symbolic links resolved (e.g. /tmp vs /private/tmp).
fn strip_workspace_prefix(pattern: &str, workspace: &Path) -> Option<String> {
    let mut roots: Vec<PathBuf> = vec![workspace.to_path_buf()];
    if let Ok(canonical) = workspace.canonicalize() {
        roots.push(canonical);
    }
    for root in roots {
        let root = root.to_string_lossy().trim_end_matches('/').to_string();
        if let Some(rest) = pattern.strip_prefix(&root) {
            if rest.is_empty() {
                return Some(String::new());
            }
            if let Some(rest) = rest.strip_prefix('/') {
                return Some(rest.trim_start_matches('/').to_string());
            }
        }
    }
    None
}
