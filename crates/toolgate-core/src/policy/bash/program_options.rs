//! Programs whose options run other programs, read scripts or write files: `eval`,
//! `source`, `trap`, `alias`, `find -exec`, `fd -x`, `git`, `tar`, `sort -o`, `rg --pre`,
//! `less`, `man`, `awk` and the builtins that evaluate a subscript in a name. Called by
//! [`super::runs`] for the program a command runs once its wrappers are removed.

use super::Word;
use super::found::{Found, texts};
use super::languages::{self, Said};
use super::options::{self, Spec};

/// Programs whose options run other programs, read scripts, or write files.
pub(super) fn program_options(program: &str, args: &[Word], found: &mut Found) {
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
