//! `@path` in instruction files imports another file, as Claude Code reads CLAUDE.md: a
//! line that is only `@path` is replaced by the file; an `@path` inside other text ("See
//! @README for the overview") keeps the line and adds the file after it. Not inside code
//! spans or fenced code blocks, and only after a space or at a line's start (so an email
//! address like a@b.com is no import); an inline `@word` naming no file stays text. Bounded:
//! at most [`MAX_IMPORT_DEPTH`] levels, each file once (which also stops cycles), and no
//! file outside the project unless the chain started in the user's own file (the person
//! wrote that one; a project's file must not pull in `~/.ssh/…`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::beneath::{Beneath, BeneathError};

/// Levels of imports below a top-level instruction file.
pub const MAX_IMPORT_DEPTH: usize = 5;

pub use crate::protocol::InstructionFile;

/// An import (or a top-level file) that was not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// As written after `@` (or the file's path in the project).
    pub path: String,
    /// The file whose `@path` line asked for it; None for a top-level file.
    pub by: Option<PathBuf>,
    pub why: String,
}

/// One loading of instruction files: what was included, and what went wrong.
pub(super) struct Imports {
    /// The project root, canonical: imports from project files stay inside it.
    boundary: PathBuf,
    /// The project root's handle: a project's files are read beneath it (decision 0089),
    /// so a link out, or one swapped in after the check, is refused by the kernel. None
    /// when the root cannot be opened: then no project file is read.
    project: Option<Beneath>,
    seen: HashSet<PathBuf>,
    pub files: Vec<InstructionFile>,
    pub problems: Vec<String>,
    pub refused: Vec<Refused>,
}

/// Why a project's file that resolves outside the project is not read.
pub(super) const OUTSIDE_PROJECT: &str = "it is outside the project (only your own ~/.config/toolgate/AGENTS.md may import from elsewhere)";

/// Why a project's top-level instruction file that resolves outside it is not read.
const TOP_OUTSIDE: &str = "it resolves outside the project (a project's instruction file must stay inside it; a symbolic link that points out is not followed)";

impl Imports {
    pub fn new(boundary: PathBuf) -> Imports {
        Imports {
            project: Beneath::open_root(&boundary).ok(),
            boundary,
            seen: HashSet::new(),
            files: Vec::new(),
            problems: Vec::new(),
            refused: Vec::new(),
        }
    }

    /// A project's file read beneath the project root: Err(why) when it leads out (or the
    /// root could not be opened), else as [`super::read_text`].
    fn read_in_project(&self, path: &Path) -> Result<std::io::Result<Option<String>>, String> {
        let Some(rel) = path.strip_prefix(&self.boundary).ok() else {
            return Err(OUTSIDE_PROJECT.to_string());
        };
        let Some(project) = &self.project else {
            return Err("the project's folder cannot be opened".to_string());
        };
        match project.open_read(rel) {
            Ok(file) => Ok(super::read_text_from(file)),
            Err(BeneathError::Io { source, .. }) => Ok(Err(source)),
            Err(refused @ (BeneathError::Escapes { .. } | BeneathError::Link { .. })) => {
                Err(format!("{OUTSIDE_PROJECT}: {refused}"))
            }
        }
    }

    /// Notes a file that was not read: for the person (a notice) and the event.
    pub fn refuse(&mut self, path: String, by: Option<&Path>, why: String) {
        let notice = match by {
            Some(by) => format!("instructions: {} imports @{path}: {why}", self.shown(by)),
            None => format!("instructions: {path} was not read: {why}"),
        };
        self.problems.push(notice);
        self.refused.push(Refused {
            path,
            by: by.map(Path::to_path_buf),
            why,
        });
    }

    /// A file's text with its imports expanded, and it listed (None when it was included
    /// already, or cannot be read as text: the problem is noted). `free`: the user's own
    /// file, whose imports may leave the project.
    pub fn include(
        &mut self,
        path: &Path,
        imported_by: Option<&Path>,
        depth: usize,
        free: bool,
    ) -> Option<String> {
        let given = self.shown(path);
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        // Refused before the "each file once" check: two links to the same outside file
        // are each named to the person.
        if !free && !path.starts_with(&self.boundary) {
            let why = match imported_by {
                Some(_) => OUTSIDE_PROJECT.to_string(),
                None => TOP_OUTSIDE.to_string(),
            };
            self.refuse(given, imported_by, why);
            return None;
        }
        if !self.seen.insert(path.clone()) {
            return None;
        }
        // The user's own chain is the user's (its links may point anywhere); a project's
        // file is read beneath the project root, whatever its path said when checked.
        let read = if free {
            super::read_text(&path)
        } else {
            match self.read_in_project(&path) {
                Ok(read) => read,
                Err(why) => {
                    let why = match imported_by {
                        Some(_) => why,
                        None => format!("{TOP_OUTSIDE}: {why}"),
                    };
                    self.refuse(given, imported_by, why);
                    return None;
                }
            }
        };
        let text = match read {
            Ok(Some(text)) => text,
            Ok(None) => {
                self.problems.push(format!(
                    "instructions: {} is not a text file; it was left out",
                    self.shown(&path)
                ));
                return None;
            }
            Err(e) => {
                self.problems.push(format!(
                    "instructions: cannot read {}: {e}",
                    self.shown(&path)
                ));
                return None;
            }
        };
        self.files.push(InstructionFile {
            path: path.clone(),
            imported_by: imported_by.map(Path::to_path_buf),
            chars: text.chars().count(),
        });
        Some(self.expand(&text, &path, depth, free))
    }

    /// The text with every `@path` line (outside code fences) replaced by what it imports,
    /// and every inline `@path` (outside code spans) followed by what it imports.
    fn expand(&mut self, text: &str, file: &Path, depth: usize, free: bool) -> String {
        let mut out = String::with_capacity(text.len());
        let mut in_fence = false;
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
            if in_fence {
                out.push_str(line);
            } else if let Some(target) = import_target(trimmed) {
                let replaced = self.import(target, file, depth, free, Missing::Refuse);
                out.push_str(&replaced.unwrap_or_default());
            } else {
                out.push_str(line);
                for target in inline_targets(line) {
                    let imported = self
                        .import(target, file, depth, free, Missing::LeaveAsText)
                        .or_else(|| {
                            // "… and @docs/style.md." : the sentence's punctuation is not
                            // part of the path when the path as written names no file.
                            let bare = target.trim_end_matches(TRAILING_PUNCTUATION);
                            (bare != target && !bare.is_empty())
                                .then(|| self.import(bare, file, depth, free, Missing::LeaveAsText))
                                .flatten()
                        });
                    if let Some(imported) = imported {
                        out.push('\n');
                        out.push_str(&imported);
                    }
                }
            }
            out.push('\n');
        }
        out.truncate(out.trim_end_matches('\n').len());
        out
    }

    /// What `@target` in `file` brings in: the file's text between markers, or a marker
    /// saying why not (and a notice). None only for an inline `@word` that names no file,
    /// which is left as the text it is.
    fn import(
        &mut self,
        target: &str,
        file: &Path,
        depth: usize,
        free: bool,
        missing: Missing,
    ) -> Option<String> {
        let refuse = |me: &mut Imports, why: String| {
            me.refuse(target.to_string(), Some(file), why.clone());
            Some(format!("[@{target} not imported: {why}]"))
        };
        let dir = file.parent().unwrap_or(Path::new("/"));
        let wanted = match target.strip_prefix("~/") {
            Some(rest) => dirs::home_dir().unwrap_or_default().join(rest),
            None => dir.join(target),
        };
        let resolved = match std::fs::canonicalize(crate::paths::lexically_normal(&wanted)) {
            Ok(path) if path.is_file() => Ok(path),
            Ok(_) => Err("not a file"),
            Err(_) => Err("no such file"),
        };
        let resolved = match (resolved, missing) {
            (Ok(path), _) => path,
            (Err(_), Missing::LeaveAsText) => return None,
            (Err(why), Missing::Refuse) => return refuse(self, why.into()),
        };
        if depth >= MAX_IMPORT_DEPTH {
            return refuse(
                self,
                format!("imports nest deeper than {MAX_IMPORT_DEPTH} levels"),
            );
        }
        if !free && !resolved.starts_with(&self.boundary) {
            return refuse(self, OUTSIDE_PROJECT.into());
        }
        if self.seen.contains(&resolved) {
            return Some(format!("[@{target}: included above]"));
        }
        let shown = self.shown(&resolved);
        Some(match self.include(&resolved, Some(file), depth + 1, free) {
            Some(text) => format!("[imported from {shown}]\n{text}\n[end of {shown}]"),
            None => format!("[@{target} not imported: see the notices]"),
        })
    }

    /// A path relative to the project root when inside it.
    pub fn shown(&self, path: &Path) -> String {
        super::shown(path, &self.boundary)
    }
}

/// What an `@path` naming no file means: a whole-line import is a mistake the person is
/// told of; an inline `@word` may be a mention ("ask @alice"), left as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    Refuse,
    LeaveAsText,
}

/// Punctuation that ends a sentence after an inline `@path`.
const TRAILING_PUNCTUATION: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '"', '\''];

/// The `@path` words of a line outside its code spans: `@` at the line's start or after
/// whitespace, then a path up to the next whitespace.
fn inline_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    // The length of the backtick run that opened the code span we are in (CommonMark: a
    // span closes at a run of the same length).
    let mut span: Option<usize> = None;
    let mut previous: Option<char> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '`' {
            let mut run = 1;
            while chars.next_if(|&(_, c)| c == '`').is_some() {
                run += 1;
            }
            span = match span {
                Some(open) if open == run => None,
                Some(open) => Some(open),
                None => Some(run),
            };
            previous = Some('`');
            continue;
        }
        if c == '@' && span.is_none() && previous.is_none_or(char::is_whitespace) {
            let rest = &line[at + 1..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let target = &rest[..end];
            if !target.is_empty() && !target.starts_with('@') && !target.contains('`') {
                targets.push(target);
            }
        }
        previous = Some(c);
    }
    targets
}

/// The path of an import line: `@` and a path, nothing else on the line.
fn import_target(line: &str) -> Option<&str> {
    let target = line.strip_prefix('@')?;
    (!target.is_empty() && !target.contains(char::is_whitespace) && !target.starts_with('@'))
        .then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_nest_stop_at_cycles_and_stay_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("p");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("../outside.md"), "secret").unwrap();
        std::fs::write(root.join("a.md"), "A\n@b.md\n```\n@c.md\n```").unwrap();
        std::fs::write(root.join("b.md"), "B\n@a.md\n@../outside.md\n@missing.md").unwrap();
        let mut imports = Imports::new(root.clone());
        let text = imports.include(&root.join("a.md"), None, 0, false).unwrap();
        assert!(text.starts_with("A\n[imported from b.md]\nB\n[@a.md: included above]"));
        assert!(text.contains("[@../outside.md not imported: it is outside the project"));
        assert!(text.contains("[@missing.md not imported: no such file]"));
        assert!(text.contains("```\n@c.md\n```"), "{text}");
        assert_eq!(imports.files.len(), 2);
        assert_eq!(imports.files[1].imported_by, Some(root.join("a.md")));
        assert_eq!(imports.problems.len(), 2, "{:?}", imports.problems);
    }

    #[test]
    fn inline_imports_outside_code_spans_and_not_in_email_addresses() {
        assert_eq!(
            inline_targets("See @README for the overview and @docs/style.md for style"),
            ["README", "docs/style.md"]
        );
        assert_eq!(
            inline_targets("mail a@b.com or `@code.md` or ``a ` @x``"),
            Vec::<&str>::new()
        );
        assert_eq!(inline_targets("`x` then @after.md"), ["after.md"]);
        assert_eq!(inline_targets("@first.md starts it"), ["first.md"]);
    }

    #[test]
    fn an_inline_import_follows_its_line_and_a_mention_stays_text() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("p");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("../outside.md"), "secret").unwrap();
        std::fs::write(root.join("README"), "OVERVIEW").unwrap();
        std::fs::write(root.join("docs/style.md"), "STYLE").unwrap();
        std::fs::write(
            root.join("CLAUDE.md"),
            "See @README for the overview and @docs/style.md.\nAsk @alice, mail a@README, not @../outside.md\n```\nsee @README\n```",
        )
        .unwrap();
        let mut imports = Imports::new(root.clone());
        let text = imports
            .include(&root.join("CLAUDE.md"), None, 0, false)
            .unwrap();
        assert!(
            text.starts_with("See @README for the overview and @docs/style.md.\n[imported from README]\nOVERVIEW\n[end of README]\n[imported from docs/style.md]\nSTYLE\n[end of docs/style.md]\nAsk @alice, mail a@README, not @../outside.md\n[@../outside.md not imported: it is outside the project"),
            "{text}"
        );
        assert!(text.ends_with("```\nsee @README\n```"), "{text}");
        assert!(!text.contains("secret"));
        assert_eq!(imports.files.len(), 3);
        assert_eq!(imports.problems.len(), 1, "{:?}", imports.problems);
    }

    #[test]
    fn depth_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for n in 0..8 {
            std::fs::write(root.join(format!("{n}.md")), format!("@{}.md", n + 1)).unwrap();
        }
        let mut imports = Imports::new(root.clone());
        let text = imports.include(&root.join("0.md"), None, 0, false).unwrap();
        assert_eq!(imports.files.len(), MAX_IMPORT_DEPTH + 1);
        assert!(text.contains("nest deeper than 5 levels"), "{text}");
    }
}
