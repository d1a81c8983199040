//! `[sandbox]` of the managed files: a floor under the sandbox settings. The user's and
//! the project's files may tighten the sandbox, never loosen it. "Tighter", key by key:
//! - `mode`: read-only is tighter than workspace-write, which is tighter than off;
//! - `network`: a ceiling, false < "proxy" < true (a server's host list counts as "proxy");
//! - `writable`: the managed list is a ceiling; another layer's extra writable path is
//!   kept only when it lies inside one of the managed paths (the managed paths are not
//!   made writable by being listed);
//! - `deny_read`: the managed paths are added to whatever the other layers deny;
//! - `env_passthrough`: the managed list is a ceiling on the names other layers may pass;
//! - `[sandbox.servers]` `mode` / `network`: the same floor for stdio servers, applied to
//!   the default and to each server entry's own `"sandbox"` / `"network"`.
//!
//! A key the managed files leave out constrains nothing. With two managed files, each
//! floor applies (the stricter wins).

use std::path::{Path, PathBuf};

use super::{
    Diagnostic, NetworkAccess, SandboxMode, SandboxSettings, ServerNetwork, ServerSandbox,
    ServerTransport,
};

/// How strict a mode is (higher: stricter).
fn strictness(mode: SandboxMode) -> u8 {
    match mode {
        SandboxMode::Off => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::ReadOnly => 2,
    }
}

fn stricter(a: SandboxMode, b: SandboxMode) -> SandboxMode {
    if strictness(b) > strictness(a) { b } else { a }
}

/// The managed floor; every field None (or empty) constrains nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxFloor {
    pub mode: Option<SandboxMode>,
    pub network: Option<NetworkAccess>,
    pub writable: Option<Vec<PathBuf>>,
    pub deny_read: Vec<PathBuf>,
    pub env_passthrough: Option<Vec<String>>,
    pub servers_mode: Option<SandboxMode>,
    pub servers_network: Option<NetworkAccess>,
}

/// `read` as a ceiling over an earlier managed file's: the lower stays.
fn lower(slot: Option<NetworkAccess>, read: NetworkAccess) -> Option<NetworkAccess> {
    Some(slot.map_or(read, |earlier| earlier.min(read)))
}

/// What the ceiling did to a network value, for the lines `apply` returns.
fn lowered(ceiling: NetworkAccess) -> String {
    match ceiling {
        NetworkAccess::None => "turned off".into(),
        other => format!("lowered to {other}"),
    }
}

impl SandboxFloor {
    pub fn is_empty(&self) -> bool {
        *self == SandboxFloor::default()
    }

    /// Reads `[sandbox]` of one managed file with the same reader as every other file's
    /// (so the values mean the same), then keeps what the file set as floor values.
    pub(super) fn add_table(
        &mut self,
        table: &dyn toml_edit::TableLike,
        text: &str,
        file: &str,
    ) -> Vec<Diagnostic> {
        let mut read = SandboxSettings::default();
        // Relative paths have no base in a system file: the reader refuses them.
        let diagnostics = super::sandbox::apply_layer(&mut read, text, file, None);
        if !diagnostics.is_empty() {
            return diagnostics;
        }
        let has = |key: &str| table.contains_key(key);
        if has("mode") {
            self.mode = Some(self.mode.map_or(read.mode, |m| stricter(m, read.mode)));
        }
        if has("network") {
            self.network = lower(self.network, read.network);
        }
        // Both files cap: a value stays when it is within each file's list.
        if has("writable") {
            add_ceiling(&mut self.writable, read.writable, |p, l| inside_any(p, l));
        }
        self.deny_read.extend(read.deny_read);
        if has("env_passthrough") {
            add_ceiling(&mut self.env_passthrough, read.env_passthrough, |n, l| {
                l.contains(n)
            });
        }
        if let Some(servers) = table.get("servers").and_then(|s| s.as_table_like()) {
            if servers.contains_key("mode") {
                let mode = read.servers.mode;
                self.servers_mode = Some(self.servers_mode.map_or(mode, |m| stricter(m, mode)));
            }
            if servers.contains_key("network") {
                self.servers_network = lower(self.servers_network, read.servers.network);
            }
        }
        Vec::new()
    }

    /// Puts the floor under `settings` (the other layers' result); returns one line per
    /// value it changed, naming what the other layers said.
    pub fn apply(&self, settings: &mut SandboxSettings) -> Vec<String> {
        let mut changed = Vec::new();
        if let Some(floor) = self.mode {
            let mode = stricter(settings.mode, floor);
            if mode != settings.mode {
                changed.push(format!(
                    "sandbox.mode = \"{}\" of the user or project config is raised to \"{mode}\"",
                    settings.mode
                ));
                settings.mode = mode;
            }
        }
        if let Some(ceiling) = self.network.filter(|c| settings.network > *c) {
            changed.push(format!(
                "sandbox.network = {} of the user or project config is {}",
                settings.network,
                lowered(ceiling)
            ));
            settings.network = ceiling;
        }
        if let Some(ceiling) = &self.writable {
            let dropped = keep_within(&mut settings.writable, ceiling, |p, l| inside_any(p, l));
            changed.extend(dropped.iter().map(|p| {
                format!(
                    "sandbox.writable {} of the user or project config is outside the managed writable paths; not writable",
                    p.display()
                )
            }));
        }
        for path in &self.deny_read {
            if !settings.deny_read.contains(path) {
                settings.deny_read.push(path.clone());
            }
        }
        if let Some(ceiling) = &self.env_passthrough {
            let dropped = keep_within(&mut settings.env_passthrough, ceiling, |n, l| l.contains(n));
            changed.extend(dropped.iter().map(|n| {
                format!("sandbox.env_passthrough {n} of the user or project config is not in the managed list; not passed")
            }));
        }
        let mut servers = ServerSandbox {
            mode: Some(settings.servers.mode),
            network: Some(ServerNetwork::Access(settings.servers.network)),
        };
        if let Some(line) = self.clamp_server(&mut servers, "sandbox.servers") {
            changed.push(line);
        }
        settings.servers.mode = servers.mode.unwrap_or(settings.servers.mode);
        if let Some(network) = servers.network {
            settings.servers.network = network.access();
        }
        changed
    }

    /// The server floor over one server entry's own choice (`None` stays None: it takes
    /// the default, which the floor has raised already). Says what it changed.
    fn clamp_server(&self, choice: &mut ServerSandbox, what: &str) -> Option<String> {
        let mut parts = Vec::new();
        if let (Some(floor), Some(mode)) = (self.servers_mode, choice.mode) {
            let raised = stricter(mode, floor);
            if raised != mode {
                parts.push(format!("mode \"{mode}\" raised to \"{raised}\""));
                choice.mode = Some(raised);
            }
        }
        let chosen = choice.network.as_ref().map(ServerNetwork::access);
        if let (Some(ceiling), Some(access)) = (self.servers_network, chosen)
            && access > ceiling
        {
            parts.push(format!("network {}", lowered(ceiling)));
            choice.network = Some(ServerNetwork::Access(ceiling));
        }
        (!parts.is_empty()).then(|| format!("{what}: {}", parts.join(", ")))
    }

    /// The server floor over every stdio server entry of `servers`.
    pub fn apply_to_servers(&self, servers: &mut [super::ServerConfig]) -> Vec<String> {
        servers
            .iter_mut()
            .filter(|s| matches!(s.transport, ServerTransport::Stdio { .. }))
            .filter_map(|s| {
                let what = format!("server '{}'", s.name);
                self.clamp_server(&mut s.sandbox, &what)
            })
            .collect()
    }

    /// Lines describing the floor (for `toolgate status` and `/permissions`).
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(mode) = self.mode {
            lines.push(format!("sandbox.mode at least \"{mode}\""));
        }
        if let Some(ceiling) = self.network.filter(|c| *c < NetworkAccess::Full) {
            lines.push(format!("sandbox.network at most {ceiling}"));
        }
        if let Some(paths) = &self.writable {
            let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            lines.push(format!("sandbox.writable within [{}]", shown.join(", ")));
        }
        if !self.deny_read.is_empty() {
            let shown: Vec<String> = self
                .deny_read
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            lines.push(format!("sandbox.deny_read includes [{}]", shown.join(", ")));
        }
        if let Some(names) = &self.env_passthrough {
            lines.push(format!(
                "sandbox.env_passthrough within [{}]",
                names.join(", ")
            ));
        }
        if let Some(mode) = self.servers_mode {
            lines.push(format!("sandbox.servers.mode at least \"{mode}\""));
        }
        if let Some(ceiling) = self.servers_network.filter(|c| *c < NetworkAccess::Full) {
            lines.push(format!("sandbox.servers.network at most {ceiling}"));
        }
        lines
    }
}

/// A managed file's list `read` as a ceiling over the earlier files' `slot`: with one
/// already, only what `within` both stays.
fn add_ceiling<T>(slot: &mut Option<Vec<T>>, read: Vec<T>, within: impl Fn(&T, &[T]) -> bool) {
    *slot = Some(match slot.take() {
        None => read,
        Some(earlier) => read.into_iter().filter(|v| within(v, &earlier)).collect(),
    });
}

/// Keeps the values of `values` that are `within` the `ceiling`; returns the others.
fn keep_within<T>(values: &mut Vec<T>, ceiling: &[T], within: impl Fn(&T, &[T]) -> bool) -> Vec<T> {
    let (kept, dropped) = std::mem::take(values)
        .into_iter()
        .partition(|v| within(v, ceiling));
    *values = kept;
    dropped
}

fn inside_any(path: &Path, ceiling: &[PathBuf]) -> bool {
    ceiling.iter().any(|top| path.starts_with(top))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{ConfigSource, ServerConfig};

    fn floor(text: &str) -> SandboxFloor {
        let doc = toml_edit::Document::parse(text).unwrap();
        let table = doc.get("sandbox").unwrap().as_table_like().unwrap();
        let mut floor = SandboxFloor::default();
        let diags = floor.add_table(table, text, "m.toml");
        assert!(diags.is_empty(), "{diags:?}");
        floor
    }

    #[test]
    fn other_layers_tighten_but_never_loosen() {
        let floor = floor(
            "[sandbox]\nmode = \"workspace-write\"\nnetwork = false\nwritable = [\"/opt\"]\ndeny_read = [\"/secret\"]\nenv_passthrough = [\"NPM_TOKEN\"]\n[sandbox.servers]\nmode = \"workspace-write\"\n",
        );
        let mut loose = SandboxSettings {
            mode: SandboxMode::Off,
            network: NetworkAccess::Full,
            writable: vec!["/opt/cache".into(), "/home/u".into()],
            env_passthrough: vec!["NPM_TOKEN".into(), "AWS_SECRET".into()],
            ..SandboxSettings::default()
        };
        let lines = floor.apply(&mut loose);
        assert_eq!(loose.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(loose.network, NetworkAccess::None);
        assert_eq!(loose.writable, [PathBuf::from("/opt/cache")]);
        assert_eq!(loose.deny_read, [PathBuf::from("/secret")]);
        assert_eq!(loose.env_passthrough, ["NPM_TOKEN"]);
        assert_eq!(loose.servers.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(lines.len(), 5, "{lines:#?}");
        assert!(
            lines[0]
                .contains("\"off\" of the user or project config is raised to \"workspace-write\"")
        );

        let mut tight = SandboxSettings {
            mode: SandboxMode::ReadOnly,
            network: NetworkAccess::None,
            ..SandboxSettings::default()
        };
        tight.servers.mode = SandboxMode::ReadOnly;
        let before = tight.clone();
        let lines = floor.apply(&mut tight);
        assert_eq!(tight.mode, SandboxMode::ReadOnly);
        assert_eq!(tight.servers.mode, SandboxMode::ReadOnly);
        assert_eq!(tight.deny_read, [PathBuf::from("/secret")]);
        assert_eq!(tight.writable, before.writable);
        assert!(lines.is_empty(), "{lines:?}");
    }

    #[test]
    fn a_server_entry_cannot_choose_below_the_floor() {
        let floor = floor("[sandbox.servers]\nmode = \"read-only\"\nnetwork = false\n");
        let mut servers = vec![ServerConfig {
            name: "wide".into(),
            transport: ServerTransport::Stdio {
                command: "x".into(),
                args: vec![],
                env: Default::default(),
                cwd: None,
            },
            source: ConfigSource::Embedded,
            call_timeout_ms: 1,
            sandbox: ServerSandbox {
                mode: Some(SandboxMode::Off),
                network: Some(ServerNetwork::Access(NetworkAccess::Full)),
            },
            pool: Default::default(),
            always_load: false,
        }];
        let lines = floor.apply_to_servers(&mut servers);
        assert_eq!(
            servers[0].sandbox,
            ServerSandbox {
                mode: Some(SandboxMode::ReadOnly),
                network: Some(ServerNetwork::Access(NetworkAccess::None))
            }
        );
        assert_eq!(
            lines,
            ["server 'wide': mode \"off\" raised to \"read-only\", network turned off"]
        );
        assert_eq!(floor.describe().len(), 2);
    }

    #[test]
    fn a_managed_proxy_is_a_ceiling_for_bash_and_servers() {
        let floor =
            floor("[sandbox]\nnetwork = \"proxy\"\n[sandbox.servers]\nnetwork = \"proxy\"\n");
        let mut settings = SandboxSettings {
            network: NetworkAccess::Full,
            ..SandboxSettings::default()
        };
        let lines = floor.apply(&mut settings);
        assert_eq!(settings.network, NetworkAccess::Proxy);
        assert_eq!(
            lines,
            ["sandbox.network = true of the user or project config is lowered to \"proxy\""]
        );
        // Below the ceiling nothing changes; a host list is the proxy and stays.
        let mut offline = SandboxSettings {
            network: NetworkAccess::None,
            ..SandboxSettings::default()
        };
        assert!(floor.apply(&mut offline).is_empty());
        assert_eq!(offline.network, NetworkAccess::None);
        let mut listed = ServerSandbox {
            mode: None,
            network: Some(ServerNetwork::Hosts(vec!["example.com".into()])),
        };
        assert_eq!(floor.clamp_server(&mut listed, "s"), None);
        let mut full = ServerSandbox {
            mode: None,
            network: Some(ServerNetwork::Access(NetworkAccess::Full)),
        };
        assert_eq!(
            floor.clamp_server(&mut full, "s").as_deref(),
            Some("s: network lowered to \"proxy\"")
        );
        assert_eq!(
            floor.describe(),
            [
                "sandbox.network at most \"proxy\"",
                "sandbox.servers.network at most \"proxy\""
            ]
        );
        // Two files: the lower ceiling wins.
        let mut two = floor.clone();
        let text = "[sandbox]\nnetwork = false\n";
        let doc = toml_edit::Document::parse(text).unwrap();
        two.add_table(
            doc.get("sandbox").unwrap().as_table_like().unwrap(),
            text,
            "b.toml",
        );
        assert_eq!(two.network, Some(NetworkAccess::None));
    }

    #[test]
    fn a_loose_managed_value_constrains_nothing_and_two_files_take_the_stricter() {
        let mut floor = floor("[sandbox]\nmode = \"off\"\n");
        let mut settings = SandboxSettings::default();
        assert!(floor.apply(&mut settings).is_empty());
        assert_eq!(settings.mode, SandboxMode::WorkspaceWrite);
        let text = "[sandbox]\nmode = \"read-only\"\n";
        let doc = toml_edit::Document::parse(text).unwrap();
        let table = doc.get("sandbox").unwrap().as_table_like().unwrap();
        floor.add_table(table, text, "second.toml");
        assert_eq!(floor.mode, Some(SandboxMode::ReadOnly));
    }
}
