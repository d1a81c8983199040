//! The bash guard: turns a command line into the commands it would really run (wrappers such
//! as `env`/`nohup` removed, `sh -c` strings parsed, `/usr/bin/rm` reduced to `rm`) and
//! classifies each one: on the deny list, destructive, or ordinary.

use super::shell::{self, MAX_DEPTH, ShellError, SimpleCommand};

/// One command the shell would run, seen two ways: `raw` as written (assignments removed) and
/// `words` after wrapper removal with the program reduced to its basename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub raw: String,
    pub words: Vec<String>,
    pub class: Class,
    /// Files its output redirections write (`> f`, `>> f`, `&> f`; not `2>&1`, not
    /// /dev/null): what plan mode and accept-edits look at besides the words.
    pub writes_to: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// On the deny list; the text names the pattern (`rm -rf /`, `sudo`, …).
    Denied(&'static str),
    /// Destructive; the text names why (`rm`, `chmod 777`, `redirection into /etc/`).
    Destructive(&'static str),
    Ordinary,
}

/// All commands of `line`, or why it could not be parsed.
pub fn analyze(line: &str) -> Result<Vec<Effective>, ShellError> {
    let mut out = Vec::new();
    for cmd in shell::parse(line)? {
        effective_of(&cmd, &mut out)?;
    }
    Ok(out)
}

const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"];

fn basename(word: &str) -> &str {
    match word.rsplit_once('/') {
        Some((_, base)) if !base.is_empty() => base,
        _ => word,
    }
}

fn effective_of(cmd: &SimpleCommand, out: &mut Vec<Effective>) -> Result<(), ShellError> {
    let words: Vec<&str> = cmd
        .words
        .iter()
        .skip_while(|w| w.assignment)
        .map(|w| w.text.as_str())
        .collect();
    let raw = words.join(" ");
    let mut nested = Vec::new();
    let normalized = strip_wrappers(&words, cmd.depth, &mut nested)?;
    let mut class = classify(&normalized);
    if class == Class::Ordinary && redirects_into_etc(cmd) {
        class = Class::Destructive("redirection into /etc/");
    }
    out.push(Effective {
        raw,
        words: normalized,
        class,
        writes_to: written_files(cmd),
    });
    out.append(&mut nested);
    Ok(())
}

/// Removes `env`, `command`, `exec`, `nohup`, `time`, `nice`, `timeout`, `xargs`, `builtin`,
/// `busybox` and shell reserved words in front of the real program; parses `sh -c STRING`,
/// `eval …`, `env -S STRING` and `find -exec …` into `nested`.
fn strip_wrappers(
    words: &[&str],
    depth: usize,
    nested: &mut Vec<Effective>,
) -> Result<Vec<String>, ShellError> {
    let mut i = 0;
    // Each pass removes one wrapper; the bound keeps pathological input linear.
    for _ in 0..words.len() + 1 {
        let Some(first) = words.get(i) else { break };
        let program = basename(first);
        let skip_options = |mut j: usize, with_arg: &[&str]| {
            while let Some(w) = words.get(j) {
                if *w == "--" {
                    return j + 1;
                }
                if !w.starts_with('-') || *w == "-" {
                    break;
                }
                j += if with_arg.contains(w) { 2 } else { 1 };
            }
            j
        };
        match program {
            "!" | "{" | "}" | "if" | "then" | "else" | "elif" | "fi" | "do" | "done" | "while"
            | "until" => i += 1,
            "time" => i = skip_options(i + 1, &[]),
            "nohup" | "builtin" | "busybox" => i += 1,
            "command" => i = skip_options(i + 1, &[]),
            "exec" => i = skip_options(i + 1, &["-a"]),
            "nice" => i = skip_options(i + 1, &["-n"]),
            "env" => {
                let mut j = i + 1;
                while let Some(w) = words.get(j) {
                    if *w == "-S" || *w == "--split-string" {
                        if let Some(s) = words.get(j + 1) {
                            parse_nested(s, depth + 1, nested)?;
                        }
                        j += 2;
                    } else if *w == "-u" || *w == "-C" || *w == "--unset" || *w == "--chdir" {
                        j += 2;
                    } else if w.starts_with('-') || is_assignment(w) {
                        j += 1;
                    } else {
                        break;
                    }
                }
                i = j;
            }
            "timeout" => {
                let j = skip_options(i + 1, &["-s", "-k", "--signal", "--kill-after"]);
                i = j + 1; // the duration
            }
            "xargs" => {
                let j = skip_options(
                    i + 1,
                    &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "-i"],
                );
                if j >= words.len() {
                    // Bare `xargs` runs `echo`.
                    return Ok(vec!["echo".into()]);
                }
                i = j;
            }
            "eval" => {
                let rest = words[i + 1..].join(" ");
                parse_nested(&rest, depth + 1, nested)?;
                return Ok(normalized(&words[i..]));
            }
            p if SHELLS.contains(&p) => {
                if let Some(script) = shell_c_argument(&words[i + 1..]) {
                    parse_nested(script, depth + 1, nested)?;
                }
                return Ok(normalized(&words[i..]));
            }
            "find" => {
                find_exec_commands(&words[i + 1..], depth, nested)?;
                return Ok(normalized(&words[i..]));
            }
            _ => return Ok(normalized(&words[i..])),
        }
    }
    Ok(normalized(words.get(i..).unwrap_or(&[])))
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn normalized(words: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    if let Some(first) = out.first_mut() {
        *first = basename(first).to_string();
    }
    out
}

/// The script of `sh -c SCRIPT` / `bash -lc SCRIPT` (first operand after a `c` option).
fn shell_c_argument<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut saw_c = false;
    let mut skip_next = false;
    for arg in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        // `-o pipefail`, `+O extglob`: options with a separate argument.
        if matches!(*arg, "-o" | "+o" | "-O" | "+O") {
            skip_next = true;
            continue;
        }
        if let Some(flags) = arg.strip_prefix('-') {
            if !flags.starts_with('-') && flags.contains('c') {
                saw_c = true;
            }
            continue;
        }
        return saw_c.then_some(*arg);
    }
    None
}

fn parse_nested(script: &str, depth: usize, nested: &mut Vec<Effective>) -> Result<(), ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    for cmd in shell::parse_at_depth(script, depth)? {
        effective_of(&cmd, nested)?;
    }
    Ok(())
}

fn find_exec_commands(
    args: &[&str],
    depth: usize,
    nested: &mut Vec<Effective>,
) -> Result<(), ShellError> {
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i], "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end] != ";" && args[end] != "+" {
                end += 1;
            }
            if start < end {
                if depth + 1 > MAX_DEPTH {
                    return Err(ShellError::TooDeep);
                }
                let cmd = SimpleCommand {
                    words: args[start..end]
                        .iter()
                        .map(|t| shell::Word {
                            text: t.to_string(),
                            assignment: false,
                        })
                        .collect(),
                    redirects: Vec::new(),
                    depth: depth + 1,
                };
                effective_of(&cmd, nested)?;
            }
            i = end;
        }
        i += 1;
    }
    Ok(())
}

fn classify(words: &[String]) -> Class {
    let Some(program) = words.first().map(String::as_str) else {
        return Class::Ordinary;
    };
    let args = &words[1..];
    match program {
        "sudo" | "doas" => return Class::Denied("sudo"),
        "shutdown" => return Class::Denied("shutdown"),
        "reboot" => return Class::Denied("reboot"),
        "halt" | "poweroff" => return Class::Denied("shutdown"),
        "systemctl"
            if args
                .iter()
                .any(|a| matches!(a.as_str(), "poweroff" | "halt")) =>
        {
            return Class::Denied("shutdown");
        }
        "systemctl" if args.iter().any(|a| a == "reboot") => return Class::Denied("reboot"),
        p if p == "mkfs" || p.starts_with("mkfs.") => return Class::Denied("mkfs"),
        "dd" if args.iter().any(|a| a.starts_with("if=")) => return Class::Denied("dd if="),
        "rm" => {
            if let Some(pattern) = rm_catastrophe(args) {
                return Class::Denied(pattern);
            }
            return Class::Destructive("rm");
        }
        "del" => return Class::Destructive("del"),
        "rmdir" => return Class::Destructive("rmdir"),
        "erase" => return Class::Destructive("erase"),
        "shred" => return Class::Destructive("shred"),
        "unlink" => return Class::Destructive("unlink"),
        "chmod" if args.iter().any(|a| is_world_writable_mode(a)) => {
            return Class::Destructive("chmod 777");
        }
        "tee" if args.iter().any(|a| is_under_etc(a)) => {
            return Class::Destructive("redirection into /etc/");
        }
        "find" if args.iter().any(|a| a == "-delete") => {
            return Class::Destructive("find -delete");
        }
        _ => {}
    }
    Class::Ordinary
}

/// `rm -r` (any spelling of the recursive flag) aimed at `/` or the home directory.
fn rm_catastrophe(args: &[String]) -> Option<&'static str> {
    let mut recursive = false;
    let mut operands = Vec::new();
    let mut options_done = false;
    for a in args {
        if !options_done && a == "--" {
            options_done = true;
        } else if !options_done && (a == "--recursive" || a == "--no-preserve-root") {
            recursive = true;
        } else if !options_done && a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            if a.contains(['r', 'R']) {
                recursive = true;
            }
        } else if !a.starts_with("--") || options_done {
            operands.push(a.as_str());
        }
    }
    if !recursive {
        return None;
    }
    for op in operands {
        let trimmed = op.trim_end_matches(['/', '*', '.']);
        if op.starts_with('/') && trimmed.is_empty() {
            return Some("rm -rf /");
        }
        if matches!(trimmed, "~" | "$HOME" | "${HOME}") {
            return Some("rm -rf ~");
        }
    }
    None
}

fn is_world_writable_mode(arg: &str) -> bool {
    matches!(
        arg,
        "777" | "0777" | "a+rwx" | "ugo+rwx" | "a=rwx" | "ugo=rwx"
    )
}

fn is_under_etc(target: &str) -> bool {
    let mut parts = Vec::new();
    if !target.starts_with('/') {
        return false;
    }
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.first() == Some(&"etc")
}

fn written_files(cmd: &SimpleCommand) -> Vec<String> {
    const DEVICES: [&str; 3] = ["/dev/null", "/dev/stdout", "/dev/stderr"];
    cmd.redirects
        .iter()
        .filter(|r| match r.op.as_str() {
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => true,
            // `2>&1`, `>&-`: a file descriptor, not a file.
            ">&" => !(r.target == "-" || r.target.chars().all(|c| c.is_ascii_digit())),
            _ => false,
        })
        .map(|r| r.target.clone())
        .filter(|target| !DEVICES.contains(&target.as_str()))
        .collect()
}

fn redirects_into_etc(cmd: &SimpleCommand) -> bool {
    cmd.redirects.iter().any(|r| {
        matches!(r.op.as_str(), ">" | ">>" | ">|" | "&>" | "&>>" | "<>") && is_under_etc(&r.target)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worst(line: &str) -> Class {
        let cmds = analyze(line).unwrap();
        let mut result = Class::Ordinary;
        for c in cmds {
            match c.class {
                Class::Denied(_) => return c.class,
                Class::Destructive(_) if result == Class::Ordinary => result = c.class,
                _ => {}
            }
        }
        result
    }

    #[test]
    fn wrappers_are_removed_and_paths_reduced() {
        let cmds = analyze("FOO=1 env -i BAR=2 nohup nice -n 5 /usr/bin/rm -f x").unwrap();
        assert_eq!(cmds[0].words, vec!["rm", "-f", "x"]);
        assert_eq!(cmds[0].raw, "env -i BAR=2 nohup nice -n 5 /usr/bin/rm -f x");
        assert_eq!(cmds[0].class, Class::Destructive("rm"));
    }

    #[test]
    fn rm_rf_root_in_its_spellings() {
        for line in [
            "rm -rf /",
            "rm -fr /",
            "rm -r -f /",
            "rm --recursive --force /*",
            "rm -Rf //",
            "rm -rf ~",
        ] {
            assert!(matches!(worst(line), Class::Denied(_)), "{line}");
        }
        assert_eq!(worst("rm -rf build/"), Class::Destructive("rm"));
        assert_eq!(worst("rm -f /tmp/x"), Class::Destructive("rm"));
    }

    #[test]
    fn nested_shells_and_find_exec() {
        assert_eq!(worst("bash -c \"rm -rf /\""), Class::Denied("rm -rf /"));
        assert_eq!(worst("sh -ec 'sudo ls'"), Class::Denied("sudo"));
        assert_eq!(worst("eval rm x"), Class::Destructive("rm"));
        assert_eq!(
            worst("find . -name '*.o' -exec rm {} ;"),
            Class::Destructive("rm")
        );
        assert_eq!(worst("find . -delete"), Class::Destructive("find -delete"));
        assert_eq!(worst("ls | xargs rm"), Class::Destructive("rm"));
        assert_eq!(worst("bash script.sh"), Class::Ordinary);
        assert_eq!(
            worst("bash -o pipefail -c 'rm x'"),
            Class::Destructive("rm")
        );
        assert_eq!(worst("bash -o pipefail script.sh"), Class::Ordinary);
    }

    #[test]
    fn etc_redirection_and_chmod() {
        assert_eq!(
            worst("echo x >> /etc/hosts"),
            Class::Destructive("redirection into /etc/")
        );
        assert_eq!(
            worst("echo x > /tmp/../etc/passwd"),
            Class::Destructive("redirection into /etc/")
        );
        assert_eq!(worst("echo x > /etcetera"), Class::Ordinary);
        assert_eq!(worst("cat < /etc/hosts"), Class::Ordinary);
        assert_eq!(worst("chmod -R 777 ."), Class::Destructive("chmod 777"));
        assert_eq!(worst("chmod 755 x"), Class::Ordinary);
    }

    #[test]
    fn shell_depth_cap_is_an_error() {
        let mut line = "echo hi".to_string();
        for _ in 0..(MAX_DEPTH + 2) {
            line = format!("sh -c {}", shell_quote(&line));
        }
        assert_eq!(analyze(&line), Err(ShellError::TooDeep));
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
