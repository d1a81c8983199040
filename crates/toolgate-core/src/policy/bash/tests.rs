//! The analyzer's own tests; the policy's verdicts on hostile lines are in
//! `policy/tests/bash_grammar.rs`.

use super::*;

fn units(line: &str) -> Vec<Unit> {
    analyze(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn runs(line: &str) -> Vec<Vec<String>> {
    units(line).iter().map(Unit::texts).collect()
}

#[test]
fn wrappers_are_removed_and_paths_reduced() {
    let u = units("FOO=1 env -i BAR=2 nohup nice -n 5 /usr/bin/rm -f x");
    assert_eq!(u[0].texts(), vec!["rm", "-f", "x"]);
    assert_eq!(u[0].class, Class::Destructive("rm"));
}

#[test]
fn substitutions_everywhere_are_commands() {
    for line in [
        "echo ${x:-$(rm v2.txt)}",
        "echo $(( $(rm f; echo 1) + 1 ))",
        "echo ${x:-`rm f`}",
        "cat <(rm f)",
        "cat <<EOF\n$(rm f)\nEOF",
        "cat <<EOF\n`rm f`\nEOF",
        "x=$(rm f)",
        "for i in $(rm f); do :; done",
    ] {
        assert!(
            runs(line)
                .iter()
                .any(|w| w.first().map(String::as_str) == Some("rm")),
            "{line}: {:?}",
            runs(line)
        );
    }
}

fn first_unresolved(line: &str) -> Option<String> {
    units(line).into_iter().find_map(|u| u.unresolved)
}

#[test]
fn what_cannot_be_resolved_says_why() {
    for line in [
        "$CMD x",
        "\"$@\"",
        "eval \"$X\"",
        "bash -c \"$X\"",
        "env -S\"$X\"",
        "echo x | bash",
        "bash -s",
        "bash /dev/stdin -c",
        "sh /proc/self/fd/0",
        "sh < f",
        "source f",
        ". f",
        "BASH_ENV=f bash -c true",
        "env GIT_SSH_COMMAND=x git fetch",
        "export LD_PRELOAD=x.so",
        "declare -x PAGER=x",
        "GIT_CONFIG_KEY_0=core.pager git log",
        "PATH=/tmp ls",
        "git -c core.pager=x log",
        "git --exec-path=/tmp log",
        "declare -n r=x",
        "hash -p /tmp/x ls",
        "x=$(cat f); echo $((x))",
        "read x; echo ${a[x]}",
        "unset 'a[$(rm f)]'",
        "test -v 'a[$(rm f)]'",
        "[ -v 'a[`rm f`]' ]",
        "[[ -v 'a[$(rm f)]' ]]",
        "x='$(rm f)'; echo ${x@P}",
        "mapfile -C 'rm f' -c 1 a < f",
        "git config core.fsmonitor 'rm f'",
        "let 'x=a[$(rm f)]'",
        "declare 'a[$(rm f)]=1'",
        "printf -v 'a[$(rm f)]' x",
        "BASH_\\\nENV=/dev/stdin bash -c true",
    ] {
        assert!(
            first_unresolved(line).is_some(),
            "{line}: {:?}",
            units(line)
        );
    }
    for line in [
        "bash script.sh",
        "bash -c 'ls'",
        "git status",
        "i=0; echo $((i+1))",
        "for i in 1 2; do echo $((i*2)); done",
        "env FOO=1 ls",
        "git -C sub status",
        "while IFS= read -r line; do echo \"$line\"; done < f",
        "arr=(1 2 3); echo ${arr[@]} ${#arr[@]} $((arr[0] + 1))",
        "time (sleep 1)",
    ] {
        assert_eq!(first_unresolved(line), None, "{line}");
    }
}

#[test]
fn shells_take_c_only_among_their_options() {
    // `bash FILE -c`: FILE is the script, `-c` its first argument.
    assert!(first_unresolved("bash /dev/stdin -c").is_some());
    assert_eq!(runs("bash x.sh -c 'rm y'").len(), 1);
    assert_eq!(runs("bash -xc 'rm y'")[1], vec!["rm", "y"]);
    assert_eq!(runs("bash -o pipefail -c 'rm y'")[1], vec!["rm", "y"]);
    assert_eq!(runs("bash -O extglob -ec 'rm y'")[1], vec!["rm", "y"]);
}

#[test]
fn env_split_string_in_every_spelling() {
    for line in [
        "env -S'rm f'",
        "env -S 'rm f'",
        "env -Srm f",
        "env -iS'rm f'",
        "env -i -S'rm f'",
        "env -vS 'rm f'",
        "env --split-string='rm f'",
        "env --split-string 'rm f'",
        "env --split-s='rm f'",
        "env --sp 'rm f'",
        "env -u HOME -S'rm f'",
        "env -C /tmp -S 'rm f'",
        "env -S'-i rm f'",
        "env -S'A=1 rm f'",
    ] {
        assert_eq!(runs(line)[0][0], "rm", "{line}: {:?}", runs(line));
    }
}

#[test]
fn grammar_differences_are_corrected() {
    // A backslash-newline inside a word joins it again.
    assert_eq!(runs("r\\\nm x")[0], vec!["rm", "x"]);
    // Backticks the grammar leaves as text.
    assert!(runs("echo ${x:-`rm f`}").iter().any(|w| w[0] == "rm"));
    assert!(runs("cat <<E\n`rm f`\nE").iter().any(|w| w[0] == "rm"));
    // A pipeline after a here-document's start is a command too.
    assert!(runs("cat <<E | rm f\nx\nE").iter().any(|w| w[0] == "rm"));
    // A quoted here-document runs nothing.
    assert_eq!(
        runs("cat <<'E'\n$(rm f) `rm g`\nE"),
        vec![vec!["cat".to_string()]]
    );
}

#[test]
fn options_read_as_their_parsers_do() {
    let changes = |line: &str| units(line)[0].changes.is_some();
    for line in [
        "sort -o f x",
        "sort -of x",
        "sort -rof x",
        "sort --output=f x",
        "sort --outp=f x",
        "sort --o f x",
        "sort x -o f",
        "git grep -Ocat x",
        "git grep -iO x",
        "git grep --open-files-in-pager x",
        "git diff --ext-diff",
        "git log --outp=x",
        "rg --pre ./x y",
        "find . -fprint f",
        "tree -o f",
        "less -of notes.txt",
        "date -s now",
        "uniq a b",
        "sort $opts x",
    ] {
        assert!(changes(line), "{line}");
    }
    for line in [
        "sort -k1o x",
        "sort -n x",
        "git diff --stat",
        "uniq a",
        "tree -L 2",
    ] {
        assert!(!changes(line), "{line}");
    }
}

/// A line whose syntax trees are deep at every level of `sh -c` nesting: the walk's depth
/// is bounded over the whole line, not per script, so it refuses (asks) instead of running
/// the thread out of stack (a crash a hostile model could cause). Run on a thread with the
/// stack a tokio worker has (2 MiB).
#[test]
fn deep_trees_nested_in_scripts_are_refused_not_a_crash() {
    let mut line = "true".to_string();
    for _ in 0..MAX_DEPTH {
        let deep = format!("{}{line}{}", "( ".repeat(150), " )".repeat(150));
        line = format!("sh -c '{}'", deep.replace('\'', "'\\''"));
    }
    let result = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || analyze(&line).map(|units| units.len()))
        .expect("thread starts")
        .join()
        .expect("the analysis returns instead of crashing");
    assert_eq!(result, Err(BashError::TooDeep));
    // One script as deep as the bound allows, in each nesting construct: an answer, not a
    // crash.
    for (open, close) in [
        ("( ", " )"),
        ("$( echo ", " )"),
        ("{ ", "; }"),
        ("`echo ", "`"),
    ] {
        for count in [40, 95, 200] {
            let line = format!("{}true{}", open.repeat(count), close.repeat(count));
            std::thread::Builder::new()
                .stack_size(2 * 1024 * 1024)
                .spawn(move || analyze(&line).map(|units| units.len()))
                .expect("thread starts")
                .join()
                .expect("the analysis returns instead of crashing")
                .ok();
        }
    }
}

/// Characters outside ASCII are parsed as the letters bash reads them as (the grammar's C
/// scanner is given an ASCII copy, see `syntax::ascii_shape`), and every word keeps its text.
#[test]
fn words_outside_ascii_keep_their_text() {
    let units = analyze("rm 'café déjà'.txt → && echo \"naïve $(rm ünïcode)\"").expect("parses");
    let texts: Vec<Vec<String>> = units.iter().map(Unit::texts).collect();
    assert!(
        texts.contains(&vec!["rm".into(), "café déjà.txt".into(), "→".into()]),
        "{texts:?}"
    );
    assert!(
        texts.contains(&vec!["rm".into(), "ünïcode".into()]),
        "{texts:?}"
    );
}
