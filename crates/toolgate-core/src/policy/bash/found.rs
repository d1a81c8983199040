//! What resolving one command found besides its words as run, shared by the command's
//! resolution (`runs`) and the options of the program it runs (`program_options`).

use super::Word;

/// What resolving a command found besides its words as run.
#[derive(Default)]
pub(super) struct Found {
    pub(super) unresolved: Option<String>,
    pub(super) changes: Option<String>,
    /// Scripts to parse as bash (`sh -c`, `eval`, `trap`, …).
    pub(super) scripts: Vec<String>,
    /// Commands given as words (`find -exec`, `rg --pre PROG`), resolved as commands.
    pub(super) commands: Vec<Vec<Word>>,
}

impl Found {
    pub(super) fn unresolve(&mut self, why: impl Into<String>) {
        self.unresolved.get_or_insert(why.into());
    }

    pub(super) fn change(&mut self, why: impl Into<String>) {
        self.changes.get_or_insert(why.into());
    }

    /// A script given literally is parsed; one made by an expansion cannot be checked.
    pub(super) fn script(&mut self, w: &Word, what: &str) {
        if w.dynamic {
            self.unresolve(format!("the script of {what} is made by an expansion"));
        } else {
            self.scripts.push(w.text.clone());
        }
    }
}

pub(super) fn texts(words: &[Word]) -> Vec<String> {
    words.iter().map(|w| w.text.clone()).collect()
}
