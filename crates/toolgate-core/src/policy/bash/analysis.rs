//! What the walk of one line found, shared by the walk (`syntax`) and the resolution of each
//! command (`runs`): the units, the line-wide facts about variables, and redirections.

use std::collections::BTreeSet;

use super::{Unit, Word};

/// What the walk found: the units, and what it needs to judge the line as a whole.
#[derive(Default)]
pub struct Analysis {
    pub units: Vec<Unit>,
    /// Variables given a value that arithmetic evaluation could run as a command
    /// (`x='a[$(cmd)]'`, `x=$(cat f)`).
    tainted: BTreeSet<String>,
    /// Variables read where bash evaluates their value as arithmetic (`$((x))`, `[[ x -eq
    /// 1 ]]`, `${a[x]}`, `${!x}`).
    evaluated: BTreeSet<String>,
    /// Tree levels of the scripts around the one being walked (`sh -c` inside `sh -c`):
    /// the walk's depth is bounded over the whole line, so nesting scripts cannot multiply
    /// the stack it needs.
    pub(super) outer_levels: usize,
}

impl Analysis {
    /// Judges what only the whole line shows: a value that may hold a command substitution
    /// read in arithmetic (bash runs it there).
    pub fn finish(&mut self) {
        if let Some(name) = self.evaluated.intersection(&self.tainted).next() {
            let unit = Unit::new(Vec::new()).unresolved(format!(
                "`{name}` may hold a command that arithmetic evaluation of it would run"
            ));
            self.units.push(unit);
        }
    }

    /// An analysis for part of a line walked separately, `levels` deep in it.
    pub fn within(levels: usize) -> Analysis {
        Analysis {
            outer_levels: levels,
            ..Analysis::default()
        }
    }

    /// Takes in what a separate walk of part of the line found.
    pub fn absorb(&mut self, mut other: Analysis) {
        self.units.append(&mut other.units);
        self.tainted.append(&mut other.tainted);
        self.evaluated.append(&mut other.evaluated);
    }

    pub fn taint(&mut self, name: &str) {
        self.tainted.insert(name.to_string());
    }

    /// Notes an assignment's value: a dynamic value or one with `[`, `$` or a backtick
    /// could run a command when evaluated as arithmetic.
    pub fn assigned(&mut self, name: &str, value: &Word) {
        if value.dynamic || value.text.contains(['[', '$', '`']) {
            self.taint(name);
        }
    }

    pub fn evaluated(&mut self, name: &str) {
        self.evaluated.insert(name.to_string());
    }
}

/// A redirection of a command.
#[derive(Debug, Clone)]
pub struct Redirect {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<>`, `>&`, `<&`, `<<`, `<<-`, `<<<`.
    pub op: String,
    pub target: Option<Word>,
}

impl Redirect {
    /// A file this redirection writes (not a descriptor, not /dev/null).
    pub fn written_file(&self) -> Option<&str> {
        const DEVICES: [&str; 3] = ["/dev/null", "/dev/stdout", "/dev/stderr"];
        let target = self.target.as_ref()?;
        let writes = match self.op.as_str() {
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => true,
            // `2>&1`, `>&-`: a descriptor, not a file.
            ">&" => !(target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit())),
            _ => false,
        };
        (writes && !DEVICES.contains(&target.text.as_str())).then_some(target.text.as_str())
    }
}
