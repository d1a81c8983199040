//! `toolgate audit`: the shipped binary checks the hash chain of a session a real headless
//! run wrote (the demo model, toolgate's own servers as child processes), names the line a
//! person changed or deleted afterwards, and exports the run's permission decisions.

use std::path::Path;

use serde_json::Value;

use crate::support::headless_run::Headless;
use crate::support::session_log;

/// A finished `toolgate -p "deploy web"` run: the trigger was denied (headless), the
/// docs and status calls allowed.
fn demo_session(workspace: &Path) -> Headless {
    let run = Headless::new("deploy web", "jsonl");
    let (code, out, err) = run.run(workspace);
    assert_eq!(code, 0, "stderr: {err}\nstdout: {out}");
    // The denial the audit records is real: the deploy server received no trigger.
    crate::support::deploy_record::assert_none(workspace);
    run
}

fn log_lines(run: &Headless) -> Vec<String> {
    std::fs::read_to_string(session_log(&run.state_dir()))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(run: &Headless, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(session_log(&run.state_dir()), text).unwrap();
}

/// The 0-based index of the trigger's permission record.
fn trigger_decision(lines: &[String]) -> usize {
    lines
        .iter()
        .position(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["type"] == "permission_decided" && v["tool"] == "mcp__deploy__trigger"
        })
        .expect("the trigger's decision")
}

#[test]
fn an_intact_session_verifies() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let records = log_lines(&run).len();
    let (code, out, err) = run.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains(&format!(": intact ({records} records chained)")),
        "{out}"
    );
    // The head is kept beside the file, not in it.
    let heads = run.state_dir().join("sessions").join("heads");
    assert_eq!(std::fs::read_dir(heads).unwrap().count(), 1);
}

#[test]
fn a_resumed_session_continues_the_chain() {
    let workspace = tempfile::tempdir().unwrap();
    let first = demo_session(workspace.path()).arg("-c");
    let before = log_lines(&first).len();
    let (code, out, err) = first.run(workspace.path());
    assert_eq!(code, 0, "stderr: {err}\nstdout: {out}");
    let after = log_lines(&first).len();
    assert!(after > before);
    let (code, out, _) = first.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(": intact ({after} records chained)")),
        "{out}"
    );
}

#[test]
fn a_decision_changed_from_deny_to_allow_is_named_by_line() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let mut lines = log_lines(&run);
    let at = trigger_decision(&lines);
    assert!(lines[at].contains(r#""decision":"deny""#), "{}", lines[at]);
    lines[at] = lines[at].replace(r#""decision":"deny""#, r#""decision":"allow""#);
    write_lines(&run, &lines);

    let (code, out, _) = run.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("BROKEN at line {}: hash mismatch", at + 1)),
        "{out}"
    );
}

#[test]
fn a_deleted_line_is_named() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let mut lines = log_lines(&run);
    let at = trigger_decision(&lines);
    lines.remove(at);
    write_lines(&run, &lines);

    let (code, out, _) = run.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "BROKEN at line {}: deleted: record {} is missing before this line",
            at + 1,
            at + 1
        )),
        "{out}"
    );
}

#[test]
fn a_truncated_session_is_named_against_its_head() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let lines = log_lines(&run);
    let kept = lines.len() - 1;
    write_lines(&run, &lines[..kept]);
    let (code, out, _) = run.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "BROKEN at line {}: missing line (truncated): the file ends after record {kept}, its head counts {}",
            kept + 1,
            lines.len()
        )),
        "{out}"
    );
}

#[test]
fn every_session_is_checked_and_an_old_one_is_unchained() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let old = run
        .state_dir()
        .join("sessions")
        .join("20200101-000000-aaaaaa.jsonl");
    std::fs::write(
        &old,
        "{\"ts\":\"2020-01-01T00:00:00Z\",\"type\":\"session_start\",\"session_id\":\"20200101-000000-aaaaaa\",\"workspace\":\"/elsewhere\",\"model\":\"m\"}\n",
    )
    .unwrap();
    let (code, out, _) = run.run_args(&["audit", "verify", "--all"], workspace.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("20200101-000000-aaaaaa: unchained (1 lines written before the audit chain"),
        "{out}"
    );
    assert!(out.contains(": intact ("), "{out}");
    assert!(out.ends_with("2 session(s) checked, 0 broken.\n"), "{out}");

    let (code, _, err) = run.run_args(&["audit", "verify", "no-such"], workspace.path());
    assert_eq!(code, 2);
    assert_eq!(err, "toolgate: no session 'no-such' found\n");
}

#[test]
fn export_lists_the_decisions() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let (code, out, err) =
        run.run_args(&["audit", "export", "--format", "jsonl"], workspace.path());
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let trigger = rows
        .iter()
        .find(|r| r["tool"] == "mcp__deploy__trigger")
        .expect("the trigger's decision");
    assert_eq!(trigger["decision"], "deny");
    assert_eq!(trigger["decider"], "headless");
    assert_eq!(trigger["detail"], "asked by mcp__deploy__trigger");
    assert_eq!(trigger["managed"], false);
    assert_eq!(trigger["input_digest"].as_str().unwrap().len(), 16);
    let search = rows
        .iter()
        .find(|r| r["tool"] == "mcp__docs__search")
        .expect("the search's decision");
    assert_eq!(search["decision"], "allow");

    let (code, csv, _) = run.run_args(&["audit", "export", "--format", "csv"], workspace.path());
    assert_eq!(code, 0);
    let mut csv_lines = csv.lines();
    assert_eq!(
        csv_lines.next(),
        Some("time,call_id,tool,input_digest,decision,decider,detail,managed")
    );
    let trigger_row = csv_lines
        .find(|l| l.contains(",mcp__deploy__trigger,"))
        .expect("the trigger's row");
    assert!(
        trigger_row.ends_with(",deny,headless,asked by mcp__deploy__trigger,false"),
        "{trigger_row}"
    );
    assert_eq!(csv.lines().count(), rows.len() + 1);
}

/// Issue 41: a session whose links were all stripped and whose head was deleted is not
/// "unchained" (that is only for files written before the chain): its first record says it
/// was written chained, so `audit verify` calls it not verifiable and exits 1, alone and
/// under `--all`. A resumed session says so again in its `resumed` record.
#[test]
fn a_session_whose_chain_was_removed_is_not_verifiable() {
    let workspace = tempfile::tempdir().unwrap();
    let run = demo_session(workspace.path());
    let lines = log_lines(&run);
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["type"], "session_start");
    assert!(first["chain"].is_string(), "{first}");

    // Strip every link (the rest of each record as written), delete the head.
    let stripped: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let record = v.as_object_mut().unwrap();
            record.remove("seq");
            record.remove("prev");
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    write_lines(&run, &stripped);
    let heads = run.state_dir().join("sessions").join("heads");
    for head in std::fs::read_dir(&heads).unwrap() {
        std::fs::remove_file(head.unwrap().path()).unwrap();
    }

    let (code, out, err) = run.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 1, "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains(
            ": NOT VERIFIABLE: its audit chain was removed (line 1 says it was written chained"
        ) && !out.contains("unchained"),
        "{out}"
    );
    let (code, out, _) = run.run_args(&["audit", "verify", "--all"], workspace.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.ends_with("1 session(s) checked, 1 broken.\n"), "{out}");
}

/// The `resumed` record declares the chain too: a session whose first part carries no
/// declaration (as one written before the chain would), resumed since, then stripped of
/// its links and head, is not verifiable either: the `resumed` record names the chain.
#[test]
fn a_resumed_session_whose_chain_was_removed_is_not_verifiable() {
    let workspace = tempfile::tempdir().unwrap();
    let first = demo_session(workspace.path()).arg("-c");
    let (code, out, err) = first.run(workspace.path());
    assert_eq!(code, 0, "stderr: {err}\nstdout: {out}");
    let lines = log_lines(&first);
    let resumed = lines
        .iter()
        .position(|l| serde_json::from_str::<Value>(l).unwrap()["type"] == "resumed")
        .expect("a resumed record");
    let stripped: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let record = v.as_object_mut().unwrap();
            record.remove("seq");
            record.remove("prev");
            if record["type"] == "session_start" {
                record.remove("chain");
            }
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    write_lines(&first, &stripped);
    for head in std::fs::read_dir(first.state_dir().join("sessions").join("heads")).unwrap() {
        std::fs::remove_file(head.unwrap().path()).unwrap();
    }
    let (code, out, _) = first.run_args(&["audit", "verify"], workspace.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "NOT VERIFIABLE: its audit chain was removed (line {} says it was written chained",
            resumed + 1
        )),
        "{out}"
    );
}
