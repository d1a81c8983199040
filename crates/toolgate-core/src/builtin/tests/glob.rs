//! glob: matching, caps, skipped folders, the workspace boundary.

use super::*;
#[tokio::test]
async fn glob_matches_relative_paths_sorted() {
    let ws = workspace_with(&[
        "src/main.rs",
        "src/lib/mod.rs",
        "build.rs",
        "README.md",
        "src/notes.txt",
    ]);
    let out = glob("**/*.rs", ws.path()).await;
    assert_eq!(
        out,
        BuiltinOutput::ok("build.rs\nsrc/lib/mod.rs\nsrc/main.rs")
    );
    let out = glob("src/*.rs", ws.path()).await;
    assert_eq!(out.text, "src/main.rs");
    let out = glob("./*.{md,rs}", ws.path()).await;
    assert_eq!(out.text, "README.md\nbuild.rs");
    // An absolute pattern inside the workspace is fine.
    let abs = format!("{}/src/**", ws.path().display());
    let out = glob(&abs, ws.path()).await;
    assert_eq!(out.text, "src/lib/mod.rs\nsrc/main.rs\nsrc/notes.txt");
    let out = glob("*.py", ws.path()).await;
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
    let out = glob("many/*.txt", ws.path()).await;
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
    let ws = workspace_with(&[
        ".git/config",
        "target/debug/out.rs",
        "crate/target/x.rs",
        "src/a.rs",
        ".hidden.rs",
    ]);
    let out = glob("**/*", ws.path()).await;
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
    let out = glob("**/*", ws.path()).await;
    assert_eq!(out.text, "inside.txt\npem");
    let out = glob("link/*", ws.path()).await;
    assert_eq!(out.text, "No files in the workspace match 'link/*'.");

    let out = glob("../**/*.pem", ws.path()).await;
    assert!(out.is_error);
    assert!(out.text.contains("contains '..'"), "{}", out.text);
    let out = glob("{..,src}/*", ws.path()).await;
    assert!(out.is_error);

    let pattern = format!("{}/**/*.pem", outside.path().display());
    let out = glob(&pattern, ws.path()).await;
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
    let out = glob("src/[a", ws.path()).await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("glob: invalid pattern 'src/[a'"),
        "{}",
        out.text
    );
    expect(
        tools::glob::ID,
        ws.path(),
        [
            (
                json!({"pattern": 7}),
                BuiltinOutput::error(
                    "Invalid input for glob: field 'pattern' must be a string, got number 7",
                ),
            ),
            (
                json!({"pattern": ""}),
                BuiltinOutput::error("glob: field 'pattern' must not be empty"),
            ),
        ],
    )
    .await;
}
