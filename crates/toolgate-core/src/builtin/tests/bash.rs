//! bash: output, exit status, signals, timeouts, cancellation, caps.

use super::*;
#[tokio::test]
async fn bash_reports_output_and_exit_status() {
    let ws = workspace();
    let out = bash("echo hello", ws.path()).await;
    assert_eq!(out, BuiltinOutput::ok("hello\nexit status: 0"));

    let out = bash("echo failing; exit 3", ws.path()).await;
    assert_eq!(out, BuiltinOutput::error("failing\nexit status: 3"));

    let out = bash("true", ws.path()).await;
    assert_eq!(out, BuiltinOutput::ok("(no output)\nexit status: 0"));
}

#[tokio::test]
async fn bash_interleaves_stdout_and_stderr_in_order() {
    let ws = workspace();
    let out = bash(
        "echo one; echo two >&2; echo three; echo four >&2",
        ws.path(),
    )
    .await;
    assert_eq!(out.text, "one\ntwo\nthree\nfour\nexit status: 0");
}

#[tokio::test]
async fn bash_runs_in_the_workspace_with_empty_stdin() {
    let ws = workspace();
    std::fs::write(ws.path().join("marker.txt"), "here").unwrap();
    // `cat` with no arguments reads stdin: it must see end-of-file, not hang.
    let out = bash("cat marker.txt; cat; pwd -P", ws.path()).await;
    let canonical = ws.path().canonicalize().unwrap();
    assert_eq!(
        out.text,
        format!("here{}\nexit status: 0", canonical.display())
    );
}

#[tokio::test]
async fn bash_reports_death_by_signal() {
    let ws = workspace();
    let out = bash("kill -TERM $$", ws.path()).await;
    assert!(out.is_error);
    assert!(
        out.text.ends_with("terminated by signal 15"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn bash_falls_back_to_sh_when_bash_is_missing() {
    let ws = workspace();
    let out = shell::execute(
        &["toolgate-no-such-shell", "sh"],
        "echo via sh",
        ws.path(),
        DEFAULT_TIMEOUT,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(out.text, "via sh\nexit status: 0");
    let err = shell::execute(
        &["toolgate-no-such-shell"],
        "true",
        ws.path(),
        DEFAULT_TIMEOUT,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("no shell found"), "{err}");
}

#[tokio::test]
async fn bash_validates_its_arguments() {
    let ws = workspace();
    expect(
        tools::bash::ID,
        ws.path(),
        [
            (
                json!({}),
                BuiltinOutput::error(
                    "Invalid input for bash: missing required field 'command'",
                ),
            ),
            (
                json!({"command": ["ls"]}),
                BuiltinOutput::error(
                    "Invalid input for bash: field 'command' must be a string, got an array",
                ),
            ),
            (
                json!({"command": "ls", "timeout_ms": "soon"}),
                BuiltinOutput::error(
                    "Invalid input for bash: field 'timeout_ms' must be a positive integer, got string \"soon\"",
                ),
            ),
        ],
    )
    .await;
    let out = call(
        tools::bash::ID,
        json!({"command": "ls", "cwd": "/"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(out.text.contains("unknown field 'cwd'"), "{}", out.text);
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_process_group() {
    let ws = workspace();
    let out = call(
        tools::bash::ID,
        json!({"command": "sleep 300 & echo bg=$!; sleep 300", "timeout_ms": 1500}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text.ends_with(
            "[command timed out after 1500 ms; it and all its child processes were killed]"
        ),
        "{}",
        out.text
    );
    let background = pid_after(&out.text, "bg=");
    assert_gone(background).await;
}

#[tokio::test]
async fn bash_stops_background_leftovers_when_the_command_finishes() {
    let ws = workspace();
    // Without the group kill this call would wait for the 300 s sleep holding the pipe.
    let out = bash("sleep 300 & echo bg=$!", ws.path()).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("exit status: 0"), "{}", out.text);
    let background = pid_after(&out.text, "bg=");
    assert_gone(background).await;
}

#[tokio::test]
async fn bash_cancel_kills_the_process_group() {
    let ws = workspace();
    let cancel = CancellationToken::new();
    let dir = ws.path().to_path_buf();
    let task = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            let input = json!({"command": "sleep 300 & echo $! > bg.pid; echo started; sleep 300"});
            run(tools::bash::ID, &input, &dir, cancel).await
        }
    });
    let pid_file = ws.path().join("bg.pid");
    let mut background = None;
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && let Ok(pid) = text.trim().parse::<i32>()
        {
            background = Some(pid);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let background = background.expect("the command never started");
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("cancel did not end the call")
        .unwrap();
    assert!(out.is_error);
    assert!(out.text.starts_with("started\n"), "{}", out.text);
    assert!(
        out.text.ends_with(
            "[command cancelled by the user; it and all its child processes were killed]"
        ),
        "{}",
        out.text
    );
    assert_gone(background).await;
}

#[tokio::test]
async fn bash_output_is_capped_with_head_tail_and_marker() {
    let ws = workspace();
    let command = "head -c 30000 /dev/zero | tr '\\0' a; head -c 30000 /dev/zero | tr '\\0' b";
    let out = call(tools::bash::ID, json!({"command": command}), ws.path()).await;
    let expected = format!(
        "{}\n[output truncated: 10000 characters omitted]\n{}\nexit status: 0",
        "a".repeat(25_000),
        "b".repeat(25_000)
    );
    assert_eq!(out.text, expected);
    assert!(!out.is_error);
}

#[tokio::test]
async fn bash_huge_output_keeps_only_the_cap() {
    let ws = workspace();
    let command = "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo last line";
    let out = call(tools::bash::ID, json!({"command": command}), ws.path()).await;
    assert!(
        out.text
            .contains("\n[output truncated: 2950011 characters omitted]\n"),
        "{}",
        &out.text[24_990..25_100]
    );
    assert!(out.text.ends_with("x\nlast line\nexit status: 0"));
    assert!(out.text.chars().count() < OUTPUT_LIMIT_CHARS + 200);
}
