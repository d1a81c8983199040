//! `[sandbox]` in `config.toml`: the user's file (`~/.config/toolgate/config.toml`) and,
//! in a trusted workspace, the project's `.toolgate/config.toml` — the same files as
//! `[permissions]`. Every malformed value is a diagnostic with file, line and column; the
//! value then keeps its default (the strict one) rather than being guessed.
//!
//! Layering: a later file's `mode` and `network` replace the earlier ones; `writable`,
//! `deny_read` and `env_passthrough` add up.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use super::Diagnostic;

/// How much of the file system a process may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only under the workspace, the temp dir and configured paths.
    #[default]
    WorkspaceWrite,
    /// No writes at all (except to devices such as /dev/null).
    ReadOnly,
    /// No sandbox.
    Off,
}

impl SandboxMode {
    pub const NAMES: &'static str = "\"workspace-write\", \"read-only\" or \"off\"";

    pub fn parse(text: &str) -> Option<SandboxMode> {
        match text {
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "read-only" => Some(SandboxMode::ReadOnly),
            "off" => Some(SandboxMode::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much network a confined process gets, ordered from the least to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkAccess {
    /// No socket but AF_UNIX.
    #[default]
    None,
    /// TCP to toolgate's egress proxy only, which asks the gate for each host (decision 0099).
    Proxy,
    /// The whole network.
    Full,
}

impl NetworkAccess {
    /// The values a `network` key takes, as written in a file.
    pub const NAMES: &'static str = "false, \"proxy\" or true";

    /// `false`, `"proxy"` or `true` in TOML.
    pub fn from_toml(value: &toml_edit::Item) -> Option<NetworkAccess> {
        match (value.as_bool(), value.as_str()) {
            (Some(false), _) => Some(NetworkAccess::None),
            (Some(true), _) => Some(NetworkAccess::Full),
            (_, Some("proxy")) => Some(NetworkAccess::Proxy),
            _ => None,
        }
    }

    /// As written in a file: `false`, `"proxy"`, `true`.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkAccess::None => "false",
            NetworkAccess::Proxy => "\"proxy\"",
            NetworkAccess::Full => "true",
        }
    }
}

impl std::fmt::Display for NetworkAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The sandbox settings of a session. The default is the strict one: bash writes only in
/// the workspace (`SandboxMode`'s default) and reaches the network only through toolgate's
/// proxy, which asks for each new host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// bash's profile.
    pub mode: SandboxMode,
    /// How bash may use the network (`"proxy"` by default).
    pub network: NetworkAccess,
    /// Extra writable paths (absolute) for workspace-write profiles.
    pub writable: Vec<PathBuf>,
    /// Extra unreadable paths (absolute), added to the credential locations.
    pub deny_read: Vec<PathBuf>,
    /// Variables that pass to tools although their names look secret.
    pub env_passthrough: Vec<String>,
    /// Default for stdio MCP servers whose `.mcp.json` entry names no `"sandbox"`.
    pub servers: ServerDefaults,
    /// The home directory whose credential folders are denied; `None` is the user's home.
    /// Tests point it at a fake home.
    pub home: Option<PathBuf>,
    /// The managed file whose `[sandbox]` floor is in force: then no bash command leaves
    /// the sandbox, not even with the person's approval (the floor would mean nothing).
    pub managed_floor: Option<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: SandboxMode::default(),
            network: NetworkAccess::Proxy,
            writable: Vec::new(),
            deny_read: Vec::new(),
            env_passthrough: Vec::new(),
            servers: ServerDefaults::default(),
            home: None,
            managed_floor: None,
        }
    }
}

/// `[sandbox.servers]`: the profile of stdio MCP servers that do not choose one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerDefaults {
    /// `off` by default: third-party servers commonly write caches under the home
    /// directory and call web APIs; a person opts them in, per server or for all.
    pub mode: SandboxMode,
    pub network: NetworkAccess,
}

impl Default for ServerDefaults {
    fn default() -> Self {
        ServerDefaults {
            mode: SandboxMode::Off,
            network: NetworkAccess::None,
        }
    }
}

/// Applies one file's `[sandbox]` table over `settings`. `relative_base` is where
/// relative paths point (the workspace, for the project file); None refuses them.
pub fn apply_layer(
    settings: &mut SandboxSettings,
    text: &str,
    file: &str,
    relative_base: Option<&Path>,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let diag = |offset: usize, message: String| Diagnostic::at(text, file, offset, message);
    let doc = match super::toml::parse(text, file, "[sandbox] settings") {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    let table = match super::toml::table(&doc, "sandbox", text, file) {
        Ok(Some(table)) => table,
        Ok(None) => return diagnostics,
        Err(problem) => return vec![problem],
    };
    let at = super::toml::offset;
    for (key, value) in table.iter() {
        let here = at(value);
        match key {
            "mode" | "network" => diagnostics.extend(set_profile_key(
                (&mut settings.mode, &mut settings.network),
                "sandbox",
                key,
                value,
                |m| diag(here, m),
            )),
            "writable" | "deny_read" => {
                let paths = strings(value, key, &diag, &mut diagnostics)
                    .into_iter()
                    .filter_map(|(offset, text)| match config_path(&text, relative_base) {
                        Ok(path) => Some(path),
                        Err(message) => {
                            diagnostics.push(diag(offset, format!("sandbox.{key}: {message}")));
                            None
                        }
                    });
                let list = if key == "writable" {
                    &mut settings.writable
                } else {
                    &mut settings.deny_read
                };
                list.extend(paths);
            }
            "env_passthrough" => {
                for (offset, name) in strings(value, key, &diag, &mut diagnostics) {
                    if name.is_empty() || name.contains('=') || name.contains('\0') {
                        diagnostics.push(diag(
                            offset,
                            format!("sandbox.env_passthrough: {name:?} is not a variable name"),
                        ));
                    } else {
                        settings.env_passthrough.push(name);
                    }
                }
            }
            "servers" => {
                let Some(servers) = value.as_table_like() else {
                    diagnostics.push(diag(
                        here,
                        "expected [sandbox.servers] to be a table with mode and network".into(),
                    ));
                    continue;
                };
                for (key, value) in servers.iter() {
                    let here = at(value);
                    match key {
                        "mode" | "network" => diagnostics.extend(set_profile_key(
                            (&mut settings.servers.mode, &mut settings.servers.network),
                            "sandbox.servers",
                            key,
                            value,
                            |m| diag(here, m),
                        )),
                        other => diagnostics.push(diag(
                            here,
                            format!(
                                "unknown key sandbox.servers.{other} (expected mode or network); ignored"
                            ),
                        )),
                    }
                }
            }
            other => diagnostics.push(diag(
                here,
                format!(
                    "unknown key sandbox.{other} (expected mode, network, writable, deny_read, env_passthrough or servers); ignored"
                ),
            )),
        }
    }
    diagnostics
}

/// `mode` or `network` of `table` (`sandbox` for bash, `sandbox.servers` for stdio
/// servers): the two keys of a profile, read the same way in both tables.
fn set_profile_key(
    (mode, network): (&mut SandboxMode, &mut NetworkAccess),
    table: &str,
    key: &str,
    value: &toml_edit::Item,
    problem: impl FnOnce(String) -> Diagnostic,
) -> Option<Diagnostic> {
    let name = format!("{table}.{key}");
    if key == "mode" {
        let read = value.as_str().and_then(SandboxMode::parse);
        set_key(mode, read, &name, SandboxMode::NAMES, problem)
    } else {
        let read = NetworkAccess::from_toml(value);
        set_key(network, read, &name, NetworkAccess::NAMES, problem)
    }
}

/// `name` (e.g. `sandbox.mode`) read as `read`; a value of the wrong shape keeps the one in
/// `slot` and is the problem, saying what was `expected`.
fn set_key<T: std::fmt::Display>(
    slot: &mut T,
    read: Option<T>,
    name: &str,
    expected: &str,
    problem: impl FnOnce(String) -> Diagnostic,
) -> Option<Diagnostic> {
    super::toml::set(slot, read, |kept| {
        problem(format!("expected {name} = {expected}; keeping {kept}"))
    })
}

/// The strings of an array value, each with its offset; other shapes are diagnostics.
fn strings(
    value: &toml_edit::Item,
    key: &str,
    diag: &dyn Fn(usize, String) -> Diagnostic,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(usize, String)> {
    let here = super::toml::offset(value);
    let Some(array) = value.as_array() else {
        diagnostics.push(diag(
            here,
            format!("expected sandbox.{key} to be an array of strings"),
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for element in array.iter() {
        let offset = element.span().map(|s| s.start).unwrap_or(here);
        match element.as_str() {
            Some(text) => out.push((offset, text.to_string())),
            None => diagnostics.push(diag(offset, format!("expected a string in sandbox.{key}"))),
        }
    }
    out
}

/// `~`, `~/…`, absolute paths, and (in the project file) paths relative to the workspace.
fn config_path(text: &str, relative_base: Option<&Path>) -> Result<PathBuf, String> {
    if text.is_empty() {
        return Err("an empty path".into());
    }
    if text == "~" || text.starts_with("~/") {
        let home = dirs::home_dir().ok_or("~ is used but the home directory is unknown")?;
        return Ok(match text.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => home,
        });
    }
    let path = PathBuf::from(text);
    if path.is_absolute() {
        return Ok(path);
    }
    match relative_base {
        Some(base) => Ok(base.join(path)),
        None => Err(format!(
            "{text:?} is relative; in the user config write an absolute path or one starting with ~/"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(text: &str, base: Option<&Path>) -> (SandboxSettings, Vec<Diagnostic>) {
        let mut settings = SandboxSettings::default();
        let diags = apply_layer(&mut settings, text, "config.toml", base);
        (settings, diags)
    }

    #[test]
    fn a_full_table_is_read() {
        let (settings, diags) = layer(
            "[permissions]\nallow = []\n\n[sandbox]\nmode = \"read-only\"\nnetwork = true\nwritable = [\"/opt/cache\", \"build\"]\ndeny_read = [\"~/private\"]\nenv_passthrough = [\"NPM_TOKEN\"]\n\n[sandbox.servers]\nmode = \"workspace-write\"\nnetwork = true\n",
            Some(Path::new("/w")),
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(settings.mode, SandboxMode::ReadOnly);
        assert_eq!(settings.network, NetworkAccess::Full);
        assert_eq!(
            settings.writable,
            [PathBuf::from("/opt/cache"), PathBuf::from("/w/build")]
        );
        let home = dirs::home_dir().unwrap();
        assert_eq!(settings.deny_read, [home.join("private")]);
        assert_eq!(settings.env_passthrough, ["NPM_TOKEN"]);
        assert_eq!(
            settings.servers,
            ServerDefaults {
                mode: SandboxMode::WorkspaceWrite,
                network: NetworkAccess::Full
            }
        );
    }

    #[test]
    fn malformed_values_are_reported_with_file_line_and_key_and_keep_the_default() {
        let text = "[sandbox]\nmode = \"strict\"\nnetwork = \"yes\"\nwritable = \"/x\"\ndeny_read = [1, \"rel\"]\nenv_passthrough = [\"A=B\"]\ncolour = 1\n[sandbox.servers]\nmode = 3\n";
        let (settings, diags) = layer(text, None);
        assert_eq!(settings, SandboxSettings::default());
        let shown = crate::settings::shown(&diags);
        assert_eq!(shown.len(), 8, "{shown:#?}");
        // (true: the line starts with the text; false: it contains it)
        let expected = [
            (
                true,
                "config.toml:2:8: expected sandbox.mode = \"workspace-write\"",
            ),
            (
                true,
                "config.toml:3:11: expected sandbox.network = false, \"proxy\" or true; keeping \"proxy\"",
            ),
            (
                true,
                "config.toml:4:12: expected sandbox.writable to be an array",
            ),
            (
                true,
                "config.toml:5:14: expected a string in sandbox.deny_read",
            ),
            (false, "sandbox.deny_read: \"rel\" is relative"),
            (false, "\"A=B\" is not a variable name"),
            (false, "unknown key sandbox.colour"),
            (true, "config.toml:9:8: expected sandbox.servers.mode"),
        ];
        for (line, (starts, text)) in shown.iter().zip(expected) {
            if starts {
                assert!(line.starts_with(text), "{line}");
            } else {
                assert!(line.contains(text), "{line}");
            }
        }
    }

    #[test]
    fn network_takes_false_proxy_or_true_and_bash_defaults_to_the_proxy() {
        assert_eq!(SandboxSettings::default().network, NetworkAccess::Proxy);
        assert_eq!(ServerDefaults::default().network, NetworkAccess::None);
        for (value, want) in [
            ("false", NetworkAccess::None),
            ("\"proxy\"", NetworkAccess::Proxy),
            ("true", NetworkAccess::Full),
        ] {
            let text =
                format!("[sandbox]\nnetwork = {value}\n[sandbox.servers]\nnetwork = {value}\n");
            let (settings, diags) = layer(&text, None);
            assert!(diags.is_empty(), "{diags:?}");
            assert_eq!((settings.network, settings.servers.network), (want, want));
        }
        let (settings, diags) = layer(
            "[sandbox]\nnetwork = \"Proxy\"\n[sandbox.servers]\nnetwork = \"full\"\n",
            None,
        );
        assert_eq!(settings, SandboxSettings::default());
        let shown = crate::settings::shown(&diags);
        assert_eq!(
            shown,
            [
                "config.toml:2:11: expected sandbox.network = false, \"proxy\" or true; keeping \"proxy\"",
                "config.toml:4:11: expected sandbox.servers.network = false, \"proxy\" or true; keeping false",
            ]
        );
        assert!(NetworkAccess::None < NetworkAccess::Proxy);
        assert!(NetworkAccess::Proxy < NetworkAccess::Full);
    }

    #[test]
    fn invalid_toml_is_one_diagnostic() {
        let (settings, diags) = layer("[sandbox\nmode = 1", None);
        assert_eq!(settings, SandboxSettings::default());
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("no [sandbox] settings loaded"));
    }
}
