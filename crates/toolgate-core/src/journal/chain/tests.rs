//! The chain as the writer leaves it and as the check reads it: intact files, every kind of
//! tampering named at its line, resumed old files, cut records, other writers.

use std::io::Write;
use std::path::Path;

use super::verify::{Breakage, Verdict, verify};
use super::{head_path, read_head};
use crate::journal::{Journal, SessionLog, log_path};
use crate::protocol::Event;

fn write_records(dir: &Path, id: &str, n: usize) {
    let mut log = SessionLog::open(dir, id).unwrap();
    for i in 0..n {
        log.append(Event::Error {
            message: format!("record {i}"),
        })
        .unwrap();
    }
}

fn check(dir: &Path, id: &str) -> Verdict {
    let bytes = std::fs::read(log_path(dir, id)).unwrap();
    verify(&bytes, read_head(&head_path(dir, id)))
}

fn lines(dir: &Path, id: &str) -> Vec<String> {
    std::fs::read_to_string(log_path(dir, id))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn rewrite(dir: &Path, id: &str, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(log_path(dir, id), text).unwrap();
}

fn broken_at(verdict: Verdict) -> (usize, Breakage) {
    match verdict {
        Verdict::Broken(b) => (b.line, b.what),
        other => panic!("expected a break, got {other:?}"),
    }
}

#[test]
fn records_link_in_order_and_the_head_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 4);
    let all = lines(dir.path(), "s");
    let first: serde_json::Value = serde_json::from_str(&all[0]).unwrap();
    assert_eq!(first["seq"], 1);
    // The first record's link covers the bytes before it: none.
    assert_eq!(
        first["prev"],
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let second: serde_json::Value = serde_json::from_str(&all[1]).unwrap();
    let expected = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(format!(
        "{}\n",
        all[0]
    )));
    assert_eq!(second["prev"], expected.as_str());
    let head = read_head(&head_path(dir.path(), "s")).unwrap().unwrap();
    assert_eq!(head.records, 4);
    assert_eq!(
        check(dir.path(), "s"),
        Verdict::Intact {
            records: 4,
            unchained_lines: 0,
            cut_lines: 0
        }
    );
    // A resumed session continues the chain.
    write_records(dir.path(), "s", 2);
    assert!(matches!(
        check(dir.path(), "s"),
        Verdict::Intact { records: 6, .. }
    ));
}

#[test]
fn a_changed_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 4);
    let mut all = lines(dir.path(), "s");
    all[1] = all[1].replace("record 1", "record X");
    rewrite(dir.path(), "s", &all);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (2, Breakage::HashMismatch)
    );
    // The last line is checked against the head.
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 3);
    let mut all = lines(dir.path(), "s");
    all[2] = all[2].replace("record 2", "record X");
    rewrite(dir.path(), "s", &all);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (3, Breakage::HashMismatch)
    );
}

#[test]
fn deleted_reordered_and_truncated_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 5);
    let all = lines(dir.path(), "s");

    let mut deleted = all.clone();
    deleted.remove(2);
    rewrite(dir.path(), "s", &deleted);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (3, Breakage::Deleted { from: 3, to: 3 })
    );

    let mut swapped = all.clone();
    swapped.swap(1, 2);
    rewrite(dir.path(), "s", &swapped);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (
            2,
            Breakage::Reordered {
                expected: 2,
                found: 3
            }
        )
    );

    let truncated = all[..4].to_vec();
    rewrite(dir.path(), "s", &truncated);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (
            5,
            Breakage::Truncated {
                records: 4,
                head_records: 5
            }
        )
    );

    rewrite(dir.path(), "s", &all);
    std::fs::remove_file(head_path(dir.path(), "s")).unwrap();
    assert_eq!(broken_at(check(dir.path(), "s")).1, Breakage::HeadMissing);
}

#[test]
fn an_inserted_unlinked_record_breaks_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 3);
    let mut all = lines(dir.path(), "s");
    all.insert(
        1,
        r#"{"ts":"2026-12-01T00:00:00Z","type":"error","message":"forged"}"#.into(),
    );
    rewrite(dir.path(), "s", &all);
    assert_eq!(broken_at(check(dir.path(), "s")), (2, Breakage::Unlinked));
}

#[test]
fn an_old_file_is_unchained_and_a_resumed_one_chains_from_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let old = concat!(
        r#"{"ts":"2026-12-01T00:00:00Z","type":"session_start","session_id":"s","workspace":"/w","model":"m"}"#,
        "\n",
        r#"{"ts":"2026-12-01T00:00:01Z","type":"error","message":"old"}"#,
        "\n"
    );
    std::fs::write(log_path(dir.path(), "s"), old).unwrap();
    assert_eq!(check(dir.path(), "s"), Verdict::Unchained { lines: 2 });

    write_records(dir.path(), "s", 2);
    assert_eq!(
        check(dir.path(), "s"),
        Verdict::Intact {
            records: 2,
            unchained_lines: 2,
            cut_lines: 0
        }
    );
    // The first link covers the old lines: changing one of them is seen.
    let mut all = lines(dir.path(), "s");
    all[1] = all[1].replace("old", "new");
    rewrite(dir.path(), "s", &all);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (1, Breakage::HashMismatch)
    );
}

#[test]
fn a_record_cut_short_is_covered_by_the_next_link() {
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 2);
    // A crash part way through the third record.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(log_path(dir.path(), "s"))
        .unwrap();
    file.write_all(br#"{"ts":"2026-12-01T00:00:00Z","type":"err"#)
        .unwrap();
    assert!(matches!(
        check(dir.path(), "s"),
        Verdict::Intact {
            records: 2,
            cut_lines: 1,
            ..
        }
    ));
    write_records(dir.path(), "s", 1);
    assert_eq!(
        check(dir.path(), "s"),
        Verdict::Intact {
            records: 3,
            unchained_lines: 0,
            cut_lines: 1
        }
    );
    let mut all = lines(dir.path(), "s");
    all[2] = all[2].replace("err", "xyz");
    rewrite(dir.path(), "s", &all);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (2, Breakage::HashMismatch)
    );
}

#[test]
fn two_handles_and_another_writer_keep_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = SessionLog::open(dir.path(), "s").unwrap();
    let mut second = first.another_handle().unwrap();
    for i in 0..3 {
        first
            .append(Event::Error {
                message: format!("a{i}"),
            })
            .unwrap();
        second
            .append(Event::Error {
                message: format!("b{i}"),
            })
            .unwrap();
        // Another process (here: another open) appends between them.
        write_records(dir.path(), "s", 1);
    }
    first.append(Journal::Cleared).unwrap();
    assert!(matches!(
        check(dir.path(), "s"),
        Verdict::Intact { records: 10, .. }
    ));
}

#[test]
fn a_head_write_cut_short_leaves_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    write_records(dir.path(), "s", 3);
    let path = head_path(dir.path(), "s");
    // Record 3 went to slot 1; spoil it as a crash part way through its write would.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[256 + 20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let head = read_head(&path).unwrap().unwrap();
    assert_eq!(head.records, 2);
    assert_eq!(
        broken_at(check(dir.path(), "s")),
        (3, Breakage::BeyondHead { head_records: 2 })
    );
    // Both slots spoilt: the head cannot be read, and says so.
    bytes[20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert!(
        read_head(&path)
            .unwrap_err()
            .to_string()
            .contains("no whole head")
    );
}
