//! read_file, write_file and edit_file against real files.

use super::*;
// read_file

#[tokio::test]
async fn read_file_numbers_lines_like_cat_n() {
    let ws = workspace();
    std::fs::write(ws.path().join("a.txt"), "first\n  second\r\nthird").unwrap();
    let out = call(tools::read_file::ID, json!({"path": "a.txt"}), ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::ok("     1\tfirst\n     2\t  second\n     3\tthird\n")
    );
    // Absolute paths are accepted as given.
    let abs = ws.path().join("a.txt");
    let out = call(
        tools::read_file::ID,
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
        tools::read_file::ID,
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
        tools::read_file::ID,
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
        tools::read_file::ID,
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
    std::fs::write(
        ws.path().join("blob.bin"),
        [0x7f, b'E', b'L', b'F', 0, 1, 2],
    )
    .unwrap();
    std::fs::write(ws.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    std::fs::write(ws.path().join("empty.txt"), "").unwrap();
    expect(
        tools::read_file::ID,
        ws.path(),
        [
            (
                json!({"path": "nope.txt"}),
                BuiltinOutput::error("read_file: nope.txt does not exist"),
            ),
            (
                json!({"path": "blob.bin"}),
                BuiltinOutput::error("read_file: blob.bin is not a text file (binary content)"),
            ),
            (
                json!({"path": "latin1.txt"}),
                BuiltinOutput::error("read_file: latin1.txt is not a text file (not valid UTF-8)"),
            ),
            (
                json!({"path": "empty.txt"}),
                BuiltinOutput::ok("[empty.txt is empty]"),
            ),
            (
                json!({"limit": 3}),
                BuiltinOutput::error(
                    "Invalid input for read_file: missing required field 'path'",
                ),
            ),
            (
                json!({"path": "empty.txt", "limit": 0}),
                BuiltinOutput::error(
                    "Invalid input for read_file: field 'limit' must be a positive integer, got number 0",
                ),
            ),
        ],
    )
    .await;
    expect_errors(
        tools::read_file::ID,
        ws.path(),
        [(json!({"path": "sub"}), Contains("sub is a directory"))],
    )
    .await;
}

// write_file

#[tokio::test]
async fn write_file_creates_parents_and_reports_bytes() {
    let ws = workspace();
    let out = call(
        tools::write_file::ID,
        json!({"path": "deep/er/new.txt", "content": "héllo\n"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::ok("Wrote 7 bytes to deep/er/new.txt (created the file)")
    );
    assert_eq!(read(&ws, "deep/er/new.txt"), "héllo\n");
    let out = call(
        tools::write_file::ID,
        json!({"path": "deep/er/new.txt", "content": ""}),
        ws.path(),
    )
    .await;
    assert_eq!(
        out,
        BuiltinOutput::ok("Wrote 0 bytes to deep/er/new.txt (replaced the file)")
    );
    assert_eq!(read(&ws, "deep/er/new.txt"), "");
}

#[tokio::test]
async fn write_file_errors() {
    let ws = workspace();
    expect(
        tools::write_file::ID,
        ws.path(),
        [(
            json!({"path": "x.txt"}),
            BuiltinOutput::error("Invalid input for write_file: missing required field 'content'"),
        )],
    )
    .await;
    assert!(!ws.path().join("x.txt").exists());

    std::fs::create_dir(ws.path().join("dir")).unwrap();
    // A parent that is a file cannot become a directory.
    std::fs::write(ws.path().join("plain"), "x").unwrap();
    expect_errors(
        tools::write_file::ID,
        ws.path(),
        [
            (
                json!({"path": "dir", "content": "x"}),
                Contains("dir is a directory"),
            ),
            (
                json!({"path": "plain/child.txt", "content": "x"}),
                StartsWith("write_file: plain/child.txt: "),
            ),
        ],
    )
    .await;
    assert_eq!(read(&ws, "plain"), "x");
}

// edit_file

#[tokio::test]
async fn edit_file_replaces_exactly_one_occurrence() {
    let ws = workspace();
    let file = ws.path().join("main.rs");
    std::fs::write(&file, "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let out = call(
        tools::edit_file::ID,
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

    expect_errors(
        tools::edit_file::ID,
        ws.path(),
        [
            (
                json!({"path": "f.txt", "old_text": "gamma", "new_text": "delta"}),
                StartsWith("edit_file: old_text was not found in f.txt (0 occurrences)"),
            ),
            (
                json!({"path": "f.txt", "old_text": "alpha", "new_text": "omega"}),
                StartsWith("edit_file: old_text occurs 2 times in f.txt"),
            ),
        ],
    )
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[tokio::test]
async fn edit_file_matches_crlf_files_with_plain_newlines() {
    let ws = workspace();
    let file = ws.path().join("win.txt");
    std::fs::write(&file, "one\r\ntwo\r\nthree\r\n").unwrap();
    let out = call(
        tools::edit_file::ID,
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
    expect(
        tools::edit_file::ID,
        ws.path(),
        [(
            json!({"path": "missing.txt", "old_text": "a", "new_text": "b"}),
            BuiltinOutput::error("edit_file: missing.txt does not exist"),
        )],
    )
    .await;

    std::fs::write(ws.path().join("f.txt"), "abc").unwrap();
    expect_errors(
        tools::edit_file::ID,
        ws.path(),
        [
            (
                json!({"path": "f.txt", "old_text": "", "new_text": "b"}),
                Contains("'old_text' must not be empty"),
            ),
            (
                json!({"path": "f.txt", "old_text": "abc", "new_text": "abc"}),
                Contains("identical"),
            ),
        ],
    )
    .await;
    expect(
        tools::edit_file::ID,
        ws.path(),
        [(
            json!({"path": "f.txt", "old_text": "abc"}),
            BuiltinOutput::error("Invalid input for edit_file: missing required field 'new_text'"),
        )],
    )
    .await;
    assert_eq!(read(&ws, "f.txt"), "abc");
}

/// The file tools open the target the gate decided on, not the input's text again, and
/// refuse where that target now leads out.
#[tokio::test]
async fn the_decided_target_is_what_is_opened() {
    use crate::beneath::FileTarget;
    use crate::sandbox::Sandbox;
    let outside = workspace();
    std::fs::write(outside.path().join("approved.txt"), "approved text").unwrap();
    let ws = workspace();
    std::fs::create_dir_all(ws.path().join("d")).unwrap();
    let run = |tool, input: serde_json::Value, target: FileTarget| {
        let ws = ws.path().to_path_buf();
        async move {
            BuiltinId::handler(tool)
                .run(LocalCall {
                    input: &input,
                    workspace: &ws,
                    sandbox: &Sandbox::default(),
                    cancel: CancellationToken::new(),
                    trace: None,
                    target: Some(&target),
                })
                .await
        }
    };
    // Approved outside: read exactly as resolved.
    let approved = FileTarget::Approved(
        std::fs::canonicalize(outside.path())
            .unwrap()
            .join("approved.txt"),
    );
    let out = run(tools::read_file::ID, json!({"path": "x"}), approved).await;
    assert!(out.text.contains("approved text"), "{}", out.text);
    // `d` checked as a folder, swapped for a link out before the write: refused, and
    // nothing is written outside.
    std::fs::remove_dir(ws.path().join("d")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("d")).unwrap();
    let out = run(
        tools::write_file::ID,
        json!({"path": "d/new.txt", "content": "x"}),
        FileTarget::Workspace("d/new.txt".into()),
    )
    .await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("was not opened"), "{}", out.text);
    assert!(!outside.path().join("new.txt").exists());
    let out = run(
        tools::read_file::ID,
        json!({"path": "d/approved.txt"}),
        FileTarget::Workspace("d/approved.txt".into()),
    )
    .await;
    assert!(
        out.is_error && !out.text.contains("approved text"),
        "{}",
        out.text
    );
}
