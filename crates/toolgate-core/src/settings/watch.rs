//! Watching the configuration files of a running console: `.mcp.json`, the user's
//! `mcp.json`, `--mcp-config` files, and the `config.toml` files with permission rules.
//! Changes are debounced (an editor's save is often several events: a temporary file, a
//! rename, a metadata change) and handed on as one batch of changed paths.

use super::LoadOptions;
use notify::{EventKind, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// Quiet time after the last event before a batch is handed on.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// The server files whose changes matter for `opts`, whether they exist yet or not.
/// (The permission rules' `config.toml` files are added by `agent::ConfigReload`.)
pub fn watched_files(opts: &LoadOptions) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dir) = &opts.user_config_dir {
        files.push(dir.join("mcp.json"));
    }
    files.push(opts.workspace.join(".mcp.json"));
    files.extend(opts.flag_files.iter().cloned());
    files
}

/// Keeps the watch alive; dropping it stops watching (and ends the debounce task).
pub struct ConfigWatcher {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
}

/// What the notify thread hands to the debounce task.
enum Seen {
    /// A watched file changed.
    File(PathBuf),
    /// A folder on the way to watched files appeared: watch deeper, and count the files
    /// under it as changed (they may have been written before the new watch was set).
    Folder(PathBuf),
}

/// Watches `files` and calls `on_change` with each debounced batch of changed files.
/// Folders are watched rather than files: a save by rename replaces the file (a watch on
/// it would end), and a file that does not exist yet can still appear. A folder that does
/// not exist yet is covered by watching its nearest existing parent until it appears.
/// Must be called inside a tokio runtime.
pub fn watch(
    files: Vec<PathBuf>,
    on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
) -> Result<ConfigWatcher, notify::Error> {
    let (tx, rx) = mpsc::unbounded_channel::<Seen>();
    let wanted = files.clone();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
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
        let created = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_));
        for path in event.paths {
            if wanted.iter().any(|w| same_file(w, &path)) {
                let _ = tx.send(Seen::File(path));
            } else if created
                && wanted
                    .iter()
                    .any(|w| w.parent().is_some_and(|folder| folder.starts_with(&path)))
            {
                let _ = tx.send(Seen::Folder(path));
            }
        }
    })?;
    let watcher = Arc::new(Mutex::new(watcher));
    let mut watched = Vec::new();
    add_watches(&watcher, &files, &mut watched)?;
    tokio::spawn(debounce(
        rx,
        Arc::downgrade(&watcher),
        files,
        watched,
        on_change,
    ));
    Ok(ConfigWatcher { _watcher: watcher })
}

/// Watches each file's folder, or its nearest existing ancestor, once.
fn add_watches(
    watcher: &Mutex<notify::RecommendedWatcher>,
    files: &[PathBuf],
    watched: &mut Vec<PathBuf>,
) -> Result<(), notify::Error> {
    let mut watcher = watcher.lock().unwrap_or_else(|p| p.into_inner());
    for file in files {
        let Some(folder) = file.ancestors().skip(1).find(|a| a.is_dir()) else {
            continue;
        };
        if !watched.iter().any(|w| w == folder) {
            watcher.watch(folder, RecursiveMode::NonRecursive)?;
            watched.push(folder.to_path_buf());
        }
    }
    Ok(())
}

/// Events name the path under the folder as it was given to the watcher; compare by
/// folder and name so `./x` and `x` spellings of the same folder still match.
pub fn same_file(wanted: &Path, seen: &Path) -> bool {
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
    mut rx: mpsc::UnboundedReceiver<Seen>,
    watcher: Weak<Mutex<notify::RecommendedWatcher>>,
    files: Vec<PathBuf>,
    mut watched: Vec<PathBuf>,
    on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
) {
    let mut take = |seen: Seen, batch: &mut BTreeSet<PathBuf>| match seen {
        Seen::File(path) => {
            batch.insert(path);
        }
        Seen::Folder(folder) => {
            if let Some(watcher) = watcher.upgrade()
                && let Err(e) = add_watches(&watcher, &files, &mut watched)
            {
                tracing::warn!("cannot watch {}: {e}", folder.display());
            }
            batch.extend(
                files
                    .iter()
                    .filter(|f| f.starts_with(&folder) && f.is_file())
                    .cloned(),
            );
        }
    };
    while let Some(first) = rx.recv().await {
        let mut batch = BTreeSet::new();
        take(first, &mut batch);
        loop {
            match tokio::time::timeout(DEBOUNCE, rx.recv()).await {
                Ok(Some(seen)) => take(seen, &mut batch),
                Ok(None) => return,
                Err(_quiet) => break,
            }
        }
        if !batch.is_empty() {
            on_change(batch.into_iter().collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_path;

    /// Watches `file`; its batches arrive on the receiver.
    fn watched(file: &Path) -> (ConfigWatcher, mpsc::UnboundedReceiver<Vec<PathBuf>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let watch = watch(vec![file.to_path_buf()], move |batch| {
            let _ = tx.send(batch);
        })
        .unwrap();
        (watch, rx)
    }

    /// The next batch, within 10 s.
    async fn next_batch(rx: &mut mpsc::UnboundedReceiver<Vec<PathBuf>>) -> Vec<PathBuf> {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
            .unwrap()
    }

    #[tokio::test]
    async fn a_save_by_rename_is_one_batch_and_other_files_are_ignored() {
        let (dir, file) = temp_path(".mcp.json");
        let (_watch, mut rx) = watched(&file);
        std::fs::write(dir.path().join("unrelated.txt"), "x").unwrap();
        let tmp = dir.path().join(".mcp.json.tmp");
        std::fs::write(&tmp, "{}").unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        std::fs::write(&file, "{\"mcpServers\": {}}").unwrap();
        let batch = next_batch(&mut rx).await;
        assert_eq!(batch, std::slice::from_ref(&file));
        // Reading it is no change.
        let _ = std::fs::read_to_string(&file).unwrap();
        assert!(
            tokio::time::timeout(DEBOUNCE * 3, rx.recv()).await.is_err(),
            "a read or an unrelated file produced a batch"
        );
    }

    #[tokio::test]
    async fn a_file_in_a_folder_created_later_is_seen() {
        let (_dir, file) = temp_path("config/toolgate/mcp.json");
        let (_watch, mut rx) = watched(&file);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{}").unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let batch = tokio::time::timeout_at(deadline, rx.recv())
                .await
                .unwrap()
                .unwrap();
            if batch.contains(&file) {
                break;
            }
        }
        // Later edits are seen through the new folder's own watch.
        while tokio::time::timeout(DEBOUNCE * 2, rx.recv()).await.is_ok() {}
        std::fs::write(&file, "{\"mcpServers\": {}}").unwrap();
        let batch = next_batch(&mut rx).await;
        assert_eq!(batch, std::slice::from_ref(&file));
    }
}
