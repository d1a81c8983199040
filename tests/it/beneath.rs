//! Files opened beneath the workspace (issue 41, decision 0089), from the outside: the
//! shipped binary run headless against a local Messages API while a background process
//! attacks it, with the proof on disk and in the requests the model API received.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fixture_server::fixture_file;
use crate::support::window_api::{Say, WindowApi};

/// The fake key's text: it must never reach the model.
const FAKE_KEY: &str = "FAKE-PRIVATE-KEY-7f3c9a-never-send";

/// A model that makes `calls` (in order), then says "done".
fn model(calls: Vec<(&'static str, Value)>) -> WindowApi {
    let mut calls = calls.into_iter();
    WindowApi::start(10 << 20, move |_| match calls.next() {
        Some((name, input)) => Say::Tool {
            name: name.into(),
            input,
        },
        None => Say::Text("done".into()),
    })
}

/// `toolgate -p go --output-format jsonl` in `ws` against `api`, with `args`.
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

/// Every request body the model API received, as text.
fn received(api: &WindowApi) -> String {
    api.seen()
        .iter()
        .map(|s| s.body.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A background process swapping `ws/d` (a real folder) and `ws/d_link` (a link to the
/// outside folder) with renameat2(RENAME_EXCHANGE), as fast as it can.
struct Swapper {
    child: Child,
    count_file: PathBuf,
}

impl Swapper {
    fn start(ws: &Path, home: &Path) -> Swapper {
        let count_file = home.join("swaps");
        let child = Command::new("python3")
            .arg(fixture_file("swap_folder.py"))
            .args(["d", "d_link"])
            .arg(&count_file)
            .current_dir(ws)
            .spawn()
            .expect("start the swapper");
        let started = PathBuf::from(format!("{}.started", count_file.display()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !started.exists() {
            assert!(Instant::now() < deadline, "the swapper did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        Swapper { child, count_file }
    }

    /// Stops it; how many swaps it made.
    fn stop(mut self) -> u64 {
        // SAFETY: kill(2) on the pid of the child this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().expect("wait for the swapper");
        assert!(status.success(), "swapper: {status:?}");
        std::fs::read_to_string(&self.count_file)
            .expect("swap count")
            .trim()
            .parse()
            .expect("a number")
    }
}

/// `home/ws` with a real folder `d` (an inside key, a canary folder) and `d_link`, a
/// link to `home/outside` (the fake key, a canary folder).
fn attacked_workspace() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(home.path()).unwrap();
    let (ws, outside) = (base.join("ws"), base.join("outside"));
    for dir in [ws.join("d/canary"), outside.join("canary")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::create_dir_all(base.join("config")).unwrap();
    std::fs::write(ws.join("d/id_rsa"), "the workspace's own test key").unwrap();
    std::fs::write(outside.join("id_rsa"), FAKE_KEY).unwrap();
    std::os::unix::fs::symlink("../outside", ws.join("d_link")).unwrap();
    (home, ws, outside)
}

/// What the outside folder holds, recursively (names and contents).
fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        out.push((entry.path().display().to_string(), text));
    }
    out
}

#[test]
fn a_folder_swapped_for_a_link_while_the_tools_run_never_leads_them_outside() {
    let (home, ws, outside) = attacked_workspace();
    let before = listing(&outside);
    let swapper = Swapper::start(&ws, home.path());

    // 40 writes in one run (accept-edits: a write inside the workspace runs unasked).
    let writes = (0..40)
        .map(|n| {
            let path = if n % 2 == 0 {
                format!("d/w{n}.txt")
            } else {
                format!("d/canary/w{n}.txt")
            };
            (
                "write_file",
                json!({"path": path, "content": format!("written {n}")}),
            )
        })
        .collect();
    let write_api = model(writes);
    let out = run(
        home.path(),
        &ws,
        &write_api,
        &["--permission-mode", "accept-edits"],
    );
    assert!(out.status.success(), "{out:?}");

    // 60 reads of d/id_rsa, in two runs (a turn makes at most 50 model calls).
    let mut read_apis = Vec::new();
    for _ in 0..2 {
        let reads = (0..30)
            .map(|_| ("read_file", json!({"path": "d/id_rsa"})))
            .collect();
        let api = model(reads);
        let out = run(home.path(), &ws, &api, &[]);
        assert!(out.status.success(), "{out:?}");
        read_apis.push(api);
    }
    let swaps = swapper.stop();
    assert!(swaps > 100, "the attack hardly ran: {swaps} swaps");

    // Nothing was written outside the workspace: the outside folder is as it was.
    assert_eq!(listing(&outside), before);
    // Every write that ran landed in the workspace's real folder, wherever its name is.
    let written = walkdir::WalkDir::new(&ws)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with('w'))
        .count();
    assert!(written <= 40, "{written}");
    // The fake key never reached the model, in any request of any run.
    for api in read_apis.iter().chain([&write_api]) {
        let seen = received(api);
        assert!(
            !seen.contains(FAKE_KEY),
            "the outside key reached the model"
        );
        assert!(!seen.is_empty());
    }
    // The reads did run: the model got 60 results (the inside key, or a refusal).
    let results: Vec<String> = read_apis
        .iter()
        .flat_map(|api| {
            let seen = api.seen();
            let last = seen.last().expect("a request").body.clone();
            last["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["content"].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(results.len(), 60);
    let read_inside = results
        .iter()
        .filter(|r| r.contains("the workspace's own test key"))
        .count();
    eprintln!(
        "{swaps} swaps; {written} of 40 writes landed (all inside); {read_inside} of 60 reads \
         returned the workspace's key, the rest were refused"
    );
}
