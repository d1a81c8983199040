//! Files of a turn that someone changed again since: undo would overwrite or remove
//! their work, so it shows the difference and asks (console) or refuses (headless).

use std::collections::HashMap;
use std::path::PathBuf;

use super::CheckpointError;
use super::attribution::OwnChange;
use super::git::Git;
use super::log::Blob;
use super::restore::blob_bytes;

/// Lines of difference shown per file before "… N more lines".
const DIFF_LINES: usize = 40;

pub use crate::protocol::{ChangedSince, Since};

/// Whether `own` may be restored without losing a later change: it is as the turn left
/// it, and nobody else changed it between the turn's calls.
pub(super) fn untouched_since(own: &OwnChange, now: &HashMap<PathBuf, Blob>) -> bool {
    !own.interleaved && now.get(&own.path) == own.to.as_ref()
}

/// The files of `own` changed since the turn, with their differences.
pub(super) fn changed_since(
    git: &Git,
    own: &[OwnChange],
    now: &HashMap<PathBuf, Blob>,
) -> Result<Vec<ChangedSince>, CheckpointError> {
    let mut out = Vec::new();
    for file in own.iter().filter(|f| !untouched_since(f, now)) {
        let current = now.get(&file.path);
        let since = if current == file.to.as_ref() {
            Since::DuringTheTurn
        } else {
            Since::AfterTheTurn
        };
        let diff = if since == Since::AfterTheTurn {
            difference(git, file.to.as_ref(), current)?
        } else {
            String::new()
        };
        out.push(ChangedSince {
            path: file.path.clone(),
            change: file.change(),
            since,
            diff,
        });
    }
    Ok(out)
}

fn difference(
    git: &Git,
    left: Option<&Blob>,
    now: Option<&Blob>,
) -> Result<String, CheckpointError> {
    let read = |blob: Option<&Blob>| -> Result<Option<Vec<u8>>, CheckpointError> {
        blob.map(|b| blob_bytes(git, &b.oid)).transpose()
    };
    let (old, new) = (read(left)?, read(now)?);
    Ok(match (old, new) {
        (Some(_), None) => "deleted since the turn".to_string(),
        (None, Some(new)) => match String::from_utf8(new) {
            Ok(new) => unified("", &new),
            Err(e) => format!(
                "created again since the turn ({} bytes)",
                e.as_bytes().len()
            ),
        },
        (Some(old), Some(new)) => match (String::from_utf8(old), String::from_utf8(new)) {
            (Ok(old), Ok(new)) => unified(&old, &new),
            (old, new) => format!(
                "binary file changed ({} bytes → {} bytes)",
                old.map_or_else(|e| e.as_bytes().len(), |s| s.len()),
                new.map_or_else(|e| e.as_bytes().len(), |s| s.len())
            ),
        },
        (None, None) => String::new(),
    })
}

fn unified(old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header("as the turn left it", "now")
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= DIFF_LINES {
        return text.trim_end().to_string();
    }
    format!(
        "{}\n… {} more lines",
        lines[..DIFF_LINES].join("\n"),
        lines.len() - DIFF_LINES
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_both_versions_and_long_ones_are_cut() {
        let text = unified("agent\n", "agent\nperson\n");
        assert!(text.contains("--- as the turn left it"), "{text}");
        assert!(text.contains("+person"), "{text}");
        let long: String = (0..100).map(|i| format!("{i}\n")).collect();
        let cut = unified("", &long);
        assert!(cut.ends_with("more lines"), "{cut}");
    }
}
