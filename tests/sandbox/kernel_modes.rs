//! Decision 0088 with real confined processes: bash in plan mode writes nothing (the kernel
//! refuses, whatever the command looks like), and a bash call's background processes end
//! with the call.

use std::path::Path;
use std::time::{Duration, Instant};

use toolgate::builtin::BuiltinOutput;
use toolgate::sandbox::{BashWrites, Sandbox};
use toolgate::settings::{SandboxMode, SandboxSettings};

use super::{bash, environment};

/// The pids of live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

/// Waits (polling, with a generous deadline) until no process carries `marker`.
fn wait_gone(marker: &str) -> Result<(), Vec<u32>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(left);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A marker no other test or process uses: part of a `sleep` duration.
fn marker(n: u32) -> String {
    format!("{}{n}", std::process::id() % 100_000)
}

fn plan(settings: SandboxSettings) -> Sandbox {
    Sandbox::new(settings).with_bash_writes(BashWrites::Nothing)
}

async fn assert_writes_nothing(sandbox: &Sandbox, ws: &Path) {
    std::fs::write(ws.join("existing.txt"), "keep me").unwrap();
    let tmp_file = std::env::temp_dir().join(format!("plan-{}", std::process::id()));
    let attempts = [
        ("create", "touch new.txt".to_string()),
        ("redirect", "echo x > new.txt".into()),
        ("modify", "echo x >> existing.txt".into()),
        ("truncate", ": > existing.txt".into()),
        ("delete", "rm existing.txt".into()),
        ("rename", "mv existing.txt moved.txt".into()),
        ("mkdir", "mkdir dir".into()),
        ("symlink", "ln -s existing.txt link".into()),
        (
            "python",
            "python3 -c \"open('py.txt', 'w').write('x')\"".into(),
        ),
        ("temp dir", format!("echo x > {}", tmp_file.display())),
        ("mktemp", "mktemp".into()),
    ];
    for (what, command) in &attempts {
        let out = bash(sandbox, ws, command).await;
        assert!(
            out.is_error,
            "{what} should fail in plan mode:\n{}",
            out.text
        );
        assert!(
            out.text.contains("[sandbox: toolgate is in plan mode")
                && out.text.contains("read-only"),
            "{what}: the result should say bash ran read-only in plan mode:\n{}",
            out.text
        );
    }
    let left: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["existing.txt"], "nothing new in the workspace");
    assert_eq!(
        std::fs::read_to_string(ws.join("existing.txt")).unwrap(),
        "keep me"
    );
    assert!(!tmp_file.exists(), "plan mode wrote in the temp dir");
    // Reading works, and so do the devices a read-only command writes to.
    let out = bash(
        sandbox,
        ws,
        "grep -r nothing-here missing 2>/dev/null; cat existing.txt >/dev/stdout; echo",
    )
    .await;
    assert_eq!(out, BuiltinOutput::ok("keep me\nexit status: 0"));
}

#[tokio::test]
async fn plan_mode_bash_writes_nothing_anywhere() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    assert_writes_nothing(&plan(SandboxSettings::default()), ws.path()).await;
}

#[tokio::test]
async fn plan_mode_stays_read_only_with_the_sandbox_off_or_left() {
    environment();
    let off = SandboxSettings {
        mode: SandboxMode::Off,
        ..SandboxSettings::default()
    };
    let ws = tempfile::tempdir().unwrap();
    assert_writes_nothing(&plan(off.clone()), ws.path()).await;
    // Leaving the sandbox (which the gate refuses in plan mode) would not widen it either.
    let ws = tempfile::tempdir().unwrap();
    assert_writes_nothing(&plan(off).without_confinement(), ws.path()).await;
}

#[tokio::test]
async fn background_processes_end_with_their_bash_call() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let m: Vec<String> = (1..=4).map(marker).collect();
    let command = format!(
        // The python process leaves the shell's group (as `timeout` does, and may): the
        // call waits until it has, so only ending the whole session can stop it.
        "setsid sh -c 'sleep 5.{a}; touch late1' & s=$!
         ( setsid sleep 300.{b} & )
         ( nohup sh -c 'sleep 5.{c}; touch late3' >/dev/null 2>&1 & )
         python3 -c 'import os, time; os.setpgid(0, 0); time.sleep(5.{d}); open(\"late4\", \"w\")' & p=$!
         until [ \"$(cut -d' ' -f5 /proc/$p/stat)\" = \"$p\" ]; do :; done
         wait $s; echo \"setsid: $?\"; echo started",
        a = m[0],
        b = m[1],
        c = m[2],
        d = m[3]
    );
    let out = bash(&Sandbox::default(), ws.path(), &command).await;
    assert!(out.text.contains("setsid: 1\nstarted"), "{}", out.text);
    // `setsid` is refused, and says so.
    assert!(
        out.text.contains("setsid failed: Operation not permitted"),
        "{}",
        out.text
    );
    for marker in &m {
        if let Err(left) = wait_gone(marker) {
            panic!("processes of the call outlived it: {left:?} ({marker})");
        }
    }
    // Gone, so the files can no longer appear.
    for late in ["late1", "late3", "late4"] {
        assert!(!ws.path().join(late).exists(), "{late} was written");
    }
}

#[tokio::test]
async fn ordinary_process_handling_still_works_in_the_sandbox() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let command = r#"set -e
bash -c 'echo inner'
printf 'b\na\n' | sort | head -n 1
timeout 1 sleep 30 || echo "timeout $?"
nohup echo quiet >/dev/null 2>&1
printf 'all: a b\na:\n\t@echo a\nb:\n\t@echo b\n' > Makefile
make -s -j2 | sort | tr '\n' ' '; echo
git init -q r
git -C r -c user.email=t@t -c user.name=t commit -q --allow-empty -m m
git -C r log --oneline | wc -l
python3 -c 'import subprocess; print(subprocess.run(["echo", "py"], capture_output=True, text=True).stdout.strip())'
set -m; sleep 0.1 & wait; echo jobs"#;
    let out = bash(&Sandbox::default(), ws.path(), command).await;
    assert!(!out.is_error, "{}", out.text);
    // A commit starts git's automatic maintenance detached (fork, then setsid): refused,
    // so that child stops with this line (at a moment of its own) and the commit stands.
    let lines: Vec<&str> = out
        .text
        .lines()
        .filter(|line| *line != "fatal: setsid failed: Operation not permitted")
        .collect();
    assert_eq!(
        lines,
        [
            "inner",
            "a",
            "timeout 124",
            "a b ",
            "1",
            "py",
            "[1]+  Done                    sleep 0.1",
            "jobs",
            "exit status: 0"
        ]
    );
}

#[tokio::test]
async fn a_call_the_person_let_out_of_the_sandbox_may_leave_a_process_running() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let m = marker(5);
    let out = bash(
        &Sandbox::default().without_confinement(),
        ws.path(),
        // Returns once the sleep has its own session (field 6 of its stat): before that,
        // the end of the call would still find it in the call's session.
        &format!(
            "setsid sleep 300.{m} >/dev/null 2>&1 < /dev/null &
             until [ \"$(cut -d' ' -f6 /proc/$!/stat)\" = \"$!\" ]; do :; done; echo started"
        ),
    )
    .await;
    assert!(out.text.starts_with("started"), "{}", out.text);
    let left = processes_with(&m);
    assert_eq!(left.len(), 1, "the unconfined setsid process: {left:?}");
    for pid in left {
        // SAFETY: plain integers; the pid is the test's own sleep, found just above.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    wait_gone(&m).unwrap();
}
