//! `@path` in a typed message: a workspace file's text attached to the message (cut at
//! [`FILE_CAP`] characters, binary files refused, nothing outside the workspace), and the
//! workspace's files for completing such a path (what `.gitignore` leaves, through the
//! `ignore` crate, as git and ripgrep read it).

use std::path::{Path, PathBuf};

use crate::beneath::{Beneath, BeneathError};

/// Characters of one attached file the model gets.
pub const FILE_CAP: usize = 50_000;

/// Most files listed for completion (a large tree is cut, not walked to its end).
pub const MAX_LISTED: usize = 20_000;

/// A `@path` in a message that names a file, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileMention {
    Attached {
        /// As typed (relative to the workspace).
        path: String,
        /// What the model reads: the file's text fenced with its path.
        text: String,
        chars: usize,
        cut: bool,
    },
    Refused {
        path: String,
        why: String,
    },
}

/// The `@path` words of `text` that name a file in (or, refused, outside) the workspace,
/// each once, in order. `skip`: words that are something else (`@server:uri` mentions).
/// A word that names no file is left alone: `@someone` stays text.
pub fn mentions(text: &str, workspace: &Path, skip: impl Fn(&str) -> bool) -> Vec<FileMention> {
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for word in text.split_whitespace() {
        let Some(typed) = word.strip_prefix('@') else {
            continue;
        };
        if skip(word) {
            continue;
        }
        let typed = typed.trim_end_matches([',', ';', '!', '?', ')', ':', '"', '\'']);
        // A sentence's full stop, unless the file's name ends with one.
        let typed = if typed.ends_with('.') && !root.join(typed).is_file() {
            typed.trim_end_matches('.')
        } else {
            typed
        };
        if typed.is_empty() {
            continue;
        }
        let wanted = crate::paths::lexically_normal(&root.join(typed));
        let Ok(path) = std::fs::canonicalize(&wanted) else {
            continue;
        };
        if !path.is_file() || seen.contains(&path) {
            continue;
        }
        seen.push(path.clone());
        out.push(attach(typed, &path, &root));
    }
    out
}

fn attach(typed: &str, path: &Path, root: &Path) -> FileMention {
    let refused = |why: String| FileMention::Refused {
        path: typed.to_string(),
        why,
    };
    let Ok(rel) = path.strip_prefix(root) else {
        return refused("it is outside the workspace".into());
    };
    // Read beneath the workspace's handle (decision 0089): a link swapped in since the
    // path was looked at cannot lead the read out of the workspace.
    let opened = Beneath::open_root(root).and_then(|root| root.open_read(rel));
    let read = match opened {
        Ok(file) => super::read_text_from(file),
        Err(BeneathError::Io { source, .. }) => Err(source),
        Err(_) => return refused("it is outside the workspace".into()),
    };
    let text = match read {
        Ok(Some(text)) => text,
        Ok(None) => return refused("it is a binary file".into()),
        Err(e) => return refused(format!("it cannot be read: {e}")),
    };
    let count = text.chars().count();
    let kept: String = text.chars().take(FILE_CAP).collect();
    let cut = count > FILE_CAP;
    let marker = if cut {
        format!(
            "\n[… cut: the file has {count} characters; the first {FILE_CAP} are attached. read_file reads the rest]"
        )
    } else {
        String::new()
    };
    let attr = typed.replace('&', "&amp;").replace('"', "&quot;");
    // The file must not close the fence early and speak outside it.
    let kept = kept.replace("</file>", "</ file>");
    FileMention::Attached {
        path: typed.to_string(),
        text: format!("<file path=\"{attr}\">\n{kept}{marker}\n</file>"),
        chars: kept.chars().count(),
        cut,
    }
}

/// Whether a user text block is a file [`mentions`] attached (not typed by the person).
pub fn is_attached_file(text: &str) -> bool {
    (text.starts_with("<file path=\"") && text.ends_with("</file>"))
        || (text.starts_with("[@") && text.contains(" not attached: "))
}

/// The workspace's files as `@` completes them: relative paths with `/`, what the
/// ignore files (`.gitignore`, `.ignore`, git's excludes) leave out left out, and hidden
/// files too, sorted, at most [`MAX_LISTED`].
pub fn workspace_files(workspace: &Path) -> Vec<String> {
    let walk = ignore::WalkBuilder::new(workspace)
        .hidden(true)
        // .gitignore counts in a folder that is not (yet) a repository too.
        .require_git(false)
        .build();
    let mut files: Vec<String> = walk
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(workspace)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .take(MAX_LISTED)
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_attached_cut_or_refused_and_other_words_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("notes.txt"), "remember</file>").unwrap();
        std::fs::write(ws.join("src/big.rs"), "y".repeat(FILE_CAP + 5)).unwrap();
        std::fs::write(ws.join("blob.bin"), [1u8, 0, 2]).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "no").unwrap();
        let found = mentions(
            "see @notes.txt. and @src/big.rs, @blob.bin @../secret.txt @someone @s:x @notes.txt",
            &ws,
            |w| w == "@s:x",
        );
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(
            found[0],
            FileMention::Attached {
                path: "notes.txt".into(),
                text: "<file path=\"notes.txt\">\nremember</ file>\n</file>".into(),
                chars: 16,
                cut: false,
            }
        );
        assert!(
            matches!(&found[1], FileMention::Attached { cut: true, chars, .. } if *chars == FILE_CAP)
        );
        assert!(matches!(&found[2], FileMention::Refused { why, .. } if why.contains("binary")));
        assert!(matches!(&found[3], FileMention::Refused { why, .. } if why.contains("outside")));
        if let FileMention::Attached { text, .. } = &found[0] {
            assert!(is_attached_file(text));
        }
    }

    #[test]
    fn the_listing_leaves_out_what_gitignore_does() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("target")).unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(ws.join("target/out.o"), "x").unwrap();
        std::fs::write(ws.join("src/main.rs"), "x").unwrap();
        assert_eq!(workspace_files(ws), ["src/main.rs"]);
    }
}
