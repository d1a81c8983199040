//! What a simple command runs: wrappers removed (`env`, `nice`, `timeout`, `xargs`, …),
//! the scripts of `sh -c`, `eval`, `env -S`, `trap`, `alias`, `watch` and `git grep -O`
//! parsed, the commands of `find -exec` and program-valued options (`rg --pre`, `sort
//! --compress-program`) made units of their own, and options of read-only programs that
//! write or run something noted for plan mode.

use super::analysis::{Analysis, Redirect};
use super::classify::{self, apply_redirects};
use super::found::{Found, texts};
use super::options::{self, Spec};
use super::program_options::program_options;
use super::shells;
use super::variables;
use super::word;
use super::{Unit, Word, basename};

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
            p if shells::SHELLS.contains(&p) => {
                shells::shell(p, rest, found);
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
