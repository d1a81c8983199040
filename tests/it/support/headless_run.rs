//! A run of the shipped binary's `toolgate -p` on the scripted demo model, with its own
//! state and config folders passed to the child only (tests run in parallel threads), and
//! other toolgate commands run against the same folders.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A run of `toolgate -p`: the workspace, and the folders its state and user config live
/// in (a temp dir of the test's own, passed to the child only).
pub struct Headless {
    home: tempfile::TempDir,
    args: Vec<String>,
}

impl Headless {
    pub fn new(prompt: &str, format: &str) -> Headless {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("config")).unwrap();
        Headless {
            home,
            args: [
                "-p",
                prompt,
                "--output-format",
                format,
                "--provider",
                "scripted",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    pub fn arg(mut self, arg: &str) -> Headless {
        self.args.push(arg.to_string());
        self
    }

    /// The user config folder the child reads (`config.toml`, `mcp.json`).
    pub fn config_dir(&self) -> PathBuf {
        self.home.path().join("config")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.home.path().join("state")
    }

    /// Runs it in `workspace`: exit code, stdout, stderr.
    pub fn run(&self, workspace: &Path) -> (i32, String, String) {
        self.run_args(&self.args, workspace)
    }

    /// Runs another toolgate command (`audit verify`, …) in `workspace` with this run's
    /// state and config folders: exit code, stdout, stderr.
    pub fn run_args(
        &self,
        args: &[impl AsRef<std::ffi::OsStr>],
        workspace: &Path,
    ) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(workspace)
            .env("TOOLGATE_STATE_DIR", self.state_dir())
            .env("TOOLGATE_CONFIG_DIR", self.home.path().join("config"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("TOOLGATE_SCENARIO")
            .output()
            .expect("run toolgate");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }
}

/// The shipped binary in `workspace` with these state and config folders, its model the
/// local model server at `api_url` speaking `provider`'s wire format ("anthropic", or
/// "openai" for Chat Completions): a fake key, no other provider's key, no model override.
/// Callers add the command line (`-p PROMPT`, …).
pub fn on_model_api(
    api_url: &str,
    provider: &str,
    state: &Path,
    config: &Path,
    workspace: &Path,
) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    command
        .args(["--provider", provider])
        .current_dir(workspace)
        .env("TOOLGATE_STATE_DIR", state)
        .env("TOOLGATE_CONFIG_DIR", config)
        .env_remove("MODEL_ID");
    if provider == "openai" {
        command
            .env("OPENAI_API_KEY", "test-key")
            .env("OPENAI_BASE_URL", format!("{api_url}/v1"))
            .env_remove("ANTHROPIC_API_KEY");
    } else {
        command
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", api_url)
            .env_remove("OPENAI_API_KEY");
    }
    command
}
