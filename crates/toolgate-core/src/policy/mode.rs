//! What the permission mode changes in a decision. Pure, like the rest of the policy: the
//! mode arrives in [`PolicyContext`](super::PolicyContext) and only changes the guard a
//! call meets (the verdict used when no rule decides), never a rule:
//!
//! - deny rules and the bash deny list deny in every mode, and an ask rule asks in every
//!   mode except that plan refuses a call that would change something before any ask;
//! - `plan`: writes and edits, bash lines that are not read-only ([`bash_effect`]) and MCP
//!   tools no allow rule (or grant) covers are refused, with a result that tells the model;
//! - `ask`: write_file, edit_file and every bash command ask unless an allow rule covers it;
//! - `accept-edits`: bash commands that only edit files inside the workspace
//!   ([`WORKSPACE_EDITS`], every path inside) run without asking, `rm` included;
//! - `auto`: the destructive-bash guard, unlisted MCP tools and resource reads run without
//!   asking. Files outside the workspace, toolgate's own configuration, unparsable bash and
//!   unresolved paths still ask: they are where the sandbox does not reach.

use std::path::{Component, Path, PathBuf};

use super::bash::Unit;
use super::{Decision, RuleSource, Verdict};
use crate::protocol::PermissionMode;

/// Programs that only read (with no option that writes, see [`writes_despite_program`]).
pub const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "wc",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    "stat",
    "file",
    "which",
    "type",
    "whoami",
    "id",
    "date",
    "uname",
    "hostname",
    "du",
    "df",
    "tree",
    "find",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "sha256sum",
    "sha1sum",
    "md5sum",
    "nl",
    "od",
    "jq",
    "env",
    "printenv",
    "sort",
    "column",
    "less",
    "more",
    "eval",
    "command",
    ":",
    "uniq",
    "tac",
    "rev",
    "paste",
    "join",
    "fold",
    "seq",
    "sleep",
    "nproc",
    "cksum",
    "sha512sum",
    "b2sum",
    "strings",
];

/// git subcommands that only read.
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "grep",
    "describe",
];

/// Programs that edit files and nothing else; in accept-edits mode they run without asking
/// when every path they name is inside the workspace.
pub const WORKSPACE_EDITS: &[&str] = &["mkdir", "touch", "mv", "cp", "rm", "rmdir", "unlink"];

/// What one command of a bash line does to the file system, as far as its words say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BashEffect {
    /// Reads only (no output redirection into a file).
    ReadOnly,
    /// Edits files, every one inside the workspace.
    WorkspaceEdit,
    /// Anything else, or unknown.
    Changes,
}

/// How `unit` (one command of a bash line) touches files. Shells given `-c`, `eval`,
/// `env`, `xargs` and `find -exec` count as read-only themselves: what they run are units
/// of their own, judged the same way; `sh script.sh` runs a script nobody has seen, so it
/// changes. A unit the analysis could not resolve changes.
pub fn bash_effect(unit: &Unit, workspace: &Path) -> BashEffect {
    if unit.unresolved.is_some() {
        return BashEffect::Changes;
    }
    let words = unit.texts();
    let Some(program) = words.first().map(String::as_str) else {
        return if unit.writes_to.is_empty() {
            BashEffect::ReadOnly
        } else if unit.writes_to.iter().all(|t| inside(t, workspace)) {
            BashEffect::WorkspaceEdit
        } else {
            BashEffect::Changes
        };
    };
    if unit.words.first().is_some_and(|w| w.dynamic) {
        return BashEffect::Changes;
    }
    let args = &words[1..];
    let reads_only = match program {
        "git" => {
            args.first()
                .is_some_and(|sub| GIT_READ_ONLY.contains(&sub.as_str()))
                && !writes_despite_program(unit)
        }
        // The script of `-c` is parsed into units of its own; a script file or standard
        // input is not read-only (the analysis marks those).
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh" => {
            !writes_despite_program(unit)
                && args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
        }
        p => READ_ONLY.contains(&p) && !writes_despite_program(unit),
    };
    if reads_only && unit.writes_to.is_empty() {
        return BashEffect::ReadOnly;
    }
    let edits_only = (reads_only || WORKSPACE_EDITS.contains(&program)) && unit.changes.is_none();
    let paths_inside = unit.words[1..]
        .iter()
        .all(|w| !w.dynamic || !w.text.contains('$'))
        && args
            .iter()
            .filter(|a| !a.starts_with('-') || a.contains('='))
            .map(|a| a.split_once('=').map_or(a.as_str(), |(_, v)| v))
            .chain(unit.writes_to.iter().map(String::as_str))
            .all(|path| inside(path, workspace));
    if edits_only && paths_inside {
        BashEffect::WorkspaceEdit
    } else {
        BashEffect::Changes
    }
}

/// Whether a read-only program writes a file or runs another program here: the analysis
/// reads each program's options as its parser does (`sort -of f`, `sort --outp=f`, `git
/// grep -Ocmd`, `git diff --ext-diff`, `rg --pre`, `find -fprint`, `tree -o`, `less -o`)
/// and notes the ones that write or run something.
fn writes_despite_program(unit: &Unit) -> bool {
    unit.changes.is_some()
}

/// Whether `path`, as a bash word, names something inside the workspace (lexically; a word
/// with `~`, `$` or a backtick is unknown, so not inside). The workspace itself is not
/// "inside": `rm -r .` is not an edit of files in it.
fn inside(path: &str, workspace: &Path) -> bool {
    if path.is_empty() || path.contains(['~', '$', '`']) {
        return false;
    }
    let absolute = if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        workspace.join(path)
    };
    let mut normal = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.starts_with(workspace) && normal != workspace
}

/// A verdict the mode reached (the audit record's decider names the mode).
pub(super) fn by_mode(mode: PermissionMode, decision: Decision) -> Verdict {
    Verdict::new(decision, format!("{mode} mode"), RuleSource::Mode(mode))
}

/// The refusal plan mode gives; `what` says what the call would have done.
pub fn plan_refusal(what: &str) -> Verdict {
    by_mode(
        PermissionMode::Plan,
        Decision::Deny {
            why: format!(
                "toolgate is in plan mode (read-only): {what}, so it was not run. Keep to \
                 reading; when the plan is ready, present it by calling exit_plan_mode with \
                 {{\"plan\": \"...\"}} and the user decides whether to leave plan mode"
            ),
        },
    )
}

/// The question ask mode puts where the call would otherwise run.
pub(super) fn ask_mode(what: &str) -> Verdict {
    by_mode(
        PermissionMode::Ask,
        Decision::Ask {
            why: format!("ask mode: {what} asks unless an allow rule covers it"),
        },
    )
}

/// What a mode lets run without asking.
pub(super) fn allowed_by(mode: PermissionMode) -> Verdict {
    by_mode(mode, Decision::Allow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bash::analyze;

    fn effects(line: &str) -> Vec<BashEffect> {
        analyze(line)
            .unwrap()
            .iter()
            .map(|u| bash_effect(u, Path::new("/work/ws")))
            .collect()
    }

    #[test]
    fn reading_commands_are_read_only_and_redirections_change() {
        assert_eq!(effects("ls -la | grep x"), vec![BashEffect::ReadOnly; 2]);
        assert_eq!(effects("git status"), vec![BashEffect::ReadOnly]);
        assert_eq!(
            effects("cat a 2>&1 > /dev/null"),
            vec![BashEffect::ReadOnly]
        );
        assert_eq!(
            effects("echo hi > out.txt"),
            vec![BashEffect::WorkspaceEdit]
        );
        assert_eq!(effects("echo hi > /tmp/out.txt"), vec![BashEffect::Changes]);
        assert_eq!(effects("git commit -m x"), vec![BashEffect::Changes]);
        assert_eq!(effects("find . -delete"), vec![BashEffect::Changes]);
        assert_eq!(effects("python3 x.py"), vec![BashEffect::Changes]);
        assert_eq!(effects("bash script.sh"), vec![BashEffect::Changes]);
        assert_eq!(effects("bash --norc script.sh"), vec![BashEffect::Changes]);
        assert_eq!(
            effects("git diff --output=x.patch"),
            vec![BashEffect::Changes]
        );
        // The program `--pre` names is a unit of its own.
        assert_eq!(
            effects("rg --pre=./x foo"),
            vec![BashEffect::Changes, BashEffect::Changes]
        );
        assert_eq!(
            effects("sh -c 'ls'"),
            vec![BashEffect::ReadOnly, BashEffect::ReadOnly]
        );
    }

    #[test]
    fn workspace_edits_need_every_path_inside() {
        assert_eq!(effects("mkdir -p src/a"), vec![BashEffect::WorkspaceEdit]);
        assert_eq!(effects("rm -f build/x.o"), vec![BashEffect::WorkspaceEdit]);
        assert_eq!(effects("mv a /work/ws/b"), vec![BashEffect::WorkspaceEdit]);
        assert_eq!(effects("cp a ../b"), vec![BashEffect::Changes]);
        assert_eq!(effects("rm -rf ."), vec![BashEffect::Changes]);
        assert_eq!(effects("rm ~/x"), vec![BashEffect::Changes]);
        assert_eq!(effects("touch $HOME/x"), vec![BashEffect::Changes]);
    }
}
