//! The cost of a checkpoint after a one-file change, in workspaces of 1,000, 10,000 and
//! 30,000 files (goal: at most 50 ms at 10,000), and how it grows with the workspace.
//! A checkpoint runs `git status` over the whole work tree (the untracked cache keeps it
//! to one stat per file and folder), then `update-index`, `write-tree`, `commit-tree` and
//! `update-ref` for the changed file. Prints, per size: the first checkpoint (everything
//! hashed), a checkpoint after a one-file change and one after no change (medians and
//! p90 of interleaved rounds, wall time: the work happens in git processes), and the
//! growth ratios 10k / 1k and 30k / 10k.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use toolgate::checkpoint::Shadow;

const SIZES: [usize; 3] = [1_000, 10_000, 30_000];
/// Sizes under `cargo test --benches`, where criterion runs each case once.
const QUICK_SIZES: [usize; 2] = [100, 1_000];
const FILES_PER_FOLDER: usize = 50;
const GOAL: Duration = Duration::from_millis(50);

struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
    files: usize,
    shadow: Shadow,
    first: Duration,
    edits: usize,
}

/// A source tree: folders of 50 files two levels deep, files of about 1 KB, a
/// `.gitignore` and an ignored build folder the scan must skip.
fn workspace(files: usize) -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    for i in 0..files {
        let folder = root.join(format!(
            "pkg{:03}/mod{:02}",
            i / (FILES_PER_FOLDER * 10),
            (i / FILES_PER_FOLDER) % 10
        ));
        if i % FILES_PER_FOLDER == 0 {
            std::fs::create_dir_all(&folder).unwrap();
        }
        let line = format!("// file {i}: some source text of a realistic length\n");
        std::fs::write(folder.join(format!("file{i}.rs")), line.repeat(18)).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/out.bin"), "build output").unwrap();
    let shadow = Shadow::open(&dir.path().join("checkpoints"), &root).unwrap();
    let start = Instant::now();
    shadow.take("bench", 0).unwrap();
    let first = start.elapsed();
    Workspace {
        _dir: dir,
        root,
        files,
        shadow,
        first,
        edits: 0,
    }
}

impl Workspace {
    fn change_one_file(&mut self) {
        self.edits += 1;
        let path = self.root.join("pkg000/mod00/file7.rs");
        std::fs::write(path, format!("// edit {}\n", self.edits)).unwrap();
    }

    fn checkpoint(&self) {
        self.shadow.take("bench", 1).unwrap();
    }
}

/// CPU time (user + system) of the waited-for child processes so far: git's own work,
/// apart from the time it spent waiting for a core on a busy machine.
fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes into the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Wall time and children's CPU time of `f`.
fn timed(f: impl FnOnce()) -> (Duration, Duration) {
    let (start, cpu) = (Instant::now(), children_cpu());
    f();
    (start.elapsed(), children_cpu() - cpu)
}

fn median_p90(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let p90 = samples[(samples.len() * 9 / 10).min(samples.len() - 1)];
    (samples[samples.len() / 2], p90)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if full { &SIZES } else { &QUICK_SIZES };
    let mut spaces: Vec<Workspace> = sizes.iter().map(|&n| workspace(n)).collect();

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    {
        let mut group = criterion.benchmark_group("checkpoint_after_one_file_change");
        for space in &mut spaces {
            group.bench_function(BenchmarkId::from_parameter(space.files), |b| {
                b.iter(|| {
                    space.change_one_file();
                    space.checkpoint();
                })
            });
        }
        group.finish();
    }
    criterion.final_summary();

    // Rounds interleave the sizes, so load from other processes hits all of them alike.
    let rounds = if full { 31 } else { 3 };
    let mut changed = vec![(Vec::new(), Vec::new()); spaces.len()];
    let mut unchanged = vec![(Vec::new(), Vec::new()); spaces.len()];
    for _ in 0..rounds {
        for (i, space) in spaces.iter_mut().enumerate() {
            space.change_one_file();
            let (wall, cpu) = timed(|| space.checkpoint());
            changed[i].0.push(wall);
            changed[i].1.push(cpu);
            let (wall, cpu) = timed(|| space.checkpoint());
            unchanged[i].0.push(wall);
            unchanged[i].1.push(cpu);
        }
    }
    println!(
        "\ncheckpoint time, median / p90 of {rounds} interleaved rounds (wall; git's CPU time median):"
    );
    let mut medians = Vec::new();
    for (i, space) in spaces.iter().enumerate() {
        let (changed_median, changed_p90) = median_p90(changed[i].0.clone());
        let (changed_cpu, _) = median_p90(changed[i].1.clone());
        let (same_median, same_p90) = median_p90(unchanged[i].0.clone());
        let (same_cpu, _) = median_p90(unchanged[i].1.clone());
        medians.push(changed_median);
        println!(
            "  {:>6} files: first checkpoint {:>7.0} ms | after a one-file change {:>5.1} / {:>5.1} ms (cpu {:>5.1}) | no change {:>5.1} / {:>5.1} ms (cpu {:>5.1})",
            space.files,
            ms(space.first),
            ms(changed_median),
            ms(changed_p90),
            ms(changed_cpu),
            ms(same_median),
            ms(same_p90),
            ms(same_cpu),
        );
    }
    for pair in spaces.windows(2).zip(medians.windows(2)) {
        let ([small, large], [a, b]) = pair else {
            continue;
        };
        println!(
            "growth {}k -> {}k files ({:.0}x the files): {:.2}x the time",
            small.files as f64 / 1000.0,
            large.files as f64 / 1000.0,
            large.files as f64 / small.files as f64,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
    if let Some(i) = sizes.iter().position(|&n| n == 10_000) {
        println!(
            "10k files after a one-file change: {:.1} ms, {:.2}x the 50 ms goal",
            ms(medians[i]),
            medians[i].as_secs_f64() / GOAL.as_secs_f64()
        );
    }
    println!(
        "(machine load now: {})",
        std::fs::read_to_string(Path::new("/proc/loadavg"))
            .unwrap_or_default()
            .trim()
    );
}
