//! Decision 0088 from the outside: the shipped binary run headless against a local model
//! server. Plan mode's "no writes" is the kernel's (a read-only sandbox), so even a command
//! the bash guard lets through writes nothing; and a bash call's background processes end
//! with it. Each test checks the effect: the file on disk, the processes in /proc.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::window_api::{Say, WindowApi};

/// A model that plays `script` one answer per request, then says "done".
fn model(script: Vec<Say>) -> WindowApi {
    let mut script = script.into_iter();
    WindowApi::start(10 << 20, move |_| {
        script.next().unwrap_or_else(|| Say::Text("done".into()))
    })
}

fn bash(command: &str) -> Say {
    Say::Tool {
        name: "bash".into(),
        input: json!({ "command": command }),
    }
}

/// `toolgate -p go` in `ws` with `args`, its state and config under `home`.
fn run(home: &Path, ws: &Path, api: &WindowApi, args: &[&str]) -> Output {
    std::fs::create_dir_all(home.join("config")).unwrap();
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

fn git(ws: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(ws)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A git repository whose own config runs `touch g` on `git status` (an fsmonitor hook):
/// the command line is a plain read-only `git status`, which no reading of it can refuse.
fn workspace_with_a_hostile_repo() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let p = ws.path();
    std::fs::write(p.join("notes.txt"), "alpha notes\n").unwrap();
    std::fs::write(p.join("a"), "alpha\n").unwrap();
    std::fs::write(p.join("b"), "beta\n").unwrap();
    git(p, &["init", "-q"]);
    git(p, &["config", "core.fsmonitor", "touch g; false"]);
    ws
}

/// The plan-mode probes (each created `f` before decision 0088).
const PROBES: &[&str] = &[
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

fn plan_run(home: &Path, ws: &Path) -> Vec<String> {
    let mut script: Vec<Say> = PROBES.iter().map(|probe| bash(probe)).collect();
    script.push(bash("git status --short; cat notes.txt"));
    script.push(Say::Tool {
        name: "bash".into(),
        input: json!({"command": "cat notes.txt", "unsandboxed": true,
                      "justification": "wants out"}),
    });
    let api = model(script);
    let out = run(home, ws, &api, &["--permission-mode", "plan"]);
    assert!(out.status.success(), "{out:?}");
    api.tool_results()
}

fn assert_nothing_written(ws: &Path, results: &[String]) {
    for name in ["f", "g"] {
        assert!(
            !ws.join(name).exists(),
            "plan mode let bash create `{name}`; results: {results:#?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "alpha notes\n"
    );
}

#[test]
fn plan_mode_bash_writes_nothing_whatever_the_command_looks_like() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace_with_a_hostile_repo();
    let results = plan_run(home.path(), ws.path());
    assert_eq!(results.len(), PROBES.len() + 2, "{results:#?}");
    assert_nothing_written(ws.path(), &results);
    // A read-only command still runs and its output reaches the model.
    let read = &results[PROBES.len()];
    assert!(read.contains("alpha notes"), "{read}");
    // Leaving the sandbox is not a way out of plan mode.
    let leave = &results[PROBES.len() + 1];
    assert!(
        leave.contains("cannot leave the sandbox in plan mode"),
        "{leave}"
    );
}

#[test]
fn plan_mode_stays_read_only_when_the_sandbox_is_turned_off() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/config.toml"),
        "[sandbox]\nmode = \"off\"\n",
    )
    .unwrap();
    let ws = workspace_with_a_hostile_repo();
    let results = plan_run(home.path(), ws.path());
    assert_nothing_written(ws.path(), &results);
    assert!(
        results[PROBES.len()].contains("alpha notes"),
        "{results:#?}"
    );

    // The same settings out of plan mode: the hostile repository does write (so the probe
    // is real), and so does a plain `touch`.
    let api = model(vec![bash("git status --short"), bash("touch f")]);
    let out = run(home.path(), ws.path(), &api, &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(ws.path().join("g").exists(), "{:#?}", api.tool_results());
    assert!(ws.path().join("f").exists(), "{:#?}", api.tool_results());
}

#[test]
fn default_mode_bash_still_writes_in_the_workspace() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace_with_a_hostile_repo();
    let api = model(vec![bash("touch f && echo made")]);
    let out = run(home.path(), ws.path(), &api, &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(ws.path().join("f").exists(), "{:#?}", api.tool_results());
    assert!(api.tool_results()[0].contains("made"));
}

/// The pids of live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

#[test]
fn background_processes_of_a_bash_call_end_with_it() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // Durations nobody else uses, to find the processes by.
    let m: Vec<String> = (1..=4)
        .map(|n| format!("{}{n}", std::process::id() % 100_000))
        .collect();
    let command = format!(
        "setsid sh -c 'sleep 5.{a}; touch late1' & s=$!
         ( setsid sleep 300.{b} & )
         ( nohup sh -c 'sleep 5.{c}; touch late3' >/dev/null 2>&1 & )
         python3 -c 'import os, time; os.setpgid(0, 0); time.sleep(5.{d}); open(\"late4\", \"w\")' & p=$!
         until [ \"$(cut -d' ' -f5 /proc/$p/stat)\" = \"$p\" ]; do :; done
         wait $s; echo \"setsid: $?\"",
        a = m[0],
        b = m[1],
        c = m[2],
        d = m[3]
    );
    let api = model(vec![bash(&command)]);
    let out = run(home.path(), ws.path(), &api, &[]);
    assert!(out.status.success(), "{out:?}");
    let results = api.tool_results();
    assert!(
        results[0].contains("setsid failed: Operation not permitted")
            && results[0].contains("setsid: 1"),
        "{results:#?}"
    );
    // Toolgate has exited; whatever of the call were left would still be running.
    let deadline = Instant::now() + Duration::from_secs(30);
    for marker in &m {
        while !processes_with(marker).is_empty() {
            assert!(
                Instant::now() < deadline,
                "processes of the bash call outlived it: {:?} ({marker})",
                processes_with(marker)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for late in ["late1", "late3", "late4"] {
        assert!(!ws.path().join(late).exists(), "{late} was written");
    }
}
