//! What a reload changes: servers added, removed, and changed (same name, another
//! definition: command, arguments, environment, URL, headers, scope …).

use super::ServerConfig;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigDiff {
    /// In the new configuration's order.
    pub added: Vec<String>,
    /// In the old configuration's order.
    pub removed: Vec<String>,
    /// In the new configuration's order.
    pub changed: Vec<String>,
}

impl ConfigDiff {
    pub fn between(old: &[ServerConfig], new: &[ServerConfig]) -> ConfigDiff {
        let find = |list: &[ServerConfig], name: &str| list.iter().position(|c| c.name == name);
        let mut diff = ConfigDiff::default();
        for server in new {
            match find(old, &server.name) {
                None => diff.added.push(server.name.clone()),
                Some(i) if old[i] != *server => diff.changed.push(server.name.clone()),
                Some(_) => {}
            }
        }
        diff.removed = old
            .iter()
            .filter(|s| find(new, &s.name).is_none())
            .map(|s| s.name.clone())
            .collect();
        diff
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// One line for the person, e.g. `added: a; removed: b; changed: c`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| format!("{what}: {}", names.join(", ")))
        .collect();
        if parts.is_empty() {
            "no server changed".into()
        } else {
            parts.join("; ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{ConfigSource, LoadOptions, load_servers_with_env};
    use crate::test_support::temp_path;

    #[test]
    fn added_removed_and_changed_by_name() {
        let (ws, file) = temp_path(".mcp.json");
        let load = |text: &str| {
            std::fs::write(&file, text).unwrap();
            load_servers_with_env(
                &LoadOptions {
                    workspace: ws.path().to_path_buf(),
                    user_config_dir: None,
                    flag_files: Vec::new(),
                    trust_project: true,
                    ..Default::default()
                },
                &|_| None,
            )
            .servers
        };
        let old = load(
            r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}}}"#,
        );
        let new = load(
            r#"{"mcpServers": {"a": {"command": "x"}, "c": {"command": "z", "env": {"K": "v"}}, "d": {"command": "w"}}}"#,
        );
        let diff = ConfigDiff::between(&old, &new);
        assert_eq!(diff.added, ["d"]);
        assert_eq!(diff.removed, ["b"]);
        assert_eq!(diff.changed, ["c"]);
        assert_eq!(diff.summary(), "added: d; removed: b; changed: c");
        assert!(ConfigDiff::between(&new, &new).is_empty());
        assert!(matches!(new[0].source, ConfigSource::Embedded));
    }
}
