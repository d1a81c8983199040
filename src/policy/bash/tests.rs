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
