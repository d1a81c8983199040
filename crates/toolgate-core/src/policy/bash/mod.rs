//! The bash guard's analysis: every command a bash line can run, found through the
//! tree-sitter-bash grammar (decision 0087). A line becomes [`Unit`]s, one per command it can
//! run (inside `$( )`, backticks, `${ }`, `$(( ))`, `<( )`, here-documents, subshells, groups,
//! loops and functions; and what `eval`, `sh -c`, `env -S`, `xargs`, `find -exec`, `trap` and
//! the wrappers run), each with its words as written and as run.
//!
//! It fails closed: whatever the analysis cannot resolve (a program name made by an
//! expansion, a script read from stdin or a variable, a variable that makes one program run
//! another) is a unit with [`Unit::unresolved`] set, which the policy treats as possibly
//! matching every deny and ask rule and never lets run on an allow.

mod analysis;
mod classify;
mod found;
mod languages;
mod options;
mod program_options;
mod runs;
mod shells;
mod syntax;
mod variables;
mod word;

#[cfg(test)]
mod tests;

use std::fmt;

pub use classify::Class;

/// How deep `sh -c`, `eval` and the like may nest, and how deep the syntax tree may be,
/// before the line counts as unparsable (and asks).
pub const MAX_DEPTH: usize = 8;
/// Syntax nesting (`$( $( … ) )`, `{ { … } }`) allowed before giving up.
const MAX_TREE_DEPTH: usize = 200;

/// One word of a command. `text` is its value after quote removal when `dynamic` is false;
/// when true, the word is made by an expansion, a glob or a brace pattern at run time and
/// `text` is its source text (it may become any text, or several words, or none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub dynamic: bool,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            dynamic: false,
        }
    }

    pub fn dynamic(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            dynamic: true,
        }
    }
}

/// One command a line can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The words as written (prefix assignments left out).
    pub written: Vec<Word>,
    /// The words as run: wrappers (`env`, `nice`, `timeout`, `xargs`, …) removed, the
    /// program reduced to its base name.
    pub words: Vec<Word>,
    pub class: Class,
    /// Files its redirections write (not `2>&1`, not /dev/null).
    pub writes_to: Vec<String>,
    /// Why the analysis cannot tell what this command runs; None when it can.
    pub unresolved: Option<String>,
    /// Why a read-only program changes something here (an option that writes or runs a
    /// program); plan mode reads it.
    pub changes: Option<String>,
}

impl Unit {
    pub(crate) fn new(written: Vec<Word>) -> Unit {
        Unit {
            words: written.clone(),
            written,
            class: Class::Ordinary,
            writes_to: Vec::new(),
            unresolved: None,
            changes: None,
        }
    }

    /// The words as run, as text.
    pub fn texts(&self) -> Vec<String> {
        self.words.iter().map(|w| w.text.clone()).collect()
    }

    /// The command as written, for messages.
    pub fn shown(&self) -> String {
        let text = self
            .written
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if text.is_empty() {
            "(redirection or assignment)".into()
        } else {
            text
        }
    }

    pub(crate) fn unresolved(mut self, why: impl Into<String>) -> Unit {
        self.unresolved.get_or_insert(why.into());
        self
    }
}

/// Why a line could not be analyzed at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashError {
    /// The grammar found a syntax error (or a construct it does not know).
    Syntax,
    /// Deeper than [`MAX_DEPTH`] levels of `sh -c`/`eval`, or a syntax tree too deep.
    TooDeep,
    /// The grammar and bash would read the line differently (a here-document's end).
    Ambiguous(&'static str),
    /// The parser gave no tree (it was stopped).
    NoTree,
}

impl fmt::Display for BashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BashError::Syntax => write!(f, "syntax error"),
            BashError::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
            BashError::Ambiguous(what) => write!(f, "ambiguous {what}"),
            BashError::NoTree => write!(f, "the parser gave up"),
        }
    }
}

impl std::error::Error for BashError {}

/// Every command `line` can run, or why it could not be analyzed.
pub fn analyze(line: &str) -> Result<Vec<Unit>, BashError> {
    let mut out = analysis::Analysis::default();
    syntax::analyze_script(line, 0, &mut out)?;
    out.finish();
    Ok(out.units)
}

pub(crate) fn basename(word: &str) -> &str {
    match word.rsplit_once('/') {
        Some((_, base)) if !base.is_empty() => base,
        _ => word,
    }
}
