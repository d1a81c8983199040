//! The cost of the session log's hash chain: one record appended as before the chain
//! (serialized, written to the O_APPEND file) against `SessionLog::append` (the same, plus
//! the file's lock, the SHA-256 link and the head rewritten atomically beside the file).
//! The record is a typical `permission` line (about 300 bytes). Prints both per-record
//! times and their ratio.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::json;
use toolgate::journal::{Record, SessionLog};
use toolgate::policy::{AuditRecord, Decider, Permit, RuleSource};
use toolgate::protocol::{Event, PermissionLine};

fn record() -> Record {
    Record::Fact(Event::PermissionDecided(PermissionLine {
        call_id: "toolu_01HXYZ".into(),
        record: AuditRecord::new(
            "mcp__deploy__trigger",
            &json!({"service": "web", "env": "staging"}),
            Permit::Allow,
            None,
            Decider::Rule {
                rule: "mcp__deploy__trigger".into(),
                source: RuleSource::ProjectConfig("/work/project/.toolgate/config.toml".into()),
            },
        ),
    }))
}

/// The append as it was before the chain: the line with its time, one write.
fn plain_append(file: &mut File, record: &Record) {
    let mut line = json!({"ts": chrono::Utc::now()});
    if let (Some(line), serde_json::Value::Object(fields)) =
        (line.as_object_mut(), serde_json::to_value(record).unwrap())
    {
        line.extend(fields);
    }
    let mut text = line.to_string();
    text.push('\n');
    file.write_all(text.as_bytes()).unwrap();
}

fn per_record(rounds: u32, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..rounds {
        f();
    }
    start.elapsed() / rounds
}

fn main() {
    let full = !std::env::args().any(|a| a == "--test");
    let dir = tempfile::tempdir().unwrap();
    let mut plain = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("plain.jsonl"))
        .unwrap();
    let mut chained = SessionLog::open(dir.path(), "bench").unwrap();
    let rec = record();

    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let mut group = criterion.benchmark_group("session_record_write");
    group.bench_function("without_chain", |b| {
        b.iter(|| plain_append(&mut plain, black_box(&rec)))
    });
    group.bench_function("with_chain", |b| {
        b.iter(|| chained.append(black_box(rec.clone())).unwrap())
    });
    group.finish();
    if !full {
        return;
    }
    let rounds = 5_000;
    let without = per_record(rounds, || plain_append(&mut plain, &rec));
    let with = per_record(rounds, || chained.append(rec.clone()).unwrap());
    println!(
        "session record write: {without:?} without the chain, {with:?} with it ({:.2}x)",
        with.as_secs_f64() / without.as_secs_f64()
    );
}
