//! Issue 41 items 1 and 2: lines that walked past a deny rule or plan mode, more hostile
//! spellings of the same kinds, and ordinary lines that must still run.

use super::*;
use crate::protocol::PermissionMode;

fn plan() -> PolicyContext<'static> {
    PolicyContext::new(Path::new("/w")).with_mode(PermissionMode::Plan)
}

fn deny_rm() -> Policy {
    with_rules(&[(RuleList::Deny, "Bash(rm:*)", user())])
}

/// Every probe of item 1, as the issue lists them: plan mode refuses each.
const ISSUE_PLAN_PROBES: &[&str] = &[
    "env -S'touch f'",
    "env --split-string='touch f'",
    "echo ${x:-$(touch f)}",
    "echo $(( $(touch f; echo 1) + 1 ))",
    "sort -of notes.txt",
    "sort --outp=f notes.txt",
    "echo 'touch f' | bash /dev/stdin -c",
    "echo 'touch f' | BASH_ENV=/dev/stdin bash -c true",
    "LESSOPEN='|touch f; cat %s' less notes.txt",
    "GIT_EXTERNAL_DIFF='touch f;:' git diff --no-index a b",
    "git grep --no-index -O'touch f;true' alpha",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch f;false' git status",
];

/// More spellings of the same kinds: plan mode refuses each.
const MORE_PLAN_PROBES: &[&str] = &[
    "env -S 'touch f'",
    "env -Stouch",
    "env -iS'touch f'",
    "env -i -S 'touch f'",
    "env --split-string 'touch f'",
    "env --split='touch f'",
    "env --sp 'touch f'",
    "env -S'env -S\"touch f\"'",
    "env -- touch f",
    "env A=1 touch f",
    "echo ${x:=$(touch f)}",
    "echo \"${x:-$(touch f)}\"",
    "echo ${x:-`touch f`}",
    "echo $[ $(touch f) + 1 ]",
    "echo $(( x[$(touch f)] ))",
    "(( $(touch f) ))",
    "[[ -n $(touch f) ]]",
    "cat <(touch f)",
    "tee >(touch f) < notes.txt",
    "cat <<EOF\n$(touch f)\nEOF",
    "cat <<EOF\n`touch f`\nEOF",
    "cat <<< \"$(touch f)\"",
    "x=$(touch f)",
    "export x=$(touch f)",
    "declare y=\"$(touch f)\"",
    "readonly z=`touch f`",
    "local w=$(touch f)",
    "for i in $(touch f); do echo $i; done",
    "case $(touch f) in *) echo;; esac",
    "if true; then touch f; fi",
    "while false; do :; done; until true; do touch f; done",
    "{ touch f; }",
    "( touch f )",
    "! touch f",
    "g() { touch f; }; g",
    "sort -o f notes.txt",
    "sort -rof notes.txt",
    "sort --output=f notes.txt",
    "sort --o f notes.txt",
    "sort --output f notes.txt",
    "sort --compress-program=touch notes.txt",
    "bash -c 'touch f'",
    "bash -xc 'touch f'",
    "bash -o pipefail -c 'touch f'",
    "sh -ec 'touch f'",
    "zsh -c 'touch f'",
    "bash -s < script.sh",
    "bash < script.sh",
    "echo 'touch f' | bash",
    "echo 'touch f' | sh -",
    "echo 'touch f' | bash /proc/self/fd/0",
    "bash <<< 'touch f'",
    "source script.sh",
    ". ./script.sh",
    "eval 'touch f'",
    "eval touch f",
    "eval \"$CMD\"",
    "$CMD f",
    "\"$@\"",
    "${CMD:-touch} f",
    "$(echo touch) f",
    "`echo touch` f",
    "echo notes.txt | xargs touch",
    "find . -name x -exec touch {} \\;",
    "find . -execdir touch f \\;",
    "find . -fprint f",
    "nice -n 5 touch f",
    "timeout 5 touch f",
    "timeout -s KILL 5 touch f",
    "nohup touch f",
    "stdbuf -o0 touch f",
    "setsid touch f",
    "ionice -c 3 touch f",
    "taskset 1 touch f",
    "flock /tmp/l touch f",
    "flock /tmp/l -c 'touch f'",
    "time touch f",
    "command touch f",
    "builtin eval 'touch f'",
    "exec touch f",
    "busybox touch f",
    "t\\\nouch f",
    "$'\\x74ouch' f",
    "/usr/bin/t?uch f",
    "{touch,f}",
    "BASH_ENV=x bash -c true",
    "export BASH_ENV=x; bash -c true",
    "env BASH_ENV=x bash -c true",
    "ENV=x sh -c true",
    "PAGER='touch f' git log",
    "GIT_PAGER='touch f' git log",
    "MANPAGER='touch f' man ls",
    "LD_PRELOAD=./x.so ls",
    "PATH=.:$PATH ls",
    "GIT_DIR=/tmp/x git status",
    "GIT_SSH_COMMAND='touch f' git status",
    "env GIT_CONFIG_COUNT=1 git status",
    "git -c core.pager='touch f' log",
    "git --config-env=core.pager=X log",
    "git --exec-path=/tmp git status",
    "git grep -O'touch f' x",
    "git grep --open-files-in-pager='touch f' x",
    "git grep --open='touch f' x",
    "git diff --ext-diff",
    "git diff --textconv a b",
    "git log --output=f",
    "git show --outp=f",
    "rg --pre ./x foo",
    "rg --pre=touch foo",
    "less -o f notes.txt",
    "less '+!touch f' notes.txt",
    "tree -o f",
    "trap 'touch f' EXIT",
    "alias x='touch f'",
    "watch -n 1 touch f",
    "awk 'BEGIN{system(\"touch f\")}'",
    "x='a[$(touch f)]'; echo $((x))",
    "date -s 2020-01-01",
    "tar --to-command='touch f' -xf a.tar",
];

#[test]
fn plan_mode_refuses_every_probe() {
    let p = Policy::default();
    for line in ISSUE_PLAN_PROBES.iter().chain(MORE_PLAN_PROBES) {
        let v = bash_in(&p, line, &plan());
        assert_eq!(kind(&v), "deny", "{line}: {v:?}");
        assert_eq!(v.source, RuleSource::Mode(PermissionMode::Plan), "{line}");
    }
}

/// Item 2 and more: with `Bash(rm:*)` denied, none of these runs (deny, or ask when the
/// command cannot be checked), in default and in auto mode.
const RM_PROBES: &[(&str, &str)] = &[
    ("env -S'rm v1.txt'", "deny"),
    ("echo ${x:-$(rm v2.txt)}", "deny"),
    ("env -S 'rm v1.txt'", "deny"),
    ("env -iS'rm v1.txt'", "deny"),
    ("env --split-string='rm v1.txt'", "deny"),
    ("env --split-string 'rm v1.txt'", "deny"),
    ("env --split='rm v1.txt'", "deny"),
    ("env -u X -S'rm v1.txt'", "deny"),
    ("echo \"${x:-$(rm v2.txt)}\"", "deny"),
    ("echo ${x:-`rm v2.txt`}", "deny"),
    ("echo ${x#$(rm v2.txt)}", "deny"),
    ("echo $(( $(rm v1.txt; echo 1) + 1 ))", "deny"),
    ("echo $[ $(rm v1.txt) ]", "deny"),
    ("cat <(rm v1.txt)", "deny"),
    ("cat <<EOF\n$(rm v1.txt)\nEOF", "deny"),
    ("cat <<EOF\n`rm v1.txt`\nEOF", "deny"),
    ("x=$(rm v1.txt)", "deny"),
    ("declare -x y=$(rm v1.txt)", "deny"),
    ("bash -c 'rm v1.txt'", "deny"),
    ("bash -xc 'rm v1.txt'", "deny"),
    ("bash -o pipefail -c 'rm v1.txt'", "deny"),
    ("sh -c \"sh -c 'rm v1.txt'\"", "deny"),
    ("eval 'rm v1.txt'", "deny"),
    ("eval rm v1.txt", "deny"),
    ("ls | xargs rm", "deny"),
    ("ls | xargs -0 -n1 rm -f", "deny"),
    ("find . -name v1.txt -exec rm {} +", "deny"),
    ("find . -name v1.txt -ok rm {} \\;", "deny"),
    ("nice -n5 rm v1.txt", "deny"),
    ("nice -5 rm v1.txt", "deny"),
    ("timeout 5s rm v1.txt", "deny"),
    ("timeout --signal=KILL 5 rm v1.txt", "deny"),
    ("nohup rm v1.txt", "deny"),
    ("stdbuf -oL rm v1.txt", "deny"),
    ("setsid -f rm v1.txt", "deny"),
    ("ionice -c2 -n7 rm v1.txt", "deny"),
    ("chrt -o 0 rm v1.txt", "deny"),
    ("taskset -c 0 rm v1.txt", "deny"),
    ("flock /tmp/l rm v1.txt", "deny"),
    ("flock -x /tmp/l -c 'rm v1.txt'", "deny"),
    ("time -p rm v1.txt", "deny"),
    ("command rm v1.txt", "deny"),
    ("builtin eval rm v1.txt", "deny"),
    ("exec rm v1.txt", "deny"),
    ("busybox rm v1.txt", "deny"),
    ("\\rm v1.txt", "deny"),
    ("'rm' v1.txt", "deny"),
    ("\"rm\" v1.txt", "deny"),
    ("r\"m\" v1.txt", "deny"),
    ("$'rm' v1.txt", "deny"),
    ("$'\\x72m' v1.txt", "deny"),
    ("$'\\162\\155' v1.txt", "deny"),
    ("r\\\nm v1.txt", "deny"),
    ("/bin/rm v1.txt", "deny"),
    ("./rm v1.txt", "deny"),
    ("trap 'rm v1.txt' EXIT", "deny"),
    ("alias x='rm v1.txt'", "deny"),
    ("watch rm v1.txt", "deny"),
    ("git grep -O'rm v1.txt' x", "deny"),
    ("rg --pre rm x", "deny"),
    ("tar --to-command='rm v1.txt' -xf a.tar", "deny"),
    ("f() { rm v1.txt; }; f", "deny"),
    ("if true; then rm v1.txt; fi", "deny"),
    ("true && { rm v1.txt; }", "deny"),
    ("coproc rm v1.txt", "deny"),
    ("compgen -C 'rm v1.txt' x", "deny"),
    ("cat <<E | rm v1.txt\nx\nE", "deny"),
    ("unset 'a[$(rm v1.txt)]'", "ask"),
    ("git config core.fsmonitor 'rm v1.txt'; git status", "ask"),
    // Cannot be checked: asks.
    ("$CMD v1.txt", "ask"),
    ("${X:-rm} v1.txt", "ask"),
    ("$(echo rm) v1.txt", "ask"),
    ("`echo rm` v1.txt", "ask"),
    ("r? v1.txt", "ask"),
    ("/bin/r[m] v1.txt", "ask"),
    ("{rm,v1.txt}", "ask"),
    ("eval \"$X\"", "ask"),
    ("bash -c \"$X\"", "ask"),
    ("env -S\"$X\"", "ask"),
    ("echo 'rm v1.txt' | bash", "ask"),
    ("echo 'rm v1.txt' | bash /dev/stdin -c", "ask"),
    ("echo 'rm v1.txt' | bash -s", "ask"),
    ("bash < x.sh", "ask"),
    ("source x.sh", "ask"),
    ("echo 'rm v1.txt' | BASH_ENV=/dev/stdin bash -c true", "ask"),
    (
        "GIT_EXTERNAL_DIFF='rm v1.txt;:' git diff --no-index a b",
        "ask",
    ),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm v1.txt' git status",
        "ask",
    ),
    ("LESSOPEN='|rm v1.txt' less notes.txt", "ask"),
    ("git -c core.pager='rm v1.txt' log", "ask"),
    ("PATH=/tmp/evil:$PATH ls", "ask"),
    ("export PAGER='rm v1.txt'; git log", "ask"),
    ("rm $(echo v1.txt)", "deny"),
    ("x='a[$(rm v1.txt)]'; echo $((x))", "ask"),
    ("strace -o /dev/null rm v1.txt", "ask"),
    ("awk 'BEGIN{system(\"rm v1.txt\")}'", "ask"),
    // Programs whose own languages run commands (sed's `e`, vim's `!`, ed, gdb, zip -TT)
    // and fd's `-x`, found by a second look after the grammar landed.
    ("sed 'e rm v1.txt' notes", "ask"),
    ("sed -n '1s/x/rm v1.txt/e' notes", "ask"),
    ("sed --expression='1{e rm v1.txt\n}' notes", "ask"),
    ("sed -f script.sed notes", "ask"),
    ("fd -x rm", "deny"),
    ("fd . -X rm -f", "deny"),
    ("fd --exec rm {} ';'", "deny"),
    ("vim -es -c '!rm v1.txt' -c q", "ask"),
    ("echo '!rm v1.txt' | ed", "ask"),
    ("gdb -batch -ex 'shell rm v1.txt'", "ask"),
    ("zip a.zip x -T -TT 'rm v1.txt'", "ask"),
];

#[test]
fn a_deny_rule_holds_against_every_probe() {
    let p = deny_rm();
    for mode in [
        PermissionMode::Default,
        PermissionMode::Auto,
        PermissionMode::AcceptEdits,
    ] {
        let c = PolicyContext::new(Path::new("/w")).with_mode(mode);
        for (line, expected) in RM_PROBES {
            let v = bash_in(&p, line, &c);
            assert_eq!(kind(&v), *expected, "{mode} {line}: {v:?}");
        }
    }
}

#[test]
fn unresolved_commands_never_run_on_an_allow_rule_or_a_grant() {
    let p = with_rules(&[(RuleList::Allow, "Bash", user())]);
    let granted = grants(&["bash"]);
    let c = PolicyContext::new(Path::new("/w"))
        .with_mode(PermissionMode::Auto)
        .with_grants(&granted);
    for line in [
        "$CMD v1.txt",
        "echo x | bash",
        "BASH_ENV=f bash -c true",
        "eval \"$X\"",
    ] {
        assert_eq!(kind(&bash_in(&p, line, &c)), "ask", "{line}");
    }
    // The same allow rule lets a resolved line run.
    assert_eq!(kind(&bash_in(&p, "echo hi", &c)), "allow");
}

#[test]
fn dynamic_words_that_may_match_a_deny_rule_ask() {
    let p = with_rules(&[(RuleList::Deny, "Bash(git push:*)", user())]);
    assert_eq!(kind(&bash(&p, "git $sub origin")), "ask");
    assert_eq!(kind(&bash(&p, "git push $remote")), "deny");
    assert_eq!(kind(&bash(&p, "git status $x")), "allow");
    // An allow rule covers only what its known words say.
    let p = with_rules(&[(RuleList::Allow, "Bash(git status:*)", user())]);
    let ask = PolicyContext::new(Path::new("/w")).with_mode(PermissionMode::Ask);
    assert_eq!(kind(&bash_in(&p, "git status $x", &ask)), "allow");
    assert_eq!(kind(&bash_in(&p, "git $x", &ask)), "ask");
}

/// Ordinary lines keep running, in default mode and (being read-only) in plan mode.
#[test]
fn ordinary_lines_stay_allowed() {
    let p = deny_rm();
    let plan_ok = [
        "ls -la | grep x",
        "git status",
        "echo \"$(date)\"",
        "cat <<EOF\nhello $(date)\nEOF",
        "cat <<'EOF'\n$(rm x)\nEOF",
        "for f in *.rs; do wc -l \"$f\"; done",
        "grep -rn TODO src | sort | uniq -c | head",
        "git log --oneline -5 && git diff --stat",
        "find . -name '*.rs' -exec wc -l {} +",
        "echo rm is just a word",
        "sort -n notes.txt",
        "sort -k1o notes.txt",
        "env",
        "echo $((1 + 2))",
        "i=0; echo $((i + 1))",
        "bash -c 'ls -la'",
        "command -v git",
    ];
    for line in plan_ok {
        assert_eq!(kind(&bash(&p, line)), "allow", "default {line}");
        let v = bash_in(&p, line, &plan());
        assert_eq!(kind(&v), "allow", "plan {line}: {v:?}");
    }
    for line in [
        "cargo test",
        "cargo build --release 2>&1 | tail -n 20",
        "npm run build",
        "python3 -m pytest -q",
        "make -j4",
        "mkdir -p out && echo done > out/x.txt",
    ] {
        assert_eq!(kind(&bash(&p, line)), "allow", "{line}");
    }
}

#[test]
fn the_line_never_panics_on_odd_input() {
    for line in [
        "",
        " ",
        "\\",
        "$(",
        "${",
        "`",
        "<<",
        "<<EOF",
        "cat <<EOF\nx",
        "$((",
        "((",
        "[[",
        "a=(",
        "f() {",
        "case x in",
        "\u{0}",
        "\u{feff}rm x",
        "echo é $(echo ü)",
    ] {
        let _ = bash(&Policy::default(), line);
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn on_arbitrary_text(line in "\\PC{0,80}") {
            let _ = crate::policy::bash::analyze(&line);
        }

        #[test]
        fn on_shell_shaped_text(line in "[a-z$(){}`'\"\\\\<>|&;!=\\[\\] \n-]{0,60}") {
            let _ = crate::policy::bash::analyze(&line);
            let _ = bash(&Policy::default(), &line);
        }
    }
}
