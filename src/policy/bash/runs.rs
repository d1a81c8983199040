//! What a simple command runs: wrappers removed (`env`, `nice`, `timeout`, `xargs`, …),
//! the scripts of `sh -c`, `eval`, `env -S`, `trap`, `alias`, `watch` and `git grep -O`
//! parsed, the commands of `find -exec` and program-valued options (`rg --pre`, `sort
//! --compress-program`) made units of their own, and options of read-only programs that
//! write or run something noted for plan mode.

use super::analysis::{Analysis, Redirect};
use super::classify::{self, apply_redirects};
use super::languages::{self, Said};
use super::options::{self, Spec};
use super::variables;
use super::word;
use super::{Unit, Word, basename};

/// What resolving a command found besides its words as run.
#[derive(Default)]
struct Found {
    unresolved: Option<String>,
    changes: Option<String>,
    /// Scripts to parse as bash (`sh -c`, `eval`, `trap`, …).
    scripts: Vec<String>,
    /// Commands given as words (`find -exec`, `rg --pre PROG`), resolved as commands.
    commands: Vec<Vec<Word>>,
}

impl Found {
    fn unresolve(&mut self, why: impl Into<String>) {
        self.unresolved.get_or_insert(why.into());
    }

    fn change(&mut self, why: impl Into<String>) {
        self.changes.get_or_insert(why.into());
    }

    /// A script given literally is parsed; one made by an expansion cannot be checked.
    fn script(&mut self, w: &Word, what: &str) {
        if w.dynamic {
            self.unresolve(format!("the script of {what} is made by an expansion"));
        } else {
            self.scripts.push(w.text.clone());
        }
    }
}

/// Resolves one simple command and pushes its unit (and the units of the commands it
/// names as words). Returns the scripts it runs (`sh -c`, `eval`, …), for the walk to
/// analyze one level deeper.
pub fn command(
    out: &mut Analysis,
    assignments: Vec<(String, Word)>,
    written: Vec<Word>,
    redirects: &[Redirect],
) -> Vec<String> {
    let mut found = Found::default();
    // `IFS= read -r line`: IFS given to a builtin that splits its own input changes only
    // that splitting.
    let splits_input = written
        .iter()
        .find(|w| !w.text.contains('='))
        .is_some_and(|w| matches!(w.text.as_str(), "read" | "mapfile" | "readarray"));
    for (name, _) in &assignments {
        if name == "IFS" && splits_input {
            continue;
        }
        if let Some(why) = variables::runs_programs(name) {
            found.unresolve(format!("setting {name} {why}"));
        }
    }
    // Words the grammar did not see as assignments (a backslash-newline inside the name
    // hides it) are still assignments to bash.
    let mut start = 0;
    while let Some(w) = written.get(start) {
        match w.text.split_once('=') {
            Some((name, _)) if !w.dynamic && word::is_identifier(name) => {
                if let Some(why) = variables::runs_programs(name) {
                    found.unresolve(format!("setting {name} {why}"));
                }
                start += 1;
            }
            _ => break,
        }
    }
    let run = strip(&written[start..], &mut found, 0);
    note_variables(out, &run);
    let mut unit = Unit::new(written);
    unit.words = run;
    if let Some(first) = unit.words.first_mut()
        && !first.dynamic
    {
        first.text = basename(&first.text).to_string();
    }
    unit.class = classify::classify(&unit.texts());
    apply_redirects(&mut unit, redirects);
    unit.unresolved = found.unresolved;
    unit.changes = found.changes;
    out.units.push(unit);
    let mut scripts = found.scripts;
    for words in found.commands {
        scripts.extend(command(out, Vec::new(), words, &[]));
    }
    scripts
}

/// Variables a builtin sets from values nobody has seen (`read x`, `printf -v x`), and
/// names `let` evaluates as arithmetic.
fn note_variables(out: &mut Analysis, run: &[Word]) {
    let Some(program) = run.first().map(|p| p.text.as_str()) else {
        return;
    };
    match program {
        "read" | "mapfile" | "readarray" | "getopts" | "printf" => {
            for arg in &run[1..] {
                let name = arg.text.trim_start_matches("-v");
                if word::is_identifier(name) {
                    out.taint(name);
                }
            }
        }
        "let" => {
            for arg in &run[1..] {
                for name in arg
                    .text
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|n| word::is_identifier(n))
                {
                    out.evaluated(name);
                }
            }
        }
        _ => {}
    }
}

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "rbash", "yash", "posh", "fish", "csh",
    "tcsh", "ksh93", "pdksh", "oksh", "loksh",
];

/// Wrappers whose options we do not model: what they run is only known when no option
/// stands before it.
const PLAIN_WRAPPERS: &[&str] = &[
    "nocache",
    "eatmydata",
    "fakeroot",
    "torsocks",
    "proxychains",
    "proxychains4",
    "catchsegv",
    "xvfb-run",
    "dbus-run-session",
    "unbuffer",
    "caffeinate",
];

/// Programs that run another command through options we do not model.
const OPAQUE_RUNNERS: &[&str] = &[
    "strace",
    "ltrace",
    "valgrind",
    "gdb",
    "lldb",
    "perf",
    "unshare",
    "chroot",
    "nsenter",
    "prlimit",
    "faketime",
    "firejail",
    "bwrap",
    "proot",
    "systemd-run",
    "setpriv",
    "runcon",
    "sg",
    "newgrp",
    "numactl",
    "cgexec",
    "parallel",
    "entr",
    "daemonize",
    "start-stop-daemon",
    "at",
    "batch",
    "tsp",
    "script",
    "su",
    "runuser",
    "expect",
    "tmux",
    "screen",
    "dtach",
    "nq",
    "rlwrap",
    "chpst",
    "softlimit",
    "setuidgid",
    "envdir",
    "envuidgid",
    "cpulimit",
    "trickle",
    "firejail",
    "flatpak-spawn",
];

fn texts(words: &[Word]) -> Vec<String> {
    words.iter().map(|w| w.text.clone()).collect()
}

/// Skips a wrapper's options: `short_arg` letters take an argument, `long_arg` long
/// options too; letters or long names outside `known_short`/`long_known` make it unknown
/// (None). Returns the index of the first operand.
fn skip_options(
    args: &[Word],
    short_arg: &str,
    known_short: &str,
    long_arg: &[&str],
    long_known: &[&str],
) -> Option<usize> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            // `nice $opts cmd`: whether it is an option or the program is not known.
            return None;
        }
        let t = a.text.as_str();
        if t == "--" {
            return Some(i + 1);
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let with_arg = long_arg.iter().filter(|l| l.starts_with(name)).count();
            let without = long_known.iter().filter(|l| l.starts_with(name)).count();
            if name.is_empty() || with_arg + without == 0 {
                return None;
            }
            // An abbreviation that could be either kind: which word comes next is unclear.
            if with_arg > 0 && without > 0 && !attached {
                return None;
            }
            i += if with_arg > 0 && !attached { 2 } else { 1 };
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let letters: Vec<char> = t[1..].chars().collect();
            let mut consumed_next = false;
            for (k, c) in letters.iter().enumerate() {
                if short_arg.contains(*c) {
                    consumed_next = k + 1 == letters.len();
                    break;
                }
                if !known_short.contains(*c) && !c.is_ascii_digit() {
                    return None;
                }
            }
            i += if consumed_next { 2 } else { 1 };
            continue;
        }
        return Some(i);
    }
    Some(i)
}

/// The words as run, after every wrapper in front of the real program.
fn strip(words: &[Word], found: &mut Found, nesting: usize) -> Vec<Word> {
    if nesting > super::MAX_DEPTH * 4 {
        found.unresolve("wrappers nested too deeply");
        return words.to_vec();
    }
    let mut i = 0;
    while let Some(first) = words.get(i) {
        if first.dynamic {
            found.unresolve(format!(
                "the program name `{}` is made by an expansion",
                first.text
            ));
            return words[i..].to_vec();
        }
        let program = basename(&first.text);
        let rest = &words[i + 1..];
        let unknown = |found: &mut Found| {
            found.unresolve(format!("cannot tell which program `{program}` runs"));
        };
        let next = match program {
            "env" => return env(rest, found, nesting),
            "nice" => skip_options(rest, "n", "n", &["adjustment"], &[]),
            "nohup" | "builtin" | "coproc" => Some(0),
            "busybox" | "toybox" => match rest.first() {
                Some(a) if a.text.starts_with('-') => return words[i..].to_vec(),
                _ => Some(0),
            },
            "setsid" => skip_options(rest, "", "cfw", &[], &["ctty", "fork", "wait"]),
            "stdbuf" => skip_options(rest, "ioe", "", &["input", "output", "error"], &[]),
            "ionice" => {
                if rest.iter().any(|a| {
                    !a.text.starts_with("--")
                        && a.text.starts_with('-')
                        && a.text.contains(['p', 'P', 'u'])
                        || ["--pid", "--pgid", "--uid"]
                            .iter()
                            .any(|l| a.text.starts_with(l))
                }) {
                    return words[i..].to_vec();
                }
                skip_options(rest, "cn", "t", &["class", "classdata"], &["ignore"])
            }
            "chrt" => {
                if rest.iter().any(|a| {
                    a.text == "--pid"
                        || a.text == "--max"
                        || a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains(['p', 'm'])
                }) {
                    return words[i..].to_vec();
                }
                // Options, the priority, then the command.
                skip_options(
                    rest,
                    "TPD",
                    "abdefiorRv",
                    &["sched-runtime", "sched-period", "sched-deadline"],
                    &[
                        "all-tasks",
                        "batch",
                        "deadline",
                        "ext",
                        "fifo",
                        "idle",
                        "other",
                        "rr",
                        "reset-on-fork",
                        "verbose",
                    ],
                )
                .map(|k| k + 1)
            }
            "taskset" => {
                if rest.iter().any(|a| {
                    a.text == "--pid"
                        || a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('p')
                }) {
                    return words[i..].to_vec();
                }
                skip_options(rest, "", "ac", &[], &["all-tasks", "cpu-list"]).map(|k| k + 1)
            }
            "flock" => return flock(rest, &words[i..], found, nesting),
            "time" => {
                let (opts, _) = options::read(
                    &Spec {
                        long: &[
                            ("output", true),
                            ("format", true),
                            ("append", false),
                            ("portability", false),
                            ("verbose", false),
                            ("quiet", false),
                        ],
                        short_with_arg: "fo",
                    },
                    &texts(rest),
                    true,
                );
                if opts.iter().any(|o| o.name == "o" || o.name == "output") {
                    found.change("`time -o` writes a file");
                }
                skip_options(
                    rest,
                    "fo",
                    "pavq",
                    &["output", "format"],
                    &["append", "portability", "verbose", "quiet"],
                )
            }
            "command" => {
                if rest
                    .iter()
                    .take_while(|a| a.text.starts_with('-'))
                    .any(|a| a.text.contains(['v', 'V']))
                {
                    // `command -v x` only says what x is.
                    return words[i..].to_vec();
                }
                skip_options(rest, "", "p", &[], &[])
            }
            "exec" => {
                if rest.is_empty() {
                    return words[i..].to_vec();
                }
                skip_options(rest, "a", "cl", &[], &[])
            }
            "timeout" => skip_options(
                rest,
                "sk",
                "v",
                &["signal", "kill-after"],
                &["preserve-status", "foreground", "verbose"],
            )
            .map(|k| k + 1),
            "xargs" => return xargs(rest, found, nesting),
            "watch" => return watch(rest, &words[i..], found, nesting),
            p if PLAIN_WRAPPERS.contains(&p) => match rest.first() {
                Some(a) if !a.text.starts_with('-') => Some(0),
                Some(_) => None,
                None => return words[i..].to_vec(),
            },
            p if OPAQUE_RUNNERS.contains(&p) => {
                if rest.is_empty() {
                    return words[i..].to_vec();
                }
                unknown(found);
                return words[i..].to_vec();
            }
            p if SHELLS.contains(&p) => {
                shell(p, rest, found);
                return words[i..].to_vec();
            }
            _ => {
                program_options(program, rest, found);
                return words[i..].to_vec();
            }
        };
        match next {
            Some(k) if i + 1 + k <= words.len() => i = i + 1 + k,
            _ => {
                unknown(found);
                return words[i..].to_vec();
            }
        }
    }
    // Only wrappers, no program (`nohup`, `env -i`): the last wrapper is what runs.
    words.last().map(|w| vec![w.clone()]).unwrap_or_default()
}

/// `env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]`, with `-S`/`--split-string` in
/// every spelling (`-S'a b'`, `-iS x`, `--split-string=x`, `--sp x`).
fn env(args: &[Word], found: &mut Found, nesting: usize) -> Vec<Word> {
    const LONG: &[(&str, bool)] = &[
        ("ignore-environment", false),
        ("null", false),
        ("unset", true),
        ("chdir", true),
        ("split-string", true),
        ("argv0", true),
        ("block-signal", false),
        ("default-signal", false),
        ("ignore-signal", false),
        ("list-signal-handling", false),
        ("debug", false),
        ("help", false),
        ("version", false),
    ];
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            found.unresolve(format!("`env` is given `{}`, made by an expansion", a.text));
            return args[i..].to_vec();
        }
        let t = a.text.as_str();
        let mut split: Option<Word> = None;
        let mut consumed = 1;
        if t == "--" {
            i += 1;
            break;
        } else if t == "-" {
            // Same as -i.
        } else if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let spec = Spec {
                long: LONG,
                short_with_arg: "",
            };
            let candidates = options::long_candidates(&spec, name);
            if candidates.is_empty() {
                found.unresolve(format!("`env` option `{t}` is not known"));
                return args[i..].to_vec();
            }
            let takes_arg = candidates
                .iter()
                .any(|c| LONG.iter().any(|(n, a)| n == c && *a) && *c != "block-signal");
            let value = match attached {
                Some(v) => Some(Word::literal(v)),
                None if takes_arg => {
                    consumed = 2;
                    args.get(i + 1).cloned()
                }
                None => None,
            };
            if candidates.contains(&"split-string") {
                match value {
                    Some(v) => split = Some(v),
                    None => {
                        found.unresolve("`env --split-string` without its string");
                        return args[i..].to_vec();
                    }
                }
            }
        } else if t.len() > 1 && t.starts_with('-') {
            let letters: Vec<char> = t[1..].chars().collect();
            for (k, c) in letters.iter().enumerate() {
                match c {
                    'i' | '0' | 'v' => {}
                    'u' | 'C' | 'S' | 'a' => {
                        let rest: String = letters[k + 1..].iter().collect();
                        let value = if rest.is_empty() {
                            consumed = 2;
                            args.get(i + 1).cloned()
                        } else {
                            Some(Word::literal(rest))
                        };
                        if *c == 'S' {
                            match value {
                                Some(v) => split = Some(v),
                                None => {
                                    found.unresolve("`env -S` without its string");
                                    return args[i..].to_vec();
                                }
                            }
                        }
                        break;
                    }
                    _ => {
                        found.unresolve(format!("`env` option `-{c}` is not known"));
                        return args[i..].to_vec();
                    }
                }
            }
        } else if let Some((name, _)) = t.split_once('=').filter(|(n, _)| word::is_identifier(n)) {
            if let Some(why) = variables::runs_programs(name) {
                found.unresolve(format!("setting {name} {why}"));
            }
        } else {
            break;
        }
        if let Some(s) = split {
            if s.dynamic {
                found.unresolve("the string of `env -S` is made by an expansion");
                return args[i..].to_vec();
            }
            let Some(parts) = word::env_split(&s.text) else {
                found.unresolve("the string of `env -S` expands variables or is unbalanced");
                return args[i..].to_vec();
            };
            // The split words stand where the option stood; env goes on reading options
            // and assignments from them.
            let mut again: Vec<Word> = parts.into_iter().map(Word::literal).collect();
            again.extend_from_slice(args.get(i + consumed..).unwrap_or(&[]));
            return env(&again, found, nesting + 1);
        }
        i += consumed;
    }
    match args.get(i..) {
        Some(rest) if !rest.is_empty() => strip(rest, found, nesting + 1),
        _ => vec![Word::literal("env")],
    }
}

/// `xargs [OPTION]... [COMMAND [ARG]...]`: the command, with the arguments it reads.
fn xargs(args: &[Word], found: &mut Found, nesting: usize) -> Vec<Word> {
    let next = skip_options(
        args,
        "adEIeLlnPs",
        "0oprtx",
        &[
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        &[
            "null",
            "open-tty",
            "interactive",
            "no-run-if-empty",
            "verbose",
            "exit",
            "show-limits",
        ],
    );
    let Some(k) = next else {
        found.unresolve("cannot tell which program `xargs` runs");
        return args.to_vec();
    };
    let mut run = match args.get(k..) {
        Some(rest) if !rest.is_empty() => strip(rest, found, nesting + 1),
        // Bare `xargs` runs `echo`.
        _ => vec![Word::literal("echo")],
    };
    run.push(Word::dynamic("(arguments read by xargs)"));
    run
}

/// `flock [options] FILE COMMAND [ARG]...`, `flock [options] FILE -c COMMAND`, `flock FD`.
fn flock(args: &[Word], whole: &[Word], found: &mut Found, nesting: usize) -> Vec<Word> {
    for (k, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        let script = if t == "-c" || t.starts_with("--comm") || t == "--command" {
            match t.split_once('=') {
                Some((_, v)) => Some(Word::literal(v)),
                None => args.get(k + 1).cloned(),
            }
        } else if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            let after: String = t.chars().skip_while(|c| *c != 'c').skip(1).collect();
            if after.is_empty() {
                args.get(k + 1).cloned()
            } else {
                Some(Word::literal(after))
            }
        } else {
            None
        };
        if let Some(s) = script {
            found.script(&s, "`flock -c`");
            return whole.to_vec();
        }
    }
    match skip_options(
        args,
        "wE",
        "sxenuoFv",
        &["timeout", "conflict-exit-code"],
        &[
            "shared",
            "exclusive",
            "nonblock",
            "unlock",
            "close",
            "no-fork",
            "verbose",
        ],
    ) {
        Some(k) if k + 1 < args.len() => strip(&args[k + 1..], found, nesting + 1),
        Some(_) => whole.to_vec(),
        None => {
            found.unresolve("cannot tell which program `flock` runs");
            whole.to_vec()
        }
    }
}

/// `watch [options] COMMAND…`: the words joined run through `sh -c`, or with `-x` directly.
fn watch(args: &[Word], whole: &[Word], found: &mut Found, nesting: usize) -> Vec<Word> {
    let exec = args
        .iter()
        .take_while(|a| a.text.starts_with('-'))
        .any(|a| a.text == "--exec" || !a.text.starts_with("--") && a.text.contains('x'));
    match skip_options(
        args,
        "nq",
        "bcdegtxpwrC",
        &["interval", "equexit"],
        &[
            "beep",
            "color",
            "no-color",
            "differences",
            "errexit",
            "chgexit",
            "no-title",
            "exec",
            "precise",
            "no-wrap",
            "no-rerun",
        ],
    ) {
        Some(k) if k < args.len() => {
            let rest = &args[k..];
            if exec {
                return strip(rest, found, nesting + 1);
            }
            if rest.iter().any(|w| w.dynamic) {
                found.unresolve("the command of `watch` is made by an expansion");
            } else {
                found.scripts.push(texts(rest).join(" "));
            }
            whole.to_vec()
        }
        Some(_) => whole.to_vec(),
        None => {
            found.unresolve("cannot tell which program `watch` runs");
            whole.to_vec()
        }
    }
}

/// `sh|bash|zsh|… [options] [-c SCRIPT | FILE | (stdin)] [ARG…]`. Options end at the first
/// operand: in `bash FILE -c`, `-c` is FILE's first argument and FILE is the script.
fn shell(program: &str, args: &[Word], found: &mut Found) {
    let mut c_flag = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            found.unresolve(format!(
                "`{program}` is given `{}`, made by an expansion",
                a.text
            ));
            return;
        }
        let t = a.text.as_str();
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            match long {
                "version" | "help" => return,
                "rcfile" | "init-file" => i += 1,
                "command" if program == "fish" => c_flag = true,
                _ if long.starts_with("command=") && program == "fish" => {
                    found.script(
                        &Word::literal(&long["command=".len()..]),
                        "`fish --command`",
                    );
                    return;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+'))
            && !flags.is_empty()
        {
            for c in flags.chars() {
                match c {
                    'c' if t.starts_with('-') => c_flag = true,
                    // `-o pipefail`, `-O extglob`: each takes the next word.
                    'o' | 'O' => i += 1,
                    's' if t.starts_with('-') => {
                        found.unresolve(format!(
                            "`{program} -s` reads its script from standard input"
                        ));
                        return;
                    }
                    'i' if t.starts_with('-') => {
                        found.unresolve(format!(
                            "an interactive `{program}` reads startup files and standard input"
                        ));
                        return;
                    }
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    let operand = args.get(i);
    if c_flag {
        if let Some(script) = operand {
            found.script(script, &format!("`{program} -c`"));
        }
        return;
    }
    match operand {
        None => found.unresolve(format!(
            "`{program}` without a script reads its commands from standard input"
        )),
        Some(file) if file.dynamic => found.unresolve(format!(
            "the script `{program}` runs is made by an expansion"
        )),
        Some(file) if reads_input(&file.text) => found.unresolve(format!(
            "`{program} {}` reads its commands from standard input or a descriptor",
            file.text
        )),
        // A script file: nobody has seen it; plan mode counts it as changing.
        Some(file) => found.change(format!("`{program}` runs the script `{}`", file.text)),
    }
}

/// Paths that name standard input or an open descriptor.
fn reads_input(path: &str) -> bool {
    path == "-"
        || path.starts_with("/dev/stdin")
        || path.starts_with("/dev/fd/")
        || path.starts_with("/dev/tcp/")
        || path.starts_with("/dev/udp/")
        || (path.starts_with("/proc/") && path.contains("/fd/"))
}

/// Programs whose options run other programs, read scripts, or write files.
fn program_options(program: &str, args: &[Word], found: &mut Found) {
    let strings = texts(args);
    let dynamic_arg = args.iter().any(|a| a.dynamic);
    match program {
        "eval" => {
            if dynamic_arg {
                found.unresolve("`eval` is given words made by expansions");
            } else {
                found.scripts.push(strings.join(" "));
            }
        }
        "source" | "." => {
            found.unresolve(format!("`{program}` runs a file's commands in this shell"))
        }
        "trap" => {
            let operands: Vec<&Word> = args
                .iter()
                .skip_while(|a| a.text == "--")
                .filter(|a| !matches!(a.text.as_str(), "-p" | "-l" | "-P"))
                .collect();
            if let Some(action) = operands.first()
                && operands.len() > 1
                && action.text != "-"
            {
                found.script(action, "`trap`");
            }
        }
        "alias" => {
            for a in args {
                if a.dynamic {
                    found.unresolve("an alias made by an expansion");
                } else if let Some((_, value)) = a.text.split_once('=') {
                    found.scripts.push(value.to_string());
                }
            }
        }
        "hash"
            if strings
                .iter()
                .any(|a| a.starts_with('-') && a.contains('p')) =>
        {
            found.unresolve("`hash -p` makes a name run another program")
        }
        "enable"
            if strings
                .iter()
                .any(|a| a.starts_with('-') && a.contains('f')) =>
        {
            found.unresolve("`enable -f` loads a builtin from a library")
        }
        "mapfile" | "readarray" if strings.iter().any(|a| a.starts_with("-C")) => {
            found.unresolve(format!("`{program} -C` runs a callback"))
        }
        "compgen" | "complete" => {
            for (k, a) in strings.iter().enumerate() {
                if a == "-C" {
                    if let Some(s) = args.get(k + 1) {
                        found.script(s, &format!("`{program} -C`"));
                    }
                } else if let Some(v) = a.strip_prefix("-C") {
                    found.scripts.push(v.to_string());
                }
            }
        }
        "find" => find(args, found),
        "fd" | "fdfind" => fd(args, found),
        "git" => git(args, found),
        "let" if strings.iter().any(|a| a.contains("$(") || a.contains('`')) => {
            found.unresolve("`let` evaluates text that holds a command")
        }
        "sort" => {
            let spec = Spec {
                long: &[
                    ("output", true),
                    ("compress-program", true),
                    ("check", false),
                    ("key", true),
                    ("field-separator", true),
                    ("buffer-size", true),
                    ("temporary-directory", true),
                    ("parallel", true),
                    ("batch-size", true),
                    ("files0-from", true),
                    ("random-source", true),
                    ("sort", true),
                    ("reverse", false),
                    ("numeric-sort", false),
                    ("unique", false),
                ],
                short_with_arg: "koStT",
            };
            let (opts, _) = options::read(&spec, &strings, false);
            for o in opts {
                match o.name.as_str() {
                    "o" | "output" => found.change("`sort -o` writes a file"),
                    "compress-program" => {
                        found.change("`sort --compress-program` runs a program");
                        program_value(o.value.as_deref(), found);
                    }
                    _ => {}
                }
            }
        }
        "rg" => {
            for (k, a) in strings.iter().enumerate() {
                for opt in ["--pre", "--hostname-bin"] {
                    if a == opt {
                        program_value(strings.get(k + 1).map(String::as_str), found);
                        found.change(format!("`rg {opt}` runs a program"));
                    } else if let Some(v) = a.strip_prefix(opt).and_then(|r| r.strip_prefix('=')) {
                        program_value(Some(v), found);
                        found.change(format!("`rg {opt}` runs a program"));
                    }
                }
            }
        }
        "tar" => tar(&strings, found),
        "less" => {
            for a in &strings {
                if a.starts_with('+') && a.contains(['!', '|']) {
                    found.unresolve("a `less` command that runs a shell command");
                } else if a == "-k"
                    || a.starts_with("--lesskey")
                    || (a.starts_with("-k") && !a.starts_with("--"))
                {
                    found.unresolve("a `less` key file can make it run commands");
                } else if a.starts_with("--log-file")
                    || a.starts_with("--LOG-FILE")
                    || (!a.starts_with("--") && a.starts_with('-') && a.contains(['o', 'O']))
                {
                    found.change("`less -o` writes a file");
                }
            }
        }
        "man" => {
            for a in &strings {
                if a.starts_with("-P")
                    || a.starts_with("--pager")
                    || a.starts_with("-H")
                    || a.starts_with("--html")
                    || a.starts_with("--preprocessor")
                    || a.starts_with("-p")
                {
                    found.unresolve("`man` is told which program to run");
                }
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            let uses_file = strings.iter().any(|a| {
                a == "-f" || a.starts_with("--file") || a == "-E" || a.starts_with("--exec")
            });
            let program_text = strings.iter().find(|a| !a.starts_with('-'));
            if !uses_file && let Some(text) = program_text {
                let pipes = text.replace("||", "");
                if text.contains("system") || pipes.contains('|') {
                    found.unresolve("an awk program that runs commands");
                }
            }
        }
        "date" => {
            let spec = Spec {
                long: &[
                    ("set", true),
                    ("date", true),
                    ("file", true),
                    ("reference", true),
                ],
                short_with_arg: "dfrs",
            };
            let (opts, _) = options::read(&spec, &strings, false);
            if opts.iter().any(|o| o.name == "s" || o.name == "set") {
                found.change("`date -s` sets the clock");
            }
        }
        "hostname"
            if strings
                .iter()
                .any(|a| !a.starts_with('-') || a.starts_with("-F") || a.starts_with("--file")) =>
        {
            found.change("`hostname NAME` sets the host name");
        }
        "uniq" => {
            // `uniq IN OUT` writes OUT.
            let mut operands = 0;
            let mut skip = false;
            for a in &strings {
                if std::mem::take(&mut skip) {
                    continue;
                }
                if matches!(a.as_str(), "-f" | "-s" | "-w") {
                    skip = true;
                } else if !a.starts_with('-') || a == "-" {
                    operands += 1;
                }
            }
            if operands > 1 {
                found.change("`uniq IN OUT` writes OUT");
            }
        }
        "tree"
            if strings
                .iter()
                .any(|a| !a.starts_with("--") && a.starts_with('-') && a.contains(['o', 'R'])) =>
        {
            found.change("`tree -o` writes a file");
        }
        "file"
            if strings.iter().any(|a| {
                a.starts_with("--comp")
                    || (!a.starts_with("--") && a.starts_with('-') && a.contains('C'))
            }) =>
        {
            found.change("`file -C` writes a file");
        }
        "ssh" | "scp" | "sftp" | "rsync"
            if strings.iter().any(|a| {
                let lower = a.to_ascii_lowercase();
                lower.contains("proxycommand")
                    || lower.contains("localcommand")
                    || lower.contains("knownhostscommand")
                    || a.starts_with("-F")
                    || a == "-e"
                    || a.starts_with("--rsh")
                    || a.starts_with("--rsync-path")
            }) =>
        {
            found.unresolve(format!("`{program}` is told to run a local command"));
        }
        _ => {}
    }
    match languages::said(program, &strings) {
        Some(Said::Runs(why)) => found.unresolve(why),
        Some(Said::Writes(why)) => found.change(why),
        None => {}
    }
    // Builtins that take a variable name evaluate a subscript in it: `unset 'a[$(cmd)]'`,
    // `test -v 'a[$(cmd)]'` and `let` run cmd.
    if NAME_TAKING.contains(&program) && strings.iter().any(|a| holds_subscript_command(a)) {
        found.unresolve(format!(
            "`{program}` evaluates a subscript that holds a command"
        ));
    }
    // A read-only program given a word made by an expansion: it may be an option that writes.
    if dynamic_arg
        && matches!(
            program,
            "sort"
                | "git"
                | "find"
                | "tree"
                | "rg"
                | "less"
                | "date"
                | "file"
                | "hostname"
                | "uniq"
        )
    {
        found.change(format!("`{program}` is given words made by expansions"));
    }
}

/// Builtins that read a variable name (and so evaluate a subscript in it).
const NAME_TAKING: &[&str] = &[
    "unset",
    "test",
    "[",
    "let",
    "read",
    "printf",
    "mapfile",
    "readarray",
    "wait",
    "getopts",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "compgen",
];

/// `a[$(cmd)]`, `x[`cmd`]`: text that runs cmd where bash evaluates it as a subscript.
pub fn holds_subscript_command(text: &str) -> bool {
    text.find('[')
        .is_some_and(|at| text[at..].contains("$(") || text[at..].contains('`'))
}

/// A program named by an option (`rg --pre PROG`): a command of its own.
fn program_value(value: Option<&str>, found: &mut Found) {
    match value {
        Some(v) if !v.is_empty() => found.commands.push(vec![Word::literal(v)]),
        _ => found.unresolve("a program option without its program"),
    }
}

/// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`): each command is a unit.
fn find(args: &[Word], found: &mut Found) {
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end].text != ";" && args[end].text != "+" {
                end += 1;
            }
            if start < end {
                found.commands.push(args[start..end].to_vec());
            } else {
                found.unresolve(format!("`find {t}` without a command"));
            }
            i = end;
        } else if matches!(t, "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls") {
            found.change(format!("`find {t}` writes"));
        }
        i += 1;
    }
}

/// `fd … -x CMD …` (and `--exec`, `-X`, `--exec-batch`): the rest of the line up to `;` is
/// a command run for each file found.
fn fd(args: &[Word], found: &mut Found) {
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if matches!(t, "-x" | "--exec" | "-X" | "--exec-batch") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end].text != ";" {
                end += 1;
            }
            if start < end {
                found.commands.push(args[start..end].to_vec());
            } else {
                found.unresolve(format!("`fd {t}` without a command"));
            }
            i = end;
        }
        i += 1;
    }
}

/// `tar` options that run commands: `--to-command`, `-I`/`--use-compress-program`,
/// `-F`/`--info-script`/`--new-volume-script`, `--checkpoint-action=exec=`, remote shells.
fn tar(args: &[String], found: &mut Found) {
    const SCRIPT: &[&str] = &["to-command", "info-script", "new-volume-script"];
    const PROGRAM: &[&str] = &["use-compress-program", "rsh-command", "rmt-command"];
    for (k, a) in args.iter().enumerate() {
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, args.get(k + 1).cloned()),
            };
            if name.len() >= 3 && SCRIPT.iter().any(|s| s.starts_with(name)) {
                match value {
                    Some(v) => found.scripts.push(v),
                    None => found.unresolve("a tar script option without its script"),
                }
            } else if name.len() >= 3 && PROGRAM.iter().any(|s| s.starts_with(name)) {
                match value {
                    Some(v) => found.scripts.push(v),
                    None => found.unresolve("a tar program option without its program"),
                }
            } else if name.starts_with("checkpoint-a") && long.contains("exec") {
                found.unresolve("`tar --checkpoint-action=exec` runs a command");
            }
        } else if (k == 0 || a.starts_with('-')) && a.contains(['I', 'F']) {
            found.unresolve("a tar option that names a program to run");
        }
    }
}

/// `git`: options that name programs or configuration make it unresolved; options of
/// read-only subcommands that write or run a program are noted; commands given to git
/// (`grep -O`, `rebase --exec`, `submodule foreach`, `bisect run`) are parsed.
fn git(args: &[Word], found: &mut Found) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            found.unresolve(format!("`git` is given `{}`, made by an expansion", a.text));
            return;
        }
        let t = a.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        if t.starts_with("-c") || t.starts_with("--config-env") {
            found.unresolve("`git -c`/`--config-env` can name programs git runs");
            return;
        }
        if t.starts_with("--exec-path=")
            || t.starts_with("--git-dir")
            || t.starts_with("--work-tree")
        {
            found.unresolve(format!(
                "`git {t}` points git at other programs or configuration"
            ));
            return;
        }
        if t == "--exec-path" {
            return;
        }
        i += if matches!(t, "-C" | "--namespace" | "--super-prefix" | "--list-cmds") {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[i + 1..];
    let strings = texts(rest);
    let has_long = |names: &[&str]| {
        strings.iter().any(|a| {
            a.strip_prefix("--").is_some_and(|long| {
                let name = long.split('=').next().unwrap_or("");
                name.len() >= 2 && names.iter().any(|n| n.starts_with(name))
            })
        })
    };
    match sub.text.as_str() {
        "grep" => {
            for (k, a) in strings.iter().enumerate() {
                if let Some(long) = a.strip_prefix("--") {
                    let (name, value) = match long.split_once('=') {
                        Some((n, v)) => (n, Some(v)),
                        None => (long, None),
                    };
                    if name.len() >= 2 && "open-files-in-pager".starts_with(name) {
                        found.change("`git grep -O` runs a pager");
                        if let Some(v) = value {
                            found.scripts.push(v.to_string());
                        }
                    }
                } else if a.starts_with('-') && !a.starts_with("--") {
                    if let Some(pos) = a.find('O') {
                        found.change("`git grep -O` runs a pager");
                        let value = &a[pos + 1..];
                        if !value.is_empty() {
                            found.scripts.push(value.to_string());
                        }
                    }
                    let _ = k;
                }
            }
        }
        "diff" | "log" | "show" | "whatchanged" | "format-patch" | "range-diff"
            if has_long(&["output", "ext-diff", "textconv", "output-directory"]) =>
        {
            found.change("a git option that writes a file or runs a diff program");
        }
        "rebase" => {
            for (k, a) in strings.iter().enumerate() {
                if a == "-x" || a == "--exec" {
                    if let Some(s) = rest.get(k + 1) {
                        found.script(s, "`git rebase --exec`");
                    }
                } else if let Some(v) = a.strip_prefix("--exec=").or_else(|| a.strip_prefix("-x"))
                    && !v.is_empty()
                {
                    found.scripts.push(v.to_string());
                }
            }
        }
        "submodule" if strings.first().map(String::as_str) == Some("foreach") => {
            if let Some(s) = rest.iter().skip(1).find(|w| !w.text.starts_with("--")) {
                found.script(s, "`git submodule foreach`");
            }
        }
        "bisect" if strings.first().map(String::as_str) == Some("run") && rest.len() > 1 => {
            found.commands.push(rest[1..].to_vec());
        }
        "config" => {
            const RUNS: &[&str] = &[
                "fsmonitor",
                "pager",
                "editor",
                "sshcommand",
                "askpass",
                "textconv",
                "external",
                "hookspath",
                "alias.",
                "filter.",
                "program",
                "helper",
                "gitproxy",
                "command",
                "driver",
                "uploadpack",
                "include",
                "exec",
                "tool",
                "cmd",
                "browser",
                "worktree",
            ];
            if rest.iter().any(|w| w.dynamic)
                || strings.iter().any(|a| {
                    let lower = a.to_ascii_lowercase();
                    RUNS.iter().any(|k| lower.contains(k))
                })
            {
                found.unresolve("`git config` sets a key that names a program git runs");
            }
        }
        "difftool" | "mergetool"
            if (has_long(&["extcmd", "tool"])
                || strings
                    .iter()
                    .any(|a| a.starts_with("-x") || a.starts_with("-t"))) =>
        {
            found.unresolve("`git difftool` is told which program to run");
        }
        _ => {}
    }
}
