//! toolgate's own configuration inside the workspace — `.mcp.json` and the `*.toml` files
//! in `.toolgate/` (rules, sandbox settings, deploy commands) — is not the agent's to
//! change behind the person's back. The file tools ask before writing them (a policy
//! guard); a command or a server cannot be asked first, so the agent snapshots these files
//! before the call and, if the call changed them, puts them back and reports the attempt.

use std::path::{Path, PathBuf};

/// The protected files as they were before a call (None: the file did not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFiles {
    workspace: PathBuf,
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

/// The files that configure toolgate for this workspace, present or not.
fn protected(workspace: &Path) -> Vec<PathBuf> {
    let mut files = vec![workspace.join(".mcp.json")];
    let dir = crate::paths::workspace_dir(workspace);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut tomls: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        tomls.sort();
        files.extend(tomls);
    }
    for name in ["config.toml", "deploy.toml"] {
        let path = dir.join(name);
        if !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

impl HostFiles {
    pub fn snapshot(workspace: &Path) -> HostFiles {
        let files = protected(workspace)
            .into_iter()
            .map(|path| {
                let content = std::fs::read(&path).ok();
                (path, content)
            })
            .collect();
        HostFiles {
            workspace: workspace.to_path_buf(),
            files,
        }
    }

    /// Puts back every protected file the call changed, created or removed. Returns what
    /// was changed (workspace-relative) and anything that could not be put back.
    pub fn restore_changes(&self) -> Restored {
        let mut restored = Restored::default();
        let now = protected(&self.workspace);
        let known: Vec<&PathBuf> = self.files.iter().map(|(p, _)| p).collect();
        let created = now.iter().filter(|p| !known.contains(p) && p.exists());
        for path in created {
            restored.note(&self.workspace, path, std::fs::remove_file(path));
        }
        for (path, before) in &self.files {
            let after = std::fs::read(path).ok();
            if &after == before {
                continue;
            }
            let result = match before {
                Some(bytes) => write_back(path, bytes),
                None => std::fs::remove_file(path),
            };
            restored.note(&self.workspace, path, result);
        }
        restored
    }
}

fn write_back(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // A command may have left a directory or a symlink in the file's place.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.is_file()
    {
        if meta.is_dir() {
            std::fs::remove_dir_all(path)?;
        } else {
            std::fs::remove_file(path)?;
        }
    }
    std::fs::write(path, bytes)
}

/// What a call did to the protected files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Restored {
    /// Put back as they were.
    pub files: Vec<String>,
    /// Could not be put back, with why.
    pub failed: Vec<String>,
}

impl Restored {
    fn note(&mut self, workspace: &Path, path: &Path, result: std::io::Result<()>) {
        let shown = path
            .strip_prefix(workspace)
            .unwrap_or(path)
            .display()
            .to_string();
        match result {
            Ok(()) => self.files.push(shown),
            Err(e) => self.failed.push(format!("{shown} ({e})")),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.failed.is_empty()
    }

    /// The line the tool result and the person get.
    pub fn report(&self, tool: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut text = String::from("[toolgate: ");
        if !self.files.is_empty() {
            text.push_str(&format!(
                "{tool} changed toolgate's own configuration ({}); it was put back. ",
                self.files.join(", ")
            ));
        }
        if !self.failed.is_empty() {
            text.push_str(&format!("Could not put back: {}. ", self.failed.join(", ")));
        }
        text.push_str(
            "Changing these files needs the person's approval: use edit_file or write_file, which ask.]",
        );
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_creations_and_removals_are_put_back() {
        let w = tempfile::tempdir().unwrap();
        let ws = w.path();
        std::fs::write(ws.join(".mcp.json"), "{\"mcpServers\": {}}").unwrap();
        std::fs::create_dir_all(ws.join(".toolgate")).unwrap();
        std::fs::write(ws.join(".toolgate/config.toml"), "[permissions]\n").unwrap();
        std::fs::write(ws.join(".toolgate/deployments.json"), "[]").unwrap();
        let before = HostFiles::snapshot(ws);

        std::fs::write(ws.join(".mcp.json"), "{\"mcpServers\": {\"evil\": {}}}").unwrap();
        std::fs::remove_file(ws.join(".toolgate/config.toml")).unwrap();
        std::fs::write(ws.join(".toolgate/deploy.toml"), "[services.x]\n").unwrap();
        std::fs::write(ws.join(".toolgate/extra.toml"), "x = 1\n").unwrap();
        // State the deploy server keeps is not configuration.
        std::fs::write(ws.join(".toolgate/deployments.json"), "[1]").unwrap();

        let restored = before.restore_changes();
        assert_eq!(
            std::fs::read_to_string(ws.join(".mcp.json")).unwrap(),
            "{\"mcpServers\": {}}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join(".toolgate/config.toml")).unwrap(),
            "[permissions]\n"
        );
        assert!(!ws.join(".toolgate/deploy.toml").exists());
        assert!(!ws.join(".toolgate/extra.toml").exists());
        assert_eq!(
            std::fs::read_to_string(ws.join(".toolgate/deployments.json")).unwrap(),
            "[1]"
        );
        let mut files = restored.files.clone();
        files.sort();
        assert_eq!(
            files,
            vec![
                ".mcp.json",
                ".toolgate/config.toml",
                ".toolgate/deploy.toml",
                ".toolgate/extra.toml"
            ]
        );
        let report = restored.report("bash").unwrap();
        assert!(report.contains("it was put back"), "{report}");
        assert_eq!(
            HostFiles::snapshot(ws).restore_changes(),
            Restored::default()
        );
    }
}
