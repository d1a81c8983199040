//! Running the `git` CLI against the shadow repository, isolated from everything the
//! person's own git setup could contribute: no system or global config, no inherited
//! `GIT_*` variables (a `GIT_DIR` or `GIT_INDEX_FILE` from a hook would point at the
//! person's repository), a fixed identity, literal pathspecs.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Author and committer of every checkpoint commit.
const IDENTITY_NAME: &str = "toolgate";
const IDENTITY_EMAIL: &str = "toolgate@localhost";

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git is not installed (checkpoints need the git command on PATH)")]
    Missing,
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("git {command} failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
}

/// One shadow repository (`git_dir`) whose work tree is the workspace.
#[derive(Debug, Clone)]
pub(super) struct Git {
    git_dir: PathBuf,
    work_tree: PathBuf,
    index: PathBuf,
}

impl Git {
    pub(super) fn new(git_dir: PathBuf, work_tree: PathBuf) -> Git {
        Git {
            index: git_dir.join("index"),
            git_dir,
            work_tree,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = isolated_git();
        command
            .args(args)
            .current_dir(&self.work_tree)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", null_device())
            .env("GIT_AUTHOR_NAME", IDENTITY_NAME)
            .env("GIT_AUTHOR_EMAIL", IDENTITY_EMAIL)
            .env("GIT_COMMITTER_NAME", IDENTITY_NAME)
            .env("GIT_COMMITTER_EMAIL", IDENTITY_EMAIL)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("LC_ALL", "C")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Runs `git ARGS`, feeding `input` on stdin; returns stdout.
    pub(super) fn run(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
        run_command(self.command(args), args, input)
    }

    pub(super) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Points the shadow's HEAD at `commit` (detached). Written directly rather than by
    /// `git update-ref`: one process less per snapshot, and under the shadow's lock no
    /// other writer can race it. A detached HEAD in the files backend is the object name
    /// and a newline; the rename makes the switch atomic.
    pub(super) fn set_head(&self, commit: &str) -> std::io::Result<()> {
        let temporary = self.git_dir.join("HEAD.toolgate");
        std::fs::write(&temporary, format!("{commit}\n"))?;
        std::fs::rename(&temporary, self.git_dir.join("HEAD"))
    }

    /// `git init --bare` of the shadow repository. It runs without a work tree: `git init`
    /// with one would record it, and could write a `.git` file into it.
    pub(super) fn init_bare(git_dir: &Path) -> Result<(), GitError> {
        let mut command = isolated_git();
        command
            .arg("init")
            .arg("--quiet")
            .arg("--bare")
            // An empty template: no sample hooks, no description file.
            .arg("--template=")
            .arg(git_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", null_device())
            .env("LC_ALL", "C")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        run_command(command, &["init"], None).map(drop)
    }
}

/// `git` without any `GIT_*` variable of ours.
fn isolated_git() -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
}

fn null_device() -> &'static str {
    if cfg!(windows) { "NUL" } else { "/dev/null" }
}

fn run_command(
    mut command: Command,
    args: &[&str],
    input: Option<&[u8]>,
) -> Result<Vec<u8>, GitError> {
    command.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GitError::Missing,
        _ => GitError::Spawn(e),
    })?;
    // Writing on another thread while this one collects the output: a long path list
    // must not fill the pipe while git waits for us to read its stdout.
    let output = std::thread::scope(|scope| {
        if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
            scope.spawn(move || {
                // A git that exits early closes the pipe; its status reports why.
                let _ = stdin.write_all(input);
            });
        }
        child.wait_with_output()
    })
    .map_err(GitError::Spawn)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(GitError::Failed {
            command: args.first().copied().unwrap_or_default().to_string(),
            status: output.status.to_string(),
            stderr: stderr
                .trim()
                .lines()
                .take(5)
                .collect::<Vec<_>>()
                .join(" / "),
        })
    }
}

/// A path as git prints it (bytes, `/`-separated, relative to the work tree).
pub(super) fn path_from_git(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// A relative path as git reads it on stdin (`--stdin -z`, `--pathspec-file-nul`).
pub(super) fn path_to_git(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

/// Joins paths into git's NUL-separated stdin format.
pub(super) fn nul_list<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(&path_to_git(path));
        out.push(0);
    }
    out
}

/// Trims the newline git ends a single-value answer with.
pub(super) fn single_line(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}
