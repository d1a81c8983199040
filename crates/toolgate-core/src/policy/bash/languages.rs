//! Programs whose own small languages can run a command or write a file: sed's `e` command
//! and `s///e` flag (GNU), its `w` command and flag; vim's and ex's `-c`/`+` commands; ed,
//! which reads its commands from standard input; gdb's `-ex`; zip's test command. The guard
//! cannot see what such a language runs, so a command that may run one is unresolved (it
//! may match any rule, so it asks), and one that writes a file changes something (plan
//! mode refuses it).

/// What a program's own language says it does besides reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// It may run a command nobody can see here.
    Runs(String),
    /// It writes a file.
    Writes(String),
}

/// What `program` with the literal arguments `args` may do through its own language, if it
/// is one of the programs this module knows.
pub fn said(program: &str, args: &[String]) -> Option<Said> {
    match program {
        "sed" | "gsed" => sed(args),
        "vi" | "vim" | "nvim" | "ex" | "view" | "vimdiff" | "gvim" => vim(program, args),
        "ed" => Some(Said::Runs(
            "`ed` runs the commands it reads, and `!` runs a shell command".into(),
        )),
        "gdb"
            if args.iter().any(|a| {
                matches!(a.as_str(), "-ex" | "--ex" | "-x" | "--command" | "-iex")
                    || a.starts_with("--eval-command")
                    || a.starts_with("--init-eval-command")
                    || a.starts_with("--command=")
            }) =>
        {
            Some(Said::Runs(
                "`gdb` is given commands, which can run programs".into(),
            ))
        }
        "zip"
            if args
                .iter()
                .any(|a| a == "-TT" || a.starts_with("--unzip-command")) =>
        {
            Some(Said::Runs("`zip -TT` runs a test command".into()))
        }
        _ => None,
    }
}

fn vim(program: &str, args: &[String]) -> Option<Said> {
    let runs_commands = args.iter().any(|a| {
        (a.starts_with('+') && a.len() > 1)
            || matches!(a.as_str(), "-c" | "--cmd" | "-S" | "-s" | "-u" | "-U")
            || (a.starts_with("-c") && a.len() > 2)
    });
    runs_commands.then(|| {
        Said::Runs(format!(
            "`{program}` is given commands, which can run programs"
        ))
    })
}

/// GNU sed: the scripts of `-e`/`--expression` (or the first operand), a script file, and
/// `-i`.
fn sed(args: &[String]) -> Option<Said> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operand_script = true;
    let mut writes = None;
    let mut sandboxed = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            if operand_script && let Some(s) = args.get(i + 1) {
                scripts.push(s);
            }
            break;
        }
        if a == "--sandbox" {
            // GNU sed refuses `e`, `w` and `r` in sandbox mode.
            sandboxed = true;
        } else if let Some(value) = long_value(args, &mut i, a, "expression") {
            scripts.push(value);
            operand_script = false;
        } else if long_value(args, &mut i, a, "file").is_some() {
            return Some(Said::Runs("a sed script read from a file".into()));
        } else if a.starts_with("--in-place") {
            writes = Some("`sed -i` edits files".to_string());
        } else if a.starts_with("--") {
            // --line-length=N takes its value attached; the other long options take none.
        } else if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            // Short options clustered: `-ne SCRIPT`, `-i.bak`, `-l 5`.
            for (k, c) in cluster.char_indices() {
                let rest = &cluster[k + c.len_utf8()..];
                match c {
                    'e' | 'f' | 'l' => {
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i).map(String::as_str)
                        } else {
                            Some(rest)
                        };
                        match (c, value) {
                            ('e', Some(v)) => {
                                scripts.push(v);
                                operand_script = false;
                            }
                            ('f', _) => {
                                return Some(Said::Runs("a sed script read from a file".into()));
                            }
                            _ => {}
                        }
                        break;
                    }
                    'i' => {
                        writes = Some("`sed -i` edits files".to_string());
                        // `-i` takes an attached suffix only.
                        break;
                    }
                    _ => {}
                }
            }
        } else if operand_script {
            scripts.push(a);
            operand_script = false;
        }
        i += 1;
    }
    for script in scripts {
        match script_effect(script) {
            Some(Said::Runs(why)) if !sandboxed => return Some(Said::Runs(why)),
            Some(Said::Writes(why)) if !sandboxed => {
                writes.get_or_insert(why);
            }
            _ => {}
        }
    }
    writes.map(Said::Writes)
}

/// `--NAME=VALUE` or `--NAME VALUE` (any unique prefix of NAME of at least three letters,
/// as GNU getopt accepts): the value, moving `i` past a separate one.
fn long_value<'a>(args: &'a [String], i: &mut usize, arg: &'a str, name: &str) -> Option<&'a str> {
    let body = arg.strip_prefix("--")?;
    let (given, attached) = match body.split_once('=') {
        Some((given, value)) => (given, Some(value)),
        None => (body, None),
    };
    if given.len() < 3 || !name.starts_with(given) {
        return None;
    }
    match attached {
        Some(value) => Some(value),
        None => {
            *i += 1;
            args.get(*i).map(String::as_str)
        }
    }
}

/// What one sed script may do: run a command (`e`, `s///e`) or write a file (`w`, `W`,
/// `s///w`). A script this reader cannot follow counts as running one.
fn script_effect(script: &str) -> Option<Said> {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    let mut writes = None;
    let unreadable = || Some(Said::Runs("a sed script toolgate cannot read".into()));
    loop {
        while at < chars.len() && matches!(chars[at], ' ' | '\t' | '\n' | ';' | '{' | '}') {
            at += 1;
        }
        if at >= chars.len() {
            return writes;
        }
        // The address: numbers, `$`, `/re/`, `\cREc`, ranges and steps, then `!`.
        loop {
            match chars.get(at) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | ' ' | '!') => {
                    at += 1;
                }
                Some('/') => match skip_delimited(&chars, at + 1, '/') {
                    Some(next) => at = next + skip_regex_flags(&chars, next),
                    None => return unreadable(),
                },
                Some('\\') => match chars.get(at + 1) {
                    Some(&d) => match skip_delimited(&chars, at + 2, d) {
                        Some(next) => at = next + skip_regex_flags(&chars, next),
                        None => return unreadable(),
                    },
                    None => return unreadable(),
                },
                _ => break,
            }
        }
        let Some(&command) = chars.get(at) else {
            return writes;
        };
        at += 1;
        match command {
            'e' => return Some(Said::Runs("a sed `e` command runs a shell command".into())),
            'w' | 'W' => {
                writes.get_or_insert(Said::Writes("a sed `w` command writes a file".into()));
                at = end_of_line(&chars, at);
            }
            's' | 'y' => {
                let Some(&delimiter) = chars.get(at) else {
                    return unreadable();
                };
                if delimiter == '\n' || delimiter == '\\' {
                    return unreadable();
                }
                let Some(after_pattern) = skip_delimited(&chars, at + 1, delimiter) else {
                    return unreadable();
                };
                let Some(after_replacement) = skip_delimited(&chars, after_pattern, delimiter)
                else {
                    return unreadable();
                };
                at = after_replacement;
                if command == 's' {
                    while let Some(&flag) = chars.get(at) {
                        match flag {
                            'e' => {
                                return Some(Said::Runs(
                                    "a sed `s///e` flag runs the result as a command".into(),
                                ));
                            }
                            'w' => {
                                writes.get_or_insert(Said::Writes(
                                    "a sed `s///w` flag writes a file".into(),
                                ));
                                at = end_of_line(&chars, at);
                                break;
                            }
                            c if c.is_ascii_alphanumeric() => at += 1,
                            _ => break,
                        }
                    }
                }
            }
            // Text, file names and labels run to the end of the line.
            'a' | 'i' | 'c' | 'r' | 'R' | ':' | '#' => at = end_of_line(&chars, at),
            'b' | 't' | 'T' | 'v' => {
                while at < chars.len() && !matches!(chars[at], ';' | '\n' | '}') {
                    at += 1;
                }
            }
            'q' | 'Q' | 'l' | 'L' => {
                while at < chars.len() && (chars[at].is_ascii_digit() || chars[at] == ' ') {
                    at += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F'
            | '{' | '}' => {}
            _ => return unreadable(),
        }
    }
}

/// The position after the closing `delimiter` of a part that starts at `from` (escapes
/// skipped); None when it does not close.
fn skip_delimited(chars: &[char], from: usize, delimiter: char) -> Option<usize> {
    let mut at = from;
    while at < chars.len() {
        match chars[at] {
            '\\' => at += 2,
            c if c == delimiter => return Some(at + 1),
            '\n' => return None,
            _ => at += 1,
        }
    }
    None
}

/// `I` and `M` after an address's regular expression.
fn skip_regex_flags(chars: &[char], from: usize) -> usize {
    chars[from.min(chars.len())..]
        .iter()
        .take_while(|c| matches!(c, 'I' | 'M'))
        .count()
}

fn end_of_line(chars: &[char], from: usize) -> usize {
    let mut at = from;
    while at < chars.len() && chars[at] != '\n' {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sed_of(line: &[&str]) -> Option<Said> {
        let args: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        said("sed", &args)
    }

    fn runs(s: &Option<Said>) -> bool {
        matches!(s, Some(Said::Runs(_)))
    }

    fn writes(s: &Option<Said>) -> bool {
        matches!(s, Some(Said::Writes(_)))
    }

    #[test]
    fn sed_commands_that_run_or_write() {
        assert!(runs(&sed_of(&["e rm f", "notes"])));
        assert!(runs(&sed_of(&["1e rm f", "notes"])));
        assert!(runs(&sed_of(&["/x/e rm f"])));
        assert!(runs(&sed_of(&["-n", "-e", "p;e rm f"])));
        assert!(runs(&sed_of(&["-ne", "s/x/rm f/e"])));
        assert!(runs(&sed_of(&["--expression=s|x|rm f|ge"])));
        assert!(runs(&sed_of(&["--expr", "1{e rm f\n}"])));
        assert!(runs(&sed_of(&["-f", "script.sed"])));
        assert!(runs(&sed_of(&["s/x/y/;e", "notes"])));
        assert!(writes(&sed_of(&["w out", "notes"])));
        assert!(writes(&sed_of(&["-n", "s/a/b/w out", "notes"])));
        assert!(writes(&sed_of(&["-i", "s/a/b/", "notes"])));
        assert!(writes(&sed_of(&["-i.bak", "s/a/b/", "notes"])));
    }

    #[test]
    fn ordinary_sed_reads() {
        for line in [
            &["s/a/b/g", "notes"][..],
            &["-n", "1,5p", "notes"],
            &["-E", "s/(x)+/\\1/", "notes"],
            &["/^#/d", "notes"],
            &["s/e/E/", "notes"],
            &["y/abc/xyz/", "notes"],
            &["$!N;P;D", "notes"],
            &["-n", "/start/,/end/{p}", "notes"],
            &["--sandbox", "e rm f"],
            &["1a appended text with e and w", "notes"],
        ] {
            assert_eq!(sed_of(line), None, "{line:?}");
        }
    }

    #[test]
    fn editors_given_commands_run_them() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(runs(&said("vim", &args(&["-c", ":!rm f", "-c", "q"]))));
        assert!(runs(&said("ex", &args(&["+!rm f", "x"]))));
        assert!(runs(&said("ed", &args(&["x"]))));
        assert!(runs(&said(
            "zip",
            &args(&["a.zip", "x", "-T", "-TT", "rm f"])
        )));
        assert!(runs(&said("gdb", &args(&["-batch", "-ex", "shell rm f"]))));
        assert_eq!(said("vim", &args(&["notes"])), None);
        assert_eq!(said("zip", &args(&["a.zip", "x"])), None);
    }
}
