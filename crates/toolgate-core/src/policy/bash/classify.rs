//! The deny list and the destructive commands, judged on a unit's words as run, and what
//! its redirections write.

use super::Unit;
use super::analysis::Redirect;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// On the deny list; the text names the pattern (`rm -rf /`, `sudo`, …).
    Denied(&'static str),
    /// Destructive; the text names why (`rm`, `chmod 777`, `redirection into /etc/`).
    Destructive(&'static str),
    Ordinary,
}

/// The class of a command from its words as run.
pub fn classify(words: &[String]) -> Class {
    let Some(program) = words.first().map(String::as_str) else {
        return Class::Ordinary;
    };
    let args = &words[1..];
    match program {
        "sudo" | "doas" | "pkexec" | "run0" => return Class::Denied("sudo"),
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
        } else if !options_done
            && a.starts_with("--")
            && ["--recursive", "--no-preserve-root"]
                .iter()
                .any(|long| a.len() > 3 && long.starts_with(a.as_str()))
        {
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

pub fn is_under_etc(target: &str) -> bool {
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

/// Records the files `redirects` write on `unit`, and a write into /etc/ as destructive.
pub fn apply_redirects(unit: &mut Unit, redirects: &[Redirect]) {
    for r in redirects {
        if let Some(file) = r.written_file() {
            if is_under_etc(file) && matches!(unit.class, Class::Ordinary) {
                unit.class = Class::Destructive("redirection into /etc/");
            }
            unit.writes_to.push(file.to_string());
        }
    }
}
