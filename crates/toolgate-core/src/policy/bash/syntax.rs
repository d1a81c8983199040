//! The walk over tree-sitter-bash's syntax tree: every command node becomes a unit (through
//! `runs.rs`, which knows what wrappers and shells run), every word's value is worked out
//! or marked dynamic, and every substitution inside a word, a redirection, a loop header or
//! an arithmetic expression is walked as well.
//!
//! Where the grammar is known to read a line differently from bash, the walk corrects it or
//! gives up: backticks inside `${…}` and here-documents (which the grammar leaves as text)
//! are parsed here; a backslash-newline inside a word (which the grammar splits the word
//! at) joins the two words again; a here-document whose text contains its own end line is
//! ambiguous and the line is refused.

use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Node, Parser, Tree};

use super::analysis::{Analysis, Redirect};
use super::program_options;
use super::runs;
use super::variables;
use super::word;
use super::{BashError, MAX_DEPTH, MAX_TREE_DEPTH, Unit, Word};

mod redirect;

thread_local! {
    /// One parser per thread: setting the language up costs more than a short line's parse.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse(src: &str) -> Result<Tree, BashError> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| BashError::NoTree)?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|_| BashError::NoTree)?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut().ok_or(BashError::NoTree)?;
        parser
            .parse(ascii_shape(src).as_bytes(), None)
            .ok_or(BashError::NoTree)
    })
}

/// `src` with every character outside ASCII replaced by as many `a`s as it has bytes.
///
/// tree-sitter-bash's external scanner (C) crashes on some lines with characters outside
/// ASCII (found by the analyzer's property test: a SIGSEGV inside `scan`), so a hostile
/// line could end toolgate. Bash never reads such characters as operators or blanks, only
/// as parts of words, exactly as it reads a letter, so the copy has the same syntax at the
/// same byte offsets; every text is still read from `src` by those offsets.
fn ascii_shape(src: &str) -> std::borrow::Cow<'_, str> {
    if src.is_ascii() {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut shaped = String::with_capacity(src.len());
    for c in src.chars() {
        if c.is_ascii() {
            shaped.push(c);
        } else {
            shaped.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    std::borrow::Cow::Owned(shaped)
}

/// Analyzes `src` (a line, or the script of `sh -c`/`eval` found at nesting `depth`).
pub fn analyze_script(src: &str, depth: usize, out: &mut Analysis) -> Result<(), BashError> {
    if depth > MAX_DEPTH {
        return Err(BashError::TooDeep);
    }
    let tree = parse(src)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(BashError::Syntax);
    }
    let mut walker = Walker {
        src,
        depth,
        out,
        level: 0,
    };
    walker.visit(root)
}

pub struct Walker<'a, 's> {
    src: &'s str,
    pub depth: usize,
    pub out: &'a mut Analysis,
    level: usize,
}

const WORD_KINDS: &[&str] = &[
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "number",
    "array",
    "brace_expression",
];

impl<'s> Walker<'_, 's> {
    fn text(&self, n: Node) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn enter(&mut self) -> Result<(), BashError> {
        self.level += 1;
        if self.level + self.out.outer_levels > MAX_TREE_DEPTH {
            return Err(BashError::TooDeep);
        }
        Ok(())
    }

    /// Parses a script found inside this one (`sh -c`, `eval`, backticks the grammar left
    /// as text), one level deeper.
    pub fn nested(&mut self, script: &str) -> Result<(), BashError> {
        self.out.outer_levels += self.level;
        let result = analyze_script(script, self.depth + 1, self.out);
        self.out.outer_levels -= self.level;
        result
    }

    fn visit(&mut self, n: Node) -> Result<(), BashError> {
        self.enter()?;
        let result = self.visit_inner(n);
        self.level -= 1;
        result
    }

    fn visit_inner(&mut self, n: Node) -> Result<(), BashError> {
        match n.kind() {
            "command" => self.command(n, Vec::new()),
            "redirected_statement" => self.redirected(n),
            "variable_assignment" => {
                let assignment = self.assignment(n)?;
                self.bare_assignments(vec![assignment]);
                Ok(())
            }
            "variable_assignments" => {
                let mut all = Vec::new();
                for child in named_children(n) {
                    if child.kind() == "variable_assignment" {
                        all.push(self.assignment(child)?);
                    } else {
                        self.visit(child)?;
                    }
                }
                self.bare_assignments(all);
                Ok(())
            }
            "declaration_command" | "unset_command" => self.declaration(n),
            "comment" | "heredoc_start" | "heredoc_end" => Ok(()),
            "compound_statement" if self.text(n).starts_with("((") => self.arithmetic(n),
            "c_style_for_statement" => {
                for child in named_children(n) {
                    if is_statement_like(child) {
                        self.visit(child)?;
                    } else {
                        self.arithmetic(child)?;
                    }
                }
                Ok(())
            }
            "test_command" => {
                // `[[ x -eq 1 ]]` evaluates its operands as arithmetic, `[[ -v 'a[$(cmd)]' ]]`
                // a subscript.
                let text = self.text(n);
                if text.starts_with("[[") {
                    self.collect_names(n)?;
                }
                if program_options::holds_subscript_command(text.trim_start_matches('[')) {
                    self.out.units.push(
                        Unit::new(Vec::new())
                            .unresolved("a test evaluates text that holds a command"),
                    );
                }
                self.children(n)
            }
            "for_statement" => {
                let variable = n
                    .child_by_field_name("variable")
                    .map(|v| self.text(v).to_string());
                for child in named_children(n) {
                    if WORD_KINDS.contains(&child.kind()) {
                        let value = self.word(child)?;
                        if let Some(name) = &variable {
                            self.out.assigned(name, &value);
                        }
                    } else {
                        self.visit(child)?;
                    }
                }
                Ok(())
            }
            kind if WORD_KINDS.contains(&kind) => self.word(n).map(|_| ()),
            "heredoc_redirect" | "file_redirect" | "herestring_redirect" => {
                let mut redirects = Vec::new();
                self.redirect(n, &mut redirects)?;
                self.redirect_only(redirects);
                Ok(())
            }
            "subscript" => self.arithmetic(n),
            _ => {
                self.check_leaf(n)?;
                self.children(n)
            }
        }
    }

    fn children(&mut self, n: Node) -> Result<(), BashError> {
        for child in named_children(n) {
            self.visit(child)?;
        }
        Ok(())
    }

    /// A leaf the walk does not otherwise read: if it holds a backtick or `$(`, the grammar
    /// did not see a substitution bash would run; parse it here.
    fn check_leaf(&mut self, n: Node) -> Result<(), BashError> {
        if n.named_child_count() > 0 {
            return Ok(());
        }
        let text = self.text(n);
        self.unparsed_text(text)
    }

    /// Text that bash expands but the grammar kept as plain text (a `${x#pattern}`, a
    /// here-document without other expansions): parsed as the words of a `:` command, or
    /// failing that, its backticks parsed one by one; a `$(` left over is ambiguous.
    fn unparsed_text(&mut self, text: &str) -> Result<(), BashError> {
        if !text.contains('`') && !text.contains("$(") {
            return Ok(());
        }
        let mut attempt = Analysis::within(self.out.outer_levels + self.level);
        if analyze_script(&format!(": {text}"), self.depth + 1, &mut attempt).is_ok() {
            self.out.absorb(attempt);
            return Ok(());
        }
        if text.contains("$(") {
            return Err(BashError::Ambiguous("substitution"));
        }
        let bodies = word::backtick_bodies(text).map_err(|()| BashError::Syntax)?;
        for body in bodies {
            self.nested(&body)?;
        }
        Ok(())
    }

    /// Arithmetic: every variable named in it is evaluated (and its value, if it holds
    /// `a[$(cmd)]`, runs cmd); substitutions in it are walked.
    fn arithmetic(&mut self, n: Node) -> Result<(), BashError> {
        self.collect_names(n)?;
        for child in named_children(n) {
            if WORD_KINDS.contains(&child.kind()) {
                self.word(child)?;
            } else {
                self.visit(child)?;
            }
        }
        Ok(())
    }

    fn collect_names(&mut self, n: Node) -> Result<(), BashError> {
        self.enter()?;
        for child in named_children(n) {
            match child.kind() {
                "variable_name" => {
                    let name = self.text(child).to_string();
                    self.out.evaluated(&name);
                }
                "word" if word::is_identifier(self.text(child)) => {
                    let name = self.text(child).to_string();
                    self.out.evaluated(&name);
                }
                "command_substitution" | "process_substitution" => {}
                _ => self.collect_names(child)?,
            }
        }
        self.level -= 1;
        Ok(())
    }

    /// The value of a word node (and every command inside it walked).
    pub fn word(&mut self, n: Node) -> Result<Word, BashError> {
        self.enter()?;
        let result = self.word_inner(n);
        self.level -= 1;
        result
    }

    fn word_inner(&mut self, n: Node) -> Result<Word, BashError> {
        let text = self.text(n);
        Ok(match n.kind() {
            "word" => {
                if text.contains('`') || text.contains("$(") {
                    self.check_leaf(n)?;
                    Word::dynamic(text)
                } else {
                    match word::unquoted(text) {
                        Some(value) => Word::literal(value),
                        None => Word::dynamic(text),
                    }
                }
            }
            "raw_string" => Word::literal(
                text.strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text),
            ),
            "ansi_c_string" => match word::ansi_c(text) {
                Some(value) => Word::literal(value),
                None => Word::dynamic(text),
            },
            "string" | "concatenation" | "translated_string" => self.joined(n)?,
            "number" if n.named_child_count() == 0 => Word::literal(text),
            "array" => {
                let mut parts = Vec::new();
                let mut dynamic = false;
                for child in named_children(n) {
                    let part = self.word(child)?;
                    dynamic |= part.dynamic;
                    parts.push(part.text);
                }
                Word {
                    text: parts.join(" "),
                    dynamic,
                }
            }
            "simple_expansion" => Word::dynamic(text),
            "expansion" => {
                self.expansion(n)?;
                Word::dynamic(text)
            }
            "arithmetic_expansion" => {
                self.arithmetic(n)?;
                Word::dynamic(text)
            }
            "command_substitution" | "process_substitution" => {
                for child in named_children(n) {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            let mut redirects = Vec::new();
                            self.redirect(child, &mut redirects)?;
                            self.redirect_only(redirects);
                        }
                        _ => self.visit(child)?,
                    }
                }
                Word::dynamic(text)
            }
            _ => {
                self.children(n)?;
                Word::dynamic(text)
            }
        })
    }

    /// `${…}`: its parts may hold substitutions (`${x:-$(cmd)}`), subscripts evaluate
    /// arithmetic, `${!x}` reads the variable x names.
    fn expansion(&mut self, n: Node) -> Result<(), BashError> {
        let text = self.text(n);
        // `${x@P}` expands the value as a prompt, running the substitutions in it.
        if text.contains("@P") {
            self.out.units.push(
                Unit::new(Vec::new())
                    .unresolved(format!("`{text}` expands a value that may hold a command")),
            );
        }
        if text.starts_with("${!") {
            for child in named_children(n) {
                if child.kind() == "variable_name" {
                    let name = self.text(child).to_string();
                    self.out.evaluated(&name);
                }
            }
        }
        for child in named_children(n) {
            match child.kind() {
                "variable_name" | "special_variable_name" => {}
                "regex" => self.check_leaf(child)?,
                "subscript" => self.subscript_index(child)?,
                kind if WORD_KINDS.contains(&kind) => {
                    self.word(child)?;
                }
                _ => self.visit(child)?,
            }
        }
        Ok(())
    }

    /// `${a[i]}`, `a[i]=x`: the index is arithmetic; the array's own name is not evaluated.
    fn subscript_index(&mut self, n: Node) -> Result<(), BashError> {
        match n.child_by_field_name("index") {
            Some(index) => {
                let text = self.text(index);
                if word::is_identifier(text) {
                    self.out.evaluated(text);
                }
                self.collect_names(index)?;
                if WORD_KINDS.contains(&index.kind()) {
                    self.word(index)?;
                } else {
                    self.visit(index)?;
                }
                Ok(())
            }
            None => self.arithmetic(n),
        }
    }

    /// A string or concatenation: the pieces joined, dynamic if any piece is.
    fn joined(&mut self, n: Node) -> Result<Word, BashError> {
        let range = n.byte_range();
        let is_string = n.kind() == "string";
        let (mut at, end) = if is_string {
            (range.start + 1, range.end.saturating_sub(1))
        } else {
            (range.start, range.end)
        };
        let mut text = String::new();
        let mut dynamic = false;
        for child in named_children(n) {
            let r = child.byte_range();
            if r.start > at {
                text.push_str(self.src.get(at..r.start).unwrap_or(""));
            }
            if child.kind() == "string_content" {
                let raw = self.text(child);
                if raw.contains('`') {
                    self.check_leaf(child)?;
                    dynamic = true;
                }
                text.push_str(&word::double_quoted(raw));
            } else {
                let part = self.word(child)?;
                dynamic |= part.dynamic;
                text.push_str(&part.text);
            }
            at = at.max(r.end);
        }
        if end > at {
            text.push_str(self.src.get(at..end).unwrap_or(""));
        }
        Ok(Word { text, dynamic })
    }

    fn assignment(&mut self, n: Node) -> Result<(String, Word), BashError> {
        let mut name = String::new();
        let mut value = Word::literal("");
        if let Some(target) = n.child_by_field_name("name") {
            if target.kind() == "subscript" {
                self.subscript_index(target)?;
                if let Some(base) = target.child_by_field_name("name") {
                    name = self.text(base).to_string();
                }
            } else {
                name = self.text(target).to_string();
            }
        }
        if let Some(v) = n.child_by_field_name("value") {
            value = self.word(v)?;
        }
        self.out.assigned(&name, &value);
        Ok((name, value))
    }

    /// Assignments standing alone (`x=1`, `BASH_ENV=f`): a unit without words, unresolved
    /// if one of them makes a later program run another.
    fn bare_assignments(&mut self, all: Vec<(String, Word)>) {
        let mut unit = Unit::new(Vec::new());
        for (name, _) in &all {
            if let Some(why) = variables::runs_programs(name) {
                unit = unit.unresolved(format!("setting {name} {why}"));
            }
        }
        self.out.units.push(unit);
    }

    /// `declare`, `export`, `local`, `readonly`, `typeset`, `unset`.
    fn declaration(&mut self, n: Node) -> Result<(), BashError> {
        let mut written = Vec::new();
        let mut names = Vec::new();
        if let Some(keyword) = n.child(0) {
            written.push(Word::literal(self.text(keyword)));
        }
        for child in named_children(n) {
            match child.kind() {
                "variable_assignment" => {
                    let (name, value) = self.assignment(child)?;
                    written.push(Word {
                        text: format!("{name}={}", value.text),
                        dynamic: value.dynamic,
                    });
                    names.push(name);
                }
                "variable_name" => {
                    let name = self.text(child).to_string();
                    written.push(Word::literal(name.clone()));
                    names.push(name);
                }
                kind if WORD_KINDS.contains(&kind) => {
                    let w = self.word(child)?;
                    // `export "$x"=…` or `declare -- "BASH_ENV=f"`: names not known.
                    if !w.dynamic && w.text.contains('=') {
                        let name = w.text.split('=').next().unwrap_or("").to_string();
                        names.push(name);
                    } else if !w.dynamic && !w.text.starts_with(['-', '+']) {
                        names.push(w.text.clone());
                    }
                    written.push(w);
                }
                _ => self.visit(child)?,
            }
        }
        let mut unit = Unit::new(written);
        let flags: String = unit
            .written
            .iter()
            .skip(1)
            .filter(|w| w.text.starts_with(['-', '+']))
            .map(|w| w.text.clone())
            .collect();
        if unit.written.iter().skip(1).any(|w| w.dynamic) {
            unit = unit.unresolved("a declaration whose names or values come from expansions");
        }
        if unit
            .written
            .iter()
            .any(|w| program_options::holds_subscript_command(&w.text))
        {
            unit = unit.unresolved("a declaration evaluates a subscript that holds a command");
        }
        if flags.contains('n') {
            unit = unit.unresolved("a name reference (declare -n) can set any variable");
        }
        if flags.contains('i') {
            for name in &names {
                self.out.evaluated(name);
            }
        }
        let keyword = unit.written.first().map(|w| w.text.clone());
        if keyword.as_deref() != Some("unset") {
            for name in &names {
                if let Some(why) = variables::runs_programs(name) {
                    unit = unit.unresolved(format!("setting {name} {why}"));
                }
            }
        }
        unit.words = unit.written.clone();
        self.out.units.push(unit);
        Ok(())
    }

    /// A simple command: its words and redirections, then what it runs (`runs.rs`).
    fn command(&mut self, n: Node, mut redirects: Vec<Redirect>) -> Result<(), BashError> {
        let mut assignments = Vec::new();
        let mut words: Vec<(Word, Range<usize>)> = Vec::new();
        let mut cursor = n.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() {
                    match child.kind() {
                        "variable_assignment" => assignments.push(self.assignment(child)?),
                        "command_name" => {
                            let inner = child.named_child(0).unwrap_or(child);
                            let w = if inner.id() == child.id() {
                                Word::dynamic(self.text(child))
                            } else {
                                self.word(inner)?
                            };
                            words.push((w, child.byte_range()));
                        }
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, &mut redirects)?;
                        }
                        "comment" => {}
                        kind if WORD_KINDS.contains(&kind) => {
                            let w = self.word(child)?;
                            words.push((w, child.byte_range()));
                        }
                        // `time (cmd)`, `coproc { cmd; }`: a statement, walked as one.
                        _ => self.visit(child)?,
                    }
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        let words = self.join_continued(words);
        for script in runs::command(self.out, assignments, words, &redirects) {
            self.nested(&script)?;
        }
        Ok(())
    }

    /// `r\<newline>m x`: bash removes the backslash-newline and reads `rm`; the grammar
    /// splits the word there. Words separated by nothing else are joined again.
    fn join_continued(&self, words: Vec<(Word, Range<usize>)>) -> Vec<Word> {
        let mut out: Vec<(Word, Range<usize>)> = Vec::with_capacity(words.len());
        for (w, r) in words {
            if let Some((prev, prev_range)) = out.last_mut() {
                let gap = self.src.get(prev_range.end..r.start).unwrap_or("");
                if !gap.is_empty() && gap.split("\\\n").all(str::is_empty) {
                    prev.text.push_str(&w.text);
                    prev.dynamic |= w.dynamic;
                    prev_range.end = r.end;
                    continue;
                }
            }
            out.push((w, r));
        }
        out.into_iter().map(|(w, _)| w).collect()
    }
}

fn named_children(n: Node) -> Vec<Node> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor).collect()
}

fn is_statement_like(n: Node) -> bool {
    matches!(
        n.kind(),
        "do_group" | "compound_statement" | "command" | "list" | "pipeline" | "subshell"
    ) && !n.kind().is_empty()
}
