//! A small POSIX-shell parser for the bash guard. It does not execute or expand anything; it
//! only finds every simple command a command line would run — including those inside `( )`,
//! `$( )`, backticks, process substitutions and unquoted here-documents — with quotes removed,
//! so the guard can look at real command words instead of substrings.

use std::fmt;

/// How deep `( )`, `$( )`, backticks and `sh -c` may nest before we give up (and ask).
pub const MAX_DEPTH: usize = 8;

/// One word after quote removal. `assignment` is true for an unquoted `NAME=value` prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub assignment: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`.
    pub op: String,
    pub target: String,
}

/// A command with its words and redirections; `depth` counts the nesting it was found at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    pub depth: usize,
}

impl SimpleCommand {
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|w| w.text.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellError {
    Unterminated(&'static str),
    UnexpectedCloser(char),
    Syntax(String),
    TooDeep,
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellError::Unterminated(what) => write!(f, "unterminated {what}"),
            ShellError::UnexpectedCloser(c) => write!(f, "unexpected '{c}'"),
            ShellError::Syntax(s) => write!(f, "syntax error: {s}"),
            ShellError::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
        }
    }
}

impl std::error::Error for ShellError {}

/// Every simple command of `line`, flattened (order: as encountered, substitutions first
/// where they are part of a word).
pub fn parse(line: &str) -> Result<Vec<SimpleCommand>, ShellError> {
    parse_at_depth(line, 0)
}

/// Parses a command string found at nesting `depth` (e.g. the argument of `sh -c`).
pub fn parse_at_depth(line: &str, depth: usize) -> Result<Vec<SimpleCommand>, ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    let mut p = Parser {
        chars: line.chars().collect(),
        pos: 0,
        depth,
        out: Vec::new(),
        heredocs: Vec::new(),
    };
    p.parse_list(None)?;
    Ok(p.out)
}

struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    expands: bool,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    out: Vec<SimpleCommand>,
    heredocs: Vec<PendingHeredoc>,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn enter(&mut self) -> Result<(), ShellError> {
        if self.depth >= MAX_DEPTH {
            return Err(ShellError::TooDeep);
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn finish(&mut self, cur: &mut SimpleCommand) {
        if !cur.words.is_empty() || !cur.redirects.is_empty() {
            let mut done = std::mem::take(cur);
            done.depth = self.depth;
            self.out.push(done);
        }
    }

    /// Parses commands until `closer` (`)` or end of input when None).
    fn parse_list(&mut self, closer: Option<char>) -> Result<(), ShellError> {
        let mut cur = SimpleCommand::default();
        loop {
            match self.peek() {
                None => {
                    self.finish(&mut cur);
                    return match closer {
                        Some(_) => Err(ShellError::Unterminated("'('")),
                        None => Ok(()),
                    };
                }
                Some(' ' | '\t') => {
                    self.pos += 1;
                }
                Some('\\') if self.peek_at(1) == Some('\n') => {
                    self.pos += 2;
                }
                Some('\n') => {
                    self.pos += 1;
                    self.finish(&mut cur);
                    self.read_heredoc_bodies()?;
                }
                Some(';' | '|') => {
                    self.pos += 1;
                    self.finish(&mut cur);
                }
                Some('&') => {
                    if self.peek_at(1) == Some('>') {
                        self.read_redirect(&mut cur)?;
                    } else {
                        self.pos += 1;
                        self.finish(&mut cur);
                    }
                }
                Some('(') => {
                    if cur.words.is_empty() {
                        self.pos += 1;
                        self.finish(&mut cur);
                        self.enter()?;
                        self.parse_list(Some(')'))?;
                        self.leave();
                    } else if self.peek_at(1) == Some(')') {
                        // `name() { …; }` — a function definition; its body follows as commands.
                        self.pos += 2;
                        cur = SimpleCommand::default();
                    } else {
                        return Err(ShellError::Syntax("unexpected '('".into()));
                    }
                }
                Some(')') => {
                    if closer == Some(')') {
                        self.pos += 1;
                        self.finish(&mut cur);
                        return Ok(());
                    }
                    return Err(ShellError::UnexpectedCloser(')'));
                }
                Some('<' | '>') => self.read_redirect(&mut cur)?,
                Some('#') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(c) if c.is_ascii_digit() && self.fd_redirect_ahead() => {
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    self.read_redirect(&mut cur)?;
                }
                Some(_) => {
                    let word = self.read_word()?;
                    cur.words.push(word);
                }
            }
        }
    }

    /// `2>file`, `10<&0`: digits immediately followed by `<` or `>`.
    fn fd_redirect_ahead(&self) -> bool {
        let mut i = 0;
        while self.peek_at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        matches!(self.peek_at(i), Some('<' | '>'))
    }

    fn read_redirect(&mut self, cur: &mut SimpleCommand) -> Result<(), ShellError> {
        const OPS: [&str; 13] = [
            "&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<>", "<&", ">", "<", "",
        ];
        // Process substitution `<( … )` / `>( … )` runs a command list.
        if matches!(self.peek(), Some('<' | '>')) && self.peek_at(1) == Some('(') {
            self.pos += 2;
            self.enter()?;
            self.parse_list(Some(')'))?;
            self.leave();
            return Ok(());
        }
        let op = OPS
            .iter()
            .find(|op| !op.is_empty() && self.starts_with(op))
            .copied()
            .unwrap_or("");
        if op.is_empty() {
            return Err(ShellError::Syntax("bad redirection".into()));
        }
        self.pos += op.chars().count();
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        match self.peek() {
            None => return Err(ShellError::Syntax(format!("missing target after '{op}'"))),
            Some(c) if is_meta(c) => {
                return Err(ShellError::Syntax(format!("missing target after '{op}'")));
            }
            _ => {}
        }
        let start = self.pos;
        let target = self.read_word()?;
        if op == "<<" || op == "<<-" {
            let raw: String = self.chars[start..self.pos].iter().collect();
            self.heredocs.push(PendingHeredoc {
                delimiter: target.text.clone(),
                strip_tabs: op == "<<-",
                expands: !raw.contains(['\'', '"', '\\']),
            });
        }
        cur.redirects.push(Redirect {
            op: op.to_string(),
            target: target.text,
        });
        Ok(())
    }

    /// After a newline: skip the bodies of pending here-documents; unquoted ones still run
    /// their `$( )` and backticks, so those are parsed.
    fn read_heredoc_bodies(&mut self) -> Result<(), ShellError> {
        let pending = std::mem::take(&mut self.heredocs);
        for doc in pending {
            let mut body = String::new();
            loop {
                if self.peek().is_none() {
                    break;
                }
                let mut line = String::new();
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let compare = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if compare == doc.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if doc.expands {
                self.scan_expansions(&body)?;
            }
        }
        Ok(())
    }

    /// Finds substitutions in text that is expanded like a double-quoted string.
    fn scan_expansions(&mut self, text: &str) -> Result<(), ShellError> {
        let mut sub = Parser {
            chars: text.chars().collect(),
            pos: 0,
            depth: self.depth,
            out: Vec::new(),
            heredocs: Vec::new(),
        };
        let mut sink = String::new();
        while sub.peek().is_some() {
            sub.read_double_quoted_char(&mut sink)?;
        }
        self.out.append(&mut sub.out);
        Ok(())
    }

    fn read_word(&mut self) -> Result<Word, ShellError> {
        let mut text = String::new();
        let mut quoted = false;
        let mut assignment = false;
        while let Some(c) = self.peek() {
            if is_meta(c) {
                break;
            }
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.bump() {
                        Some('\n') => {}
                        Some(n) => text.push(n),
                        None => text.push('\\'),
                    }
                    quoted = true;
                }
                '\'' => {
                    self.pos += 1;
                    quoted = true;
                    loop {
                        match self.bump() {
                            Some('\'') => break,
                            Some(ch) => text.push(ch),
                            None => return Err(ShellError::Unterminated("single quote")),
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    quoted = true;
                    loop {
                        match self.peek() {
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some(_) => self.read_double_quoted_char(&mut text)?,
                            None => return Err(ShellError::Unterminated("double quote")),
                        }
                    }
                }
                '$' | '`' => self.read_dollar_or_backtick(&mut text)?,
                '=' if !quoted && !assignment && is_identifier(&text) => {
                    self.pos += 1;
                    text.push('=');
                    assignment = true;
                    // `arr=(a b)`: an array assignment, not a subshell.
                    if self.peek() == Some('(') {
                        self.read_balanced_literal(&mut text, '(', ')')?;
                    }
                }
                _ => {
                    self.pos += 1;
                    text.push(c);
                }
            }
        }
        Ok(Word { text, assignment })
    }

    /// One unit of double-quoted text (the opening quote already consumed).
    fn read_double_quoted_char(&mut self, text: &mut String) -> Result<(), ShellError> {
        match self.peek() {
            Some('\\') => {
                self.pos += 1;
                match self.bump() {
                    Some('\n') => {}
                    Some(n @ ('$' | '`' | '"' | '\\')) => text.push(n),
                    Some(n) => {
                        text.push('\\');
                        text.push(n);
                    }
                    None => text.push('\\'),
                }
            }
            Some('$' | '`') => self.read_dollar_or_backtick(text)?,
            Some(c) => {
                self.pos += 1;
                text.push(c);
            }
            None => {}
        }
        Ok(())
    }

    fn read_dollar_or_backtick(&mut self, text: &mut String) -> Result<(), ShellError> {
        if self.peek() == Some('`') {
            self.pos += 1;
            let mut inner = String::new();
            loop {
                match self.bump() {
                    Some('`') => break,
                    Some('\\') => match self.bump() {
                        Some(n @ ('`' | '\\' | '$')) => inner.push(n),
                        Some(n) => {
                            inner.push('\\');
                            inner.push(n);
                        }
                        None => return Err(ShellError::Unterminated("backtick")),
                    },
                    Some(c) => inner.push(c),
                    None => return Err(ShellError::Unterminated("backtick")),
                }
            }
            let mut nested = parse_at_depth(&inner, self.depth + 1)?;
            self.out.append(&mut nested);
            text.push_str("`…`");
            return Ok(());
        }
        // At '$'.
        // `$((…))` and `${…}` are kept as literal text, balanced.
        for (start, open, close) in [("$((", '(', ')'), ("${", '{', '}')] {
            if self.starts_with(start) {
                self.pos += 1;
                text.push('$');
                return self.read_balanced_literal(text, open, close);
            }
        }
        if self.starts_with("$(") {
            self.pos += 2;
            self.enter()?;
            self.parse_list(Some(')'))?;
            self.leave();
            text.push_str("$(…)");
            return Ok(());
        }
        if self.starts_with("$'") {
            self.pos += 2;
            loop {
                match self.bump() {
                    Some('\'') => break,
                    Some('\\') => match self.bump() {
                        Some(n) => text.push(n),
                        None => return Err(ShellError::Unterminated("$'…' quote")),
                    },
                    Some(c) => text.push(c),
                    None => return Err(ShellError::Unterminated("$'…' quote")),
                }
            }
            return Ok(());
        }
        self.pos += 1;
        text.push('$');
        Ok(())
    }

    /// Copies a balanced `open … close` group verbatim (arithmetic, `${…}`, arrays).
    fn read_balanced_literal(
        &mut self,
        text: &mut String,
        open: char,
        close: char,
    ) -> Result<(), ShellError> {
        let mut level = 0usize;
        while let Some(c) = self.bump() {
            text.push(c);
            if c == '\\' {
                if let Some(n) = self.bump() {
                    text.push(n);
                }
            } else if c == open {
                level += 1;
            } else if c == close {
                level = level.saturating_sub(1);
                if level == 0 {
                    return Ok(());
                }
            }
        }
        Err(ShellError::Unterminated(if open == '{' {
            "'${'"
        } else {
            "'('"
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(line: &str) -> Vec<Vec<String>> {
        parse(line)
            .unwrap()
            .iter()
            .map(|c| c.texts().map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn splits_on_operators_and_newlines() {
        assert_eq!(
            commands("a 1; b && c || d | e & f\ng"),
            vec![
                vec!["a", "1"],
                vec!["b"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"],
                vec!["g"]
            ]
        );
    }

    #[test]
    fn removes_quotes_and_escapes() {
        assert_eq!(
            commands(r#"git commit -m "rm x" 'a b' c\ d "q\"x""#),
            vec![vec!["git", "commit", "-m", "rm x", "a b", "c d", "q\"x"]]
        );
    }

    #[test]
    fn finds_commands_in_substitutions_and_subshells() {
        let found = commands("echo $(rm x) `del y` \"$(shred z)\"; (rmdir w)");
        assert!(found.contains(&vec!["rm".to_string(), "x".to_string()]));
        assert!(found.contains(&vec!["del".to_string(), "y".to_string()]));
        assert!(found.contains(&vec!["shred".to_string(), "z".to_string()]));
        assert!(found.contains(&vec!["rmdir".to_string(), "w".to_string()]));
    }

    #[test]
    fn single_quotes_do_not_substitute() {
        assert_eq!(commands("echo '$(rm x)'"), vec![vec!["echo", "$(rm x)"]]);
    }

    #[test]
    fn records_redirects_and_assignments() {
        let cmds = parse("FOO=1 echo hi > /etc/motd 2>&1").unwrap();
        assert_eq!(cmds.len(), 1);
        assert!(cmds[0].words[0].assignment);
        assert!(!cmds[0].words[1].assignment);
        assert_eq!(
            cmds[0].redirects[0],
            Redirect {
                op: ">".into(),
                target: "/etc/motd".into()
            }
        );
        // A quoted `=` is not an assignment.
        assert!(!parse("'A=1' x").unwrap()[0].words[0].assignment);
    }

    #[test]
    fn heredoc_bodies_are_not_commands_unless_substituted() {
        assert_eq!(
            commands("cat <<EOF\nrm x\nEOF\necho done"),
            vec![vec!["cat"], vec!["echo", "done"]]
        );
        let found = commands("cat <<EOF\n$(rm x)\nEOF");
        assert!(found.contains(&vec!["rm".to_string(), "x".to_string()]));
        assert_eq!(commands("cat <<'EOF'\n$(rm x)\nEOF"), vec![vec!["cat"]]);
    }

    #[test]
    fn reports_unbalanced_input() {
        assert_eq!(
            parse("echo 'abc"),
            Err(ShellError::Unterminated("single quote"))
        );
        assert_eq!(
            parse("echo \"abc"),
            Err(ShellError::Unterminated("double quote"))
        );
        assert!(parse("(echo").is_err());
        assert!(parse("echo )").is_err());
        assert!(parse("echo `x").is_err());
    }

    #[test]
    fn caps_nesting_depth() {
        let deep = "$(".repeat(MAX_DEPTH + 2) + "x" + &")".repeat(MAX_DEPTH + 2);
        assert_eq!(parse(&deep), Err(ShellError::TooDeep));
        let ok = "$(".repeat(3) + "x" + &")".repeat(3);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn arithmetic_and_parameter_expansion_are_words() {
        assert_eq!(
            commands("echo $((1+2)) ${A:-rm x}"),
            vec![vec!["echo", "$((1+2))", "${A:-rm x}"]]
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(line in "\\PC{0,80}") {
            let _ = parse(&line);
        }

        #[test]
        fn never_panics_on_shell_alphabet(line in "[a-z $()`'\"\\\\;&|<>{}\n#=]{0,60}") {
            let _ = parse(&line);
        }
    }
}
