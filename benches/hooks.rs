//! The hook round trip: one PreToolUse hook running `true` (and `cat`, which reads the whole
//! JSON input) through `Hooks::pre_tool_use` (the JSON input, the process group, the
//! sandbox, the reading of its ending), against the bare spawn of `sh -c true` with a piped
//! stdin. The difference is what toolgate adds to a hook's own run time (decision 0086).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio::io::AsyncWriteExt;

use toolgate::hooks::Hooks;
use toolgate::sandbox::Sandbox;
use toolgate::settings::{FileLayer, HookEvent, HookSettings, HookSpec};

fn hooks(command: &str, sandboxed: bool, workspace: &std::path::Path) -> Hooks {
    let settings = HookSettings {
        hooks: vec![HookSpec {
            event: HookEvent::PreToolUse,
            matcher: None,
            command: command.into(),
            timeout: Duration::from_secs(60),
            sandboxed,
            layer: FileLayer::User,
            file: PathBuf::from("bench/config.toml"),
        }],
    };
    let sandbox = Sandbox::new(Default::default());
    Hooks::new(&settings, workspace, sandbox, false)
}

async fn bare_spawn(workspace: &std::path::Path) {
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", "true"])
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"{}").await;
    }
    child.wait_with_output().await.unwrap();
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let input = json!({ "service": "web", "notes": "x".repeat(2_000) });
    let mut group = c.benchmark_group("hooks");
    group.sample_size(60);
    group.bench_function("bare_spawn_sh_true", |b| {
        b.to_async(&runtime).iter(|| bare_spawn(workspace.path()));
    });
    for (name, command, sandboxed) in [
        ("hook_true_unsandboxed", "true", false),
        ("hook_cat_unsandboxed", "cat", false),
        ("hook_true_sandboxed", "true", true),
    ] {
        let mut hooks = hooks(command, sandboxed, workspace.path());
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(hooks.pre_tool_use("mcp__deploy__trigger", &input));
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
