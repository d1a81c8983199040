//! The bash guard judged through the grammar (issue 41 items 1 and 2), from the outside:
//! the shipped binary run headless against a local model server that plays the hostile
//! model, with the proof on disk (the files a probe would delete or create) and in what the
//! model server and the JSONL stream received.

use std::path::Path;
use std::process::Output;

use serde_json::json;

use crate::support::jsonl;
use crate::support::window_api::{Say, WindowApi};

/// A model that sends one bash call per request, then says "done".
fn model(lines: &[&str]) -> WindowApi {
    let mut script = lines
        .iter()
        .map(|line| Say::Tool {
            name: "bash".into(),
            input: json!({ "command": line }),
        })
        .collect::<Vec<_>>()
        .into_iter();
    WindowApi::start(10 << 20, move |_| {
        script.next().unwrap_or_else(|| Say::Text("done".into()))
    })
}

fn run(home: &Path, ws: &Path, api: &WindowApi, args: &[&str]) -> Output {
    crate::support::headless_run::on_model_api(
        &api.url,
        "anthropic",
        &home.join("state"),
        &home.join("config"),
        ws,
    )
    .args(["-p", "go", "--output-format", "jsonl"])
    .args(args)
    .env("TMPDIR", home)
    .output()
    .expect("run toolgate")
}

/// The gate's decision for each bash call, in order.
fn decisions(out: &Output) -> Vec<String> {
    jsonl(out)
        .iter()
        .filter(|l| l["type"] == "permission_decided" && l["tool"] == "bash")
        .map(|l| l["decision"].as_str().unwrap_or("").to_string())
        .collect()
}

fn deny_rm(home: &Path) {
    let config = home.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
}

/// Lines that delete `v1.txt` … through a wrapper, a substitution or a nested shell; the
/// last one a plain bash call that must run (the proof that bash runs at all).
const RM_PROBES: &[&str] = &[
    "env -S'rm v1.txt'",
    "echo ${x:-$(rm v2.txt)}",
    "env --split-string='rm v3.txt'",
    "echo $(( $(rm v4.txt; echo 1) + 1 ))",
    "bash -o pipefail -c 'rm v5.txt'",
    "echo v6.txt | xargs rm",
    "$'\\x72m' v7.txt",
    "r\\\nm v8.txt",
    "cat <<EOF\n`rm v9.txt`\nEOF",
    // Cannot be checked: asks, and headless nobody answers.
    "echo 'rm v10.txt' | bash",
    "X=rm; $X v11.txt",
    "echo ran > ran.txt",
];

#[test]
fn a_deny_rule_holds_against_wrappers_and_substitutions_in_default_and_auto_mode() {
    for mode in ["default", "auto"] {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        deny_rm(home.path());
        for n in 1..=11 {
            std::fs::write(ws.path().join(format!("v{n}.txt")), "keep").unwrap();
        }
        let api = model(RM_PROBES);
        let out = run(home.path(), ws.path(), &api, &["--permission-mode", mode]);
        assert!(out.status.success(), "{mode}: {out:?}");
        assert!(
            ws.path().join("ran.txt").exists(),
            "{mode}: the ordinary line did not run: {out:?}"
        );
        for n in 1..=11 {
            assert!(
                ws.path().join(format!("v{n}.txt")).exists(),
                "{mode}: `{}` deleted v{n}.txt",
                RM_PROBES[n - 1]
            );
        }
        let decided = decisions(&out);
        assert_eq!(decided.len(), RM_PROBES.len(), "{mode}: {decided:?}");
        assert!(
            decided[..11].iter().all(|d| d == "deny"),
            "{mode}: {decided:?}"
        );
        assert_eq!(decided[11], "allow", "{mode}");
        let results = api.tool_results();
        for (line, result) in RM_PROBES[..9].iter().zip(&results) {
            assert!(result.contains("Bash(rm:*)"), "{mode} {line}: {result}");
        }
        for (line, result) in RM_PROBES[9..11].iter().zip(&results[9..]) {
            assert!(
                result.contains("cannot be checked") && !result.contains("--allow Bash"),
                "{mode} {line}: {result}"
            );
        }
    }
}

/// The probes of item 1 that wrote in plan mode, each creating its own file; the last line
/// reads, and must.
const PLAN_PROBES: &[&str] = &[
    "env -S'touch f1'",
    "env --split-string='touch f2'",
    "echo ${x:-$(touch f3)}",
    "echo $(( $(touch f4; echo 1) + 1 ))",
    "sort -of5 notes.txt",
    "sort --outp=f6 notes.txt",
    "echo 'touch f7' | bash /dev/stdin -c",
    "echo 'touch f8' | BASH_ENV=/dev/stdin bash -c true",
    "git grep --no-index -O'touch f9;true' alpha",
    "LESSOPEN='|touch f10; cat %s' less notes.txt",
    "cat notes.txt",
];

#[test]
fn plan_mode_refuses_the_probes_that_wrote_and_still_reads() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "alpha beta\n").unwrap();
    let api = model(PLAN_PROBES);
    let out = run(home.path(), ws.path(), &api, &["--permission-mode", "plan"]);
    assert!(out.status.success(), "{out:?}");
    for n in 1..=10 {
        assert!(
            !ws.path().join(format!("f{n}")).exists(),
            "`{}` wrote in plan mode",
            PLAN_PROBES[n - 1]
        );
    }
    let results = api.tool_results();
    assert_eq!(results.len(), PLAN_PROBES.len(), "{results:?}");
    for (line, result) in PLAN_PROBES.iter().zip(&results).take(10) {
        assert!(result.contains("plan mode"), "{line}: {result}");
    }
    assert!(results[10].contains("alpha beta"), "{}", results[10]);
    let decided = decisions(&out);
    assert_eq!(decided.last().map(String::as_str), Some("allow"));
    assert!(decided[..10].iter().all(|d| d == "deny"), "{decided:?}");
}
