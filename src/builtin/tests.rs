//! The built-ins against real files in temporary workspaces and real shell processes.

use super::*;
use crate::pool::ToolOrigin;
use serde_json::json;
use std::time::Duration;

fn workspace() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

async fn call(tool: BuiltinTool, input: Value, ws: &Path) -> BuiltinOutput {
    run(tool, &input, ws, CancellationToken::new()).await
}

fn names(servers: &[&str]) -> Vec<String> {
    servers.iter().map(|s| s.to_string()).collect()
}

/// True once `pid` no longer runs. A killed process may linger as a zombie until its new
/// parent reaps it; a zombie runs nothing, so it counts as gone.
fn is_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks whether the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

/// Waits (boundedly) for `pid` to disappear; the kill is asynchronous to us.
async fn wait_gone(pid: i32) -> bool {
    for _ in 0..200 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn pid_after(text: &str, label: &str) -> i32 {
    let start = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label} in {text:?}"))
        + label.len();
    text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

// ----------------------------------------------------------------------------------------
// definitions

#[test]
fn tools_come_in_order_with_origins() {
    let starting: Vec<String> = builtin_tools(&names(&["docs", "deploy"]))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        starting,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp"
        ],
        "before anything is connected the pool is exactly these six"
    );
    let tools = pool_builtins(&names(&["docs", "deploy"]), &names(&["docs"]));
    assert_eq!(
        tools[6].input_schema["properties"]["name"]["enum"],
        json!(["docs"])
    );
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        listed,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp",
            "disconnect_mcp"
        ]
    );
    for (tool, kind) in tools.iter().zip(BuiltinTool::ALL) {
        assert_eq!(tool.origin, ToolOrigin::Builtin(kind), "{}", tool.name);
        assert_eq!(tool.name, kind.name());
    }
    let origins: Vec<&str> = tools.iter().map(|t| t.origin.as_str()).collect();
    assert_eq!(
        origins,
        [
            "builtin",
            "builtin",
            "builtin",
            "builtin",
            "builtin",
            "connector",
            "connector"
        ]
    );
}

#[test]
fn every_schema_is_a_closed_object_with_its_fields() {
    let tools = pool_builtins(&names(&["docs"]), &names(&["docs"]));
    let expected: [(&str, &[&str], &[&str]); 7] = [
        (
            "bash",
            &["command", "timeout_ms", "unsandboxed", "justification"],
            &["command"],
        ),
        ("read_file", &["path", "limit"], &["path"]),
        ("write_file", &["path", "content"], &["path", "content"]),
        (
            "edit_file",
            &["path", "old_text", "new_text"],
            &["path", "old_text", "new_text"],
        ),
        ("glob", &["pattern"], &["pattern"]),
        ("connect_mcp", &["name"], &["name"]),
        ("disconnect_mcp", &["name"], &["name"]),
    ];
    for (tool, (name, props, required)) in tools.iter().zip(expected) {
        assert_eq!(tool.name, name);
        let schema = &tool.input_schema;
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert_eq!(schema["required"], json!(required), "{name}");
        let keys: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, props, "{name}");
        assert!(
            tool.description.len() > 80,
            "{name} needs a real description"
        );
    }
}

#[test]
fn connector_tools_enumerate_the_configured_servers() {
    let tools = builtin_tools(&names(&["docs", "deploy", "fs"]));
    for tool in &tools[5..] {
        assert_eq!(
            tool.input_schema["properties"]["name"]["enum"],
            json!(["docs", "deploy", "fs"])
        );
        assert!(
            tool.description
                .contains("Configured servers: docs, deploy, fs."),
            "{}",
            tool.description
        );
    }
    let none = builtin_tools(&[]);
    assert!(
        none[5].input_schema["properties"]["name"]
            .get("enum")
            .is_none()
    );
    assert!(
        none[5]
            .description
            .contains("No MCP servers are configured.")
    );
}

#[tokio::test]
async fn connectors_are_not_run_here() {
    // connect_mcp changes the pool, which only the agent can do.
    let ws = workspace();
    let out = call(BuiltinTool::ConnectMcp, json!({"name": "docs"}), ws.path()).await;
    assert_eq!(out, BuiltinOutput::error("Unknown tool: connect_mcp"));
    let out = call(
        BuiltinTool::DisconnectMcp,
        json!({"name": "docs"}),
        ws.path(),
    )
    .await;
    assert_eq!(out, BuiltinOutput::error("Unknown tool: disconnect_mcp"));
}

// ----------------------------------------------------------------------------------------
// bash

#[tokio::test]
async fn bash_reports_output_and_exit_status() {
    let ws = workspace();
    let out = call(
        BuiltinTool::Bash,
        json!({"command": "echo hello"}),
        ws.path(),
    )
    .await;
    assert_eq!(out, BuiltinOutput::ok("hello\nexit status: 0"));

    let out = call(
        BuiltinTool::Bash,
        json!({"command": "echo failing; exit 3"}),
        ws.path(),
    )
    .await;
    assert_eq!(out, BuiltinOutput::error("failing\nexit status: 3"));

    let out = call(BuiltinTool::Bash, json!({"command": "true"}), ws.path()).await;
    assert_eq!(out, BuiltinOutput::ok("(no output)\nexit status: 0"));
}

#[tokio::test]
async fn bash_interleaves_stdout_and_stderr_in_order() {
    let ws = workspace();
    let out = call(
        BuiltinTool::Bash,
        json!({"command": "echo one; echo two >&2; echo three; echo four >&2"}),
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
    let out = call(
        BuiltinTool::Bash,
        json!({"command": "cat marker.txt; cat; pwd -P"}),
        ws.path(),
    )
    .await;
    let canonical = ws.path().canonicalize().unwrap();
    assert_eq!(
        out.text,
        format!("here{}\nexit status: 0", canonical.display())
    );
}

#[tokio::test]
async fn bash_reports_death_by_signal() {
    let ws = workspace();
    let out = call(
        BuiltinTool::Bash,
        json!({"command": "kill -TERM $$"}),
        ws.path(),
    )
    .await;
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
    let out = call(BuiltinTool::Bash, json!({}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::error("Invalid input for bash: missing required field 'command'")
    );
    let out = call(BuiltinTool::Bash, json!({"command": ["ls"]}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::error(
            "Invalid input for bash: field 'command' must be a string, got an array"
        )
    );
    let out = call(
        BuiltinTool::Bash,
        json!({"command": "ls", "timeout_ms": "soon"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error(
            "Invalid input for bash: field 'timeout_ms' must be a positive integer, got string \"soon\""
        )
    );
    let out = call(
        BuiltinTool::Bash,
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
        BuiltinTool::Bash,
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
    assert!(
        wait_gone(background).await,
        "background sleep {background} survived"
    );
}

#[tokio::test]
async fn bash_stops_background_leftovers_when_the_command_finishes() {
    let ws = workspace();
    // Without the group kill this call would wait for the 300 s sleep holding the pipe.
    let out = call(
        BuiltinTool::Bash,
        json!({"command": "sleep 300 & echo bg=$!"}),
        ws.path(),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("exit status: 0"), "{}", out.text);
    let background = pid_after(&out.text, "bg=");
    assert!(
        wait_gone(background).await,
        "background sleep {background} survived"
    );
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
            run(BuiltinTool::Bash, &input, &dir, cancel).await
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
    assert!(
        wait_gone(background).await,
        "background sleep {background} survived"
    );
}

#[tokio::test]
async fn bash_output_is_capped_with_head_tail_and_marker() {
    let ws = workspace();
    let command = "head -c 30000 /dev/zero | tr '\\0' a; head -c 30000 /dev/zero | tr '\\0' b";
    let out = call(BuiltinTool::Bash, json!({"command": command}), ws.path()).await;
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
    let out = call(BuiltinTool::Bash, json!({"command": command}), ws.path()).await;
    assert!(
        out.text
            .contains("\n[output truncated: 2950011 characters omitted]\n"),
        "{}",
        &out.text[24_990..25_100]
    );
    assert!(out.text.ends_with("x\nlast line\nexit status: 0"));
    assert!(out.text.chars().count() < OUTPUT_LIMIT_CHARS + 200);
}

// ----------------------------------------------------------------------------------------
// read_file

#[tokio::test]
async fn read_file_numbers_lines_like_cat_n() {
    let ws = workspace();
    std::fs::write(ws.path().join("a.txt"), "first\n  second\r\nthird").unwrap();
    let out = call(BuiltinTool::ReadFile, json!({"path": "a.txt"}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::ok("     1\tfirst\n     2\t  second\n     3\tthird\n")
    );
    // Absolute paths are accepted as given.
    let abs = ws.path().join("a.txt");
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": abs.to_str().unwrap()}),
        ws.path(),
    )
    .await;
    assert_eq!(out.text, "     1\tfirst\n     2\t  second\n     3\tthird\n");
}

#[tokio::test]
async fn read_file_limit_says_more_follows() {
    let ws = workspace();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("ten.txt"), text).unwrap();
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "ten.txt", "limit": 3}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out.text,
        "     1\tline 1\n     2\tline 2\n     3\tline 3\n[showing lines 1-3 of ten.txt (10 lines) \
         because of the limit of 3 lines; to read further use bash, e.g. sed -n '4,2003p' ten.txt]"
    );
    assert!(!out.is_error);
    // A limit equal to the length shows everything without a note.
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "ten.txt", "limit": 10}),
        ws.path(),
    )
    .await;
    assert!(out.text.ends_with("    10\tline 10\n"), "{}", out.text);
}

#[tokio::test]
async fn read_file_caps_large_files() {
    let ws = workspace();
    let text: String = (1..=20_000).map(|i| format!("{i:0>20}\n")).collect();
    std::fs::write(ws.path().join("big.txt"), &text).unwrap();
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "big.txt", "limit": 100000}),
        ws.path(),
    )
    .await;
    assert!(!out.is_error);
    // Each numbered line is 6 + 1 + 20 + 1 = 28 characters; 1785 of them fit in 50000.
    assert!(
        out.text.contains("  1785\t00000000000000001785\n["),
        "{}",
        &out.text[49_900..]
    );
    assert!(!out.text.contains("00000000000000001786"));
    assert!(
        out.text.ends_with("because of the 50000-character limit; to read further use bash, e.g. sed -n '1786,3785p' big.txt]"),
        "{}",
        &out.text[49_900..]
    );
}

#[tokio::test]
async fn read_file_errors() {
    let ws = workspace();
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "nope.txt"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error("read_file: nope.txt does not exist")
    );

    std::fs::write(
        ws.path().join("blob.bin"),
        [0x7f, b'E', b'L', b'F', 0, 1, 2],
    )
    .unwrap();
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "blob.bin"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error("read_file: blob.bin is not a text file (binary content)")
    );

    std::fs::write(ws.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "latin1.txt"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error("read_file: latin1.txt is not a text file (not valid UTF-8)")
    );

    std::fs::create_dir(ws.path().join("sub")).unwrap();
    let out = call(BuiltinTool::ReadFile, json!({"path": "sub"}), ws.path()).await;
    assert!(out.is_error);
    assert!(out.text.contains("sub is a directory"), "{}", out.text);

    std::fs::write(ws.path().join("empty.txt"), "").unwrap();
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "empty.txt"}),
        ws.path(),
    )
    .await;
    assert_eq!(out, BuiltinOutput::ok("[empty.txt is empty]"));

    let out = call(BuiltinTool::ReadFile, json!({"limit": 3}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::error("Invalid input for read_file: missing required field 'path'")
    );
    let out = call(
        BuiltinTool::ReadFile,
        json!({"path": "empty.txt", "limit": 0}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error(
            "Invalid input for read_file: field 'limit' must be a positive integer, got number 0"
        )
    );
}

// ----------------------------------------------------------------------------------------
// write_file

#[tokio::test]
async fn write_file_creates_parents_and_reports_bytes() {
    let ws = workspace();
    let out = call(
        BuiltinTool::WriteFile,
        json!({"path": "deep/er/new.txt", "content": "héllo\n"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::ok("Wrote 7 bytes to deep/er/new.txt (created the file)")
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("deep/er/new.txt")).unwrap(),
        "héllo\n"
    );
    let out = call(
        BuiltinTool::WriteFile,
        json!({"path": "deep/er/new.txt", "content": ""}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::ok("Wrote 0 bytes to deep/er/new.txt (replaced the file)")
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("deep/er/new.txt")).unwrap(),
        ""
    );
}

#[tokio::test]
async fn write_file_errors() {
    let ws = workspace();
    let out = call(BuiltinTool::WriteFile, json!({"path": "x.txt"}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::error("Invalid input for write_file: missing required field 'content'")
    );
    assert!(!ws.path().join("x.txt").exists());

    std::fs::create_dir(ws.path().join("dir")).unwrap();
    let out = call(
        BuiltinTool::WriteFile,
        json!({"path": "dir", "content": "x"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(out.text.contains("dir is a directory"), "{}", out.text);

    // A parent that is a file cannot become a directory.
    std::fs::write(ws.path().join("plain"), "x").unwrap();
    let out = call(
        BuiltinTool::WriteFile,
        json!({"path": "plain/child.txt", "content": "x"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("write_file: plain/child.txt: "),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plain")).unwrap(),
        "x"
    );
}

// ----------------------------------------------------------------------------------------
// edit_file

#[tokio::test]
async fn edit_file_replaces_exactly_one_occurrence() {
    let ws = workspace();
    let file = ws.path().join("main.rs");
    std::fs::write(&file, "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "main.rs", "old_text": "println!(\"hi\");", "new_text": "println!(\"bye\");\n    return;"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::ok("Edited main.rs: replaced 1 occurrence starting at line 2")
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn main() {\n    println!(\"bye\");\n    return;\n}\n"
    );
}

#[tokio::test]
async fn edit_file_refuses_zero_or_many_occurrences() {
    let ws = workspace();
    let file = ws.path().join("f.txt");
    let original = "alpha\nbeta\nalpha\n";
    std::fs::write(&file, original).unwrap();

    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "f.txt", "old_text": "gamma", "new_text": "delta"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text
            .starts_with("edit_file: old_text was not found in f.txt (0 occurrences)"),
        "{}",
        out.text
    );

    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "f.txt", "old_text": "alpha", "new_text": "omega"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text
            .starts_with("edit_file: old_text occurs 2 times in f.txt"),
        "{}",
        out.text
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[tokio::test]
async fn edit_file_matches_crlf_files_with_plain_newlines() {
    let ws = workspace();
    let file = ws.path().join("win.txt");
    std::fs::write(&file, "one\r\ntwo\r\nthree\r\n").unwrap();
    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "win.txt", "old_text": "one\ntwo", "new_text": "uno\ndos"}),
        ws.path(),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "uno\r\ndos\r\nthree\r\n"
    );
}

#[tokio::test]
async fn edit_file_errors() {
    let ws = workspace();
    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "missing.txt", "old_text": "a", "new_text": "b"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error("edit_file: missing.txt does not exist")
    );

    std::fs::write(ws.path().join("f.txt"), "abc").unwrap();
    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "f.txt", "old_text": "", "new_text": "b"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text.contains("'old_text' must not be empty"),
        "{}",
        out.text
    );

    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "f.txt", "old_text": "abc", "new_text": "abc"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(out.text.contains("identical"), "{}", out.text);

    let out = call(
        BuiltinTool::EditFile,
        json!({"path": "f.txt", "old_text": "abc"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::error("Invalid input for edit_file: missing required field 'new_text'")
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("f.txt")).unwrap(),
        "abc"
    );
}

// ----------------------------------------------------------------------------------------
// glob

fn touch(root: &Path, rel: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "x").unwrap();
}

#[tokio::test]
async fn glob_matches_relative_paths_sorted() {
    let ws = workspace();
    for rel in [
        "src/main.rs",
        "src/lib/mod.rs",
        "build.rs",
        "README.md",
        "src/notes.txt",
    ] {
        touch(ws.path(), rel);
    }
    let out = call(BuiltinTool::Glob, json!({"pattern": "**/*.rs"}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::ok("build.rs\nsrc/lib/mod.rs\nsrc/main.rs")
    );
    let out = call(BuiltinTool::Glob, json!({"pattern": "src/*.rs"}), ws.path()).await;
    assert_eq!(out.text, "src/main.rs");
    let out = call(
        BuiltinTool::Glob,
        json!({"pattern": "./*.{md,rs}"}),
        ws.path(),
    )
    .await;
    assert_eq!(out.text, "README.md\nbuild.rs");
    // An absolute pattern inside the workspace is fine.
    let abs = format!("{}/src/**", ws.path().display());
    let out = call(BuiltinTool::Glob, json!({"pattern": abs}), ws.path()).await;
    assert_eq!(out.text, "src/lib/mod.rs\nsrc/main.rs\nsrc/notes.txt");
    let out = call(BuiltinTool::Glob, json!({"pattern": "*.py"}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::ok("No files in the workspace match '*.py'.")
    );
}

#[tokio::test]
async fn glob_caps_at_200_and_says_so() {
    let ws = workspace();
    for i in 0..250 {
        touch(ws.path(), &format!("many/f{i:03}.txt"));
    }
    let out = call(
        BuiltinTool::Glob,
        json!({"pattern": "many/*.txt"}),
        ws.path(),
    )
    .await;
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[0], "many/f000.txt");
    assert_eq!(lines[199], "many/f199.txt");
    assert_eq!(
        lines[200],
        "[showing the first 200 of 250 matches; use a more specific pattern]"
    );
}

#[tokio::test]
async fn glob_skips_git_and_target() {
    let ws = workspace();
    for rel in [
        ".git/config",
        "target/debug/out.rs",
        "crate/target/x.rs",
        "src/a.rs",
        ".hidden.rs",
    ] {
        touch(ws.path(), rel);
    }
    let out = call(BuiltinTool::Glob, json!({"pattern": "**/*"}), ws.path()).await;
    assert_eq!(out.text, ".hidden.rs\nsrc/a.rs");
}

#[tokio::test]
async fn glob_never_lists_outside_the_workspace() {
    let outside = workspace();
    touch(outside.path(), "secret/key.pem");
    let ws = workspace();
    touch(ws.path(), "inside.txt");
    std::os::unix::fs::symlink(outside.path().join("secret"), ws.path().join("link")).unwrap();

    // The symlinked directory is neither listed nor descended into; a symlinked file is
    // listed under its name inside the workspace.
    std::os::unix::fs::symlink(outside.path().join("secret/key.pem"), ws.path().join("pem"))
        .unwrap();
    let out = call(BuiltinTool::Glob, json!({"pattern": "**/*"}), ws.path()).await;
    assert_eq!(out.text, "inside.txt\npem");
    let out = call(BuiltinTool::Glob, json!({"pattern": "link/*"}), ws.path()).await;
    assert_eq!(out.text, "No files in the workspace match 'link/*'.");

    let out = call(
        BuiltinTool::Glob,
        json!({"pattern": "../**/*.pem"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);
    assert!(out.text.contains("contains '..'"), "{}", out.text);
    let out = call(
        BuiltinTool::Glob,
        json!({"pattern": "{..,src}/*"}),
        ws.path(),
    )
    .await;
    assert!(out.is_error);

    let pattern = format!("{}/**/*.pem", outside.path().display());
    let out = call(BuiltinTool::Glob, json!({"pattern": pattern}), ws.path()).await;
    assert!(out.is_error);
    assert!(
        out.text.contains("points outside the workspace"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("key.pem\n"));
}

#[tokio::test]
async fn glob_errors() {
    let ws = workspace();
    let out = call(BuiltinTool::Glob, json!({"pattern": "src/[a"}), ws.path()).await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("glob: invalid pattern 'src/[a'"),
        "{}",
        out.text
    );
    let out = call(BuiltinTool::Glob, json!({"pattern": 7}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::error(
            "Invalid input for glob: field 'pattern' must be a string, got number 7"
        )
    );
    let out = call(BuiltinTool::Glob, json!({"pattern": ""}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::error("glob: field 'pattern' must not be empty")
    );
}
