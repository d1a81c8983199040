//! Watching the configuration files of a running console: the server files (`.mcp.json`,
//! the user's `mcp.json`, `--mcp-config` files) and the `config.toml` files beside them.
//! Changes are debounced (an editor's save is often several events: a temporary file, a
//! rename, a metadata change) and handed on as one batch of changed paths.

use super::LoadOptions;
use notify::{EventKind, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

/// Quiet time after the last event before a batch is handed on.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// The files whose changes matter for `opts`, whether they exist yet or not.
pub fn watched_files(opts: &LoadOptions) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dir) = &opts.user_config_dir {
        files.push(dir.join("mcp.json"));
        files.push(dir.join("config.toml"));
    }
    files.push(opts.workspace.join(".mcp.json"));
    files.push(crate::paths::workspace_dir(&opts.workspace).join("config.toml"));
    files.extend(opts.flag_files.iter().cloned());
    files
}

/// Keeps the watch alive; dropping it stops watching (and ends the debounce task).
pub struct ConfigWatcher {
    _watcher: notify::RecommendedWatcher,
    /// The folders watched (a file's folder; a folder that does not exist yet is not).
    pub folders: Vec<PathBuf>,
}

/// Watches `files` and calls `on_change` with each debounced batch of changed files.
/// Folders are watched rather than files: a save by rename replaces the file (a watch on
/// it would end), and a file that does not exist yet can still appear. Must be called
/// inside a tokio runtime.
pub fn watch(
    files: Vec<PathBuf>,
    on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
) -> Result<ConfigWatcher, notify::Error> {
    let (tx, rx) = mpsc::unbounded_channel::<PathBuf>();
    let wanted = files.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else {
            return;
        };
        // Reading a file (our own reload does) must not count as a change.
        if matches!(
            event.kind,
            EventKind::Access(_) | EventKind::Modify(notify::event::ModifyKind::Metadata(_))
        ) {
            return;
        }
        for path in event.paths {
            if wanted.iter().any(|w| same_file(w, &path)) {
                let _ = tx.send(path);
            }
        }
    })?;
    let mut folders: Vec<PathBuf> = Vec::new();
    for file in &files {
        let Some(folder) = file.parent() else {
            continue;
        };
        if folder.is_dir() && !folders.iter().any(|f| f == folder) {
            watcher.watch(folder, RecursiveMode::NonRecursive)?;
            folders.push(folder.to_path_buf());
        }
    }
    tokio::spawn(debounce(rx, on_change));
    Ok(ConfigWatcher {
        _watcher: watcher,
        folders,
    })
}

/// Events name the path under the folder as it was given to the watcher; compare by
/// folder and name so `./x` and `x` spellings of the same folder still match.
fn same_file(wanted: &Path, seen: &Path) -> bool {
    wanted == seen
        || (wanted.file_name() == seen.file_name()
            && match (wanted.parent(), seen.parent()) {
                (Some(a), Some(b)) => {
                    a == b
                        || (a.canonicalize().ok().zip(b.canonicalize().ok()))
                            .is_some_and(|(a, b)| a == b)
                }
                _ => false,
            })
}

async fn debounce(
    mut rx: mpsc::UnboundedReceiver<PathBuf>,
    on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
) {
    while let Some(first) = rx.recv().await {
        let mut batch = BTreeSet::from([first]);
        loop {
            match tokio::time::timeout(DEBOUNCE, rx.recv()).await {
                Ok(Some(path)) => {
                    batch.insert(path);
                }
                Ok(None) => return,
                Err(_quiet) => break,
            }
        }
        on_change(batch.into_iter().collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_save_by_rename_is_one_batch_and_other_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".mcp.json");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _watch = watch(vec![file.clone()], move |batch| {
            let _ = tx.send(batch);
        })
        .unwrap();
        std::fs::write(dir.path().join("unrelated.txt"), "x").unwrap();
        let tmp = dir.path().join(".mcp.json.tmp");
        std::fs::write(&tmp, "{}").unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        std::fs::write(&file, "{\"mcpServers\": {}}").unwrap();
        let batch = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(batch, std::slice::from_ref(&file));
        // Reading it is no change.
        let _ = std::fs::read_to_string(&file).unwrap();
        assert!(
            tokio::time::timeout(DEBOUNCE * 3, rx.recv()).await.is_err(),
            "a read or an unrelated file produced a batch"
        );
    }
}
