//! What a shell started as a program runs (`sh -c SCRIPT`, `bash FILE`, `zsh` reading
//! standard input): the shells' own command line, read up to the script or the file it
//! names. Apart from the wrappers (`runs.rs`) because a shell ends the chain of programs:
//! what it runs is a script to parse, not a command to unwrap.

use super::Word;
use super::found::Found;

/// Programs read as shells.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "rbash", "yash", "posh", "fish", "csh",
    "tcsh", "ksh93", "pdksh", "oksh", "loksh",
];

/// `sh|bash|zsh|… [options] [-c SCRIPT | FILE | (stdin)] [ARG…]`. Options end at the first
/// operand: in `bash FILE -c`, `-c` is FILE's first argument and FILE is the script.
pub(super) fn shell(program: &str, args: &[Word], found: &mut Found) {
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
