//! Settings: the one reader of configuration files. `.mcp.json` in Claude Code's format
//! (plus `"type": "builtin"`) and `config.toml` (`[permissions]`, `[tools]`, `[sandbox]`,
//! `[mcp]`, `[sampling]`), layered embedded defaults < user config dir < workspace <
//! command-line flags. [`load`] reads each file once and yields typed [`Settings`]; a
//! reload is a new load and [`reload::changes`] names what applies at once and what waits
//! for a restart. The types the files define for other modules (sandbox modes, tool
//! search, log level, pool settings) live here, so those modules import settings, never
//! the other way round.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which layer a server definition came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "layer", content = "path", rename_all = "snake_case")]
pub enum ConfigSource {
    Embedded,
    User(PathBuf),
    Project(PathBuf),
    Flag(PathBuf),
}

impl ConfigSource {
    pub fn is_project(&self) -> bool {
        matches!(self, ConfigSource::Project(_))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// How to sign in when the server asks for OAuth (`"oauth"` in the entry).
        #[serde(default)]
        oauth: OAuthSettings,
    },
    /// One of toolgate's own servers, run as `toolgate serve <server> <args…>`.
    Builtin { server: String, args: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerConfig {
    pub name: String,
    pub transport: ServerTransport,
    pub source: ConfigSource,
    /// Per-call timeout; `timeout` (ms) in the json entry, default 60 s.
    pub call_timeout_ms: u64,
    /// `"sandbox"` and `"network"` of the entry (stdio servers; toolgate's own servers
    /// always run confined whatever they say).
    #[serde(default)]
    pub sandbox: ServerSandbox,
    /// `"enabled"`, `"includeTools"`, `"excludeTools"`, `"trustNewTools"` of the entry.
    #[serde(default)]
    pub pool: PoolSettings,
    /// `"alwaysLoad": true` (Claude Code's field): this server's tools are never deferred
    /// behind `search_tools`.
    #[serde(default)]
    pub always_load: bool,
}

/// A server entry's own sandbox choice; `None` takes the `[sandbox.servers]` default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ServerSandbox {
    pub mode: Option<SandboxMode>,
    pub network: Option<ServerNetwork>,
}

/// A server entry's `"network"`: `false`, `"proxy"`, `true`, or a list of hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerNetwork {
    Access(NetworkAccess),
    /// Through the proxy, and these hosts (`host`, `host:port`, `*.domain`) reachable
    /// without asking.
    Hosts(Vec<String>),
}

impl ServerNetwork {
    /// How much network the process gets (a host list is the proxy).
    pub fn access(&self) -> NetworkAccess {
        match self {
            ServerNetwork::Access(access) => *access,
            ServerNetwork::Hosts(_) => NetworkAccess::Proxy,
        }
    }

    /// The hosts reachable without asking (empty unless a list was given).
    pub fn hosts(&self) -> &[String] {
        match self {
            ServerNetwork::Access(_) => &[],
            ServerNetwork::Hosts(hosts) => hosts,
        }
    }
}

impl ServerConfig {
    /// The command line a user would recognise (shown before starting a project server).
    pub fn command_line(&self) -> String {
        match &self.transport {
            ServerTransport::Stdio { command, args, .. } => std::iter::once(command.clone())
                .chain(args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
            ServerTransport::Http { url, .. } => url.clone(),
            ServerTransport::Builtin { server, args } => {
                std::iter::once(format!("toolgate serve {server}"))
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
    }
}

/// A problem in a config file: where, and what was expected. The rest of the file loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Diagnostic {
    /// A problem with a whole file (it is missing, cannot be read, or does not count): no
    /// line or column.
    pub fn whole_file(path: &Path, message: String) -> Diagnostic {
        Diagnostic {
            file: path.display().to_string(),
            line: 0,
            column: 0,
            message,
        }
    }

    /// A problem at byte `offset` of `text`, the contents of `file`.
    pub fn at(text: &str, file: &str, offset: usize, message: String) -> Diagnostic {
        let (line, column) = line_column(text, offset);
        Diagnostic {
            file: file.to_string(),
            line,
            column,
            message,
        }
    }
}

/// The diagnostics as the person reads them (`file:line:column: message`), for the table
/// readers' tests.
#[cfg(test)]
fn shown(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics.iter().map(ToString::to_string).collect()
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

mod allow_rule;
pub mod diff;
pub mod edit;
mod expand;
mod flow;
mod hooks;
pub mod hooks_import;
mod host;
pub mod import;
mod load;
pub mod managed;
mod managed_sandbox;
mod managed_servers;
mod mcp_json;
mod mcp_json_keys;

mod model;
mod oauth;
mod permissions;
mod pool_settings;
pub mod reload;
mod sandbox;
mod toml;
mod tools;
mod tui;
pub mod watch;

pub use allow_rule::{AllowRuleError, append_allow_rule};
pub use expand::{ExpandError, expand};
pub use flow::{FlowSettings, ManagedFlow};
pub use hooks::{DEFAULT_HOOK_TIMEOUT, HookEvent, HookSettings, HookSpec, compile_matcher};
pub use host::{
    DEFAULT_LOG_LEVEL, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_SAMPLING_MAX_TOKENS, HostSettings,
    LogLevel,
};
pub use load::{Section, Settings, load, load_with_env, project_config_path, rule_files};
pub use managed::{ManagedPlaces, ManagedSettings};
pub use managed_sandbox::SandboxFloor;
pub use managed_servers::{ServerPattern, ServerPatternError, ServerPolicy, ServerRefused};
pub use mcp_json::{DEFAULT_CALL_TIMEOUT_MS, valid_server_name};
pub use model::{
    DEFAULT_AUTO_COMPACT_PERCENT, DEFAULT_RETRY_MAX_ATTEMPTS, DEFAULT_RETRY_MAX_SECONDS,
    ModelSettings,
};
pub use oauth::OAuthSettings;
pub use permissions::{
    FileLayer, OutsideSetting, PermissionEntry, PermissionList, Permissions, PermissionsFile,
    parse_table as parse_permissions_table,
};
pub use pool_settings::{PoolSettings, ToolPatternError, tool_glob};
pub use sandbox::{NetworkAccess, SandboxMode, SandboxSettings, ServerDefaults};
pub use tools::{DEFAULT_AUTO_THRESHOLD_TOKENS, SearchMode, SearchSettings, apply_tools_layer};
pub use tui::{NotifySetting, TuiSettings};

/// The embedded defaults: docs, deploy and fs, run by this same binary.
pub const EMBEDDED_MCP_JSON: &str = include_str!("../../../../assets/mcp.json");

/// Where to look for settings: the files, and the flags that layer over them.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub workspace: PathBuf,
    /// `~/.config/toolgate`; None skips the user layer.
    pub user_config_dir: Option<PathBuf>,
    /// `--mcp-config FILE` flags, in order (later wins).
    pub flag_files: Vec<PathBuf>,
    /// Whether the workspace's `.mcp.json` and `.toolgate/config.toml` may be read
    /// (workspace trust).
    pub trust_project: bool,
    /// `--allow RULE` and `--deny RULE`.
    pub allow_flags: Vec<String>,
    pub deny_flags: Vec<String>,
    /// The managed files (decision 0082); the default (tests) has none.
    pub managed: ManagedPlaces,
}

impl LoadOptions {
    /// The user's config dir, the workspace (its files only when `trust_project`), no flags.
    pub fn new(workspace: &Path, trust_project: bool) -> LoadOptions {
        LoadOptions {
            workspace: workspace.to_path_buf(),
            user_config_dir: crate::paths::user_config_dir(),
            trust_project,
            managed: ManagedPlaces::from_env(&|name| std::env::var(name).ok()),
            ..LoadOptions::default()
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct LoadedServers {
    /// In definition order: embedded first, then new names as later layers add them.
    pub servers: Vec<ServerConfig>,
    pub diagnostics: Vec<Diagnostic>,
    /// Project files present but not read because the folder is not trusted.
    pub ignored_project_files: Vec<PathBuf>,
}

impl LoadedServers {
    pub fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }
}

/// Loads and layers every `.mcp.json`: embedded < user < workspace < flags. A later layer
/// replaces a same-named server whole (as Claude Code does), keeping its position.
pub fn load_servers(opts: &LoadOptions) -> LoadedServers {
    let env = |name: &str| std::env::var(name).ok();
    load_servers_with_env(opts, &env)
}

pub fn load_servers_with_env(
    opts: &LoadOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> LoadedServers {
    let mut loaded = LoadedServers::default();
    let add_layer = |loaded: &mut LoadedServers, servers: Vec<ServerConfig>| {
        for server in servers {
            match loaded.servers.iter_mut().find(|s| s.name == server.name) {
                Some(existing) => *existing = server,
                None => loaded.servers.push(server),
            }
        }
    };

    let (embedded, diags) = mcp_json::parse(
        EMBEDDED_MCP_JSON,
        "<embedded mcp.json>",
        &ConfigSource::Embedded,
        env,
    );
    loaded.diagnostics.extend(diags);
    add_layer(&mut loaded, embedded);

    if let Some(dir) = &opts.user_config_dir {
        let path = dir.join("mcp.json");
        if let Some(servers) = read_layer(&path, ConfigSource::User(path.clone()), env, &mut loaded)
        {
            add_layer(&mut loaded, servers);
        }
    }

    let project = opts.workspace.join(".mcp.json");
    if project.is_file() {
        if opts.trust_project {
            if let Some(servers) = read_layer(
                &project,
                ConfigSource::Project(project.clone()),
                env,
                &mut loaded,
            ) {
                add_layer(&mut loaded, servers);
            }
        } else {
            loaded.ignored_project_files.push(project);
        }
    }

    for path in &opts.flag_files {
        if !path.is_file() {
            loaded.diagnostics.push(Diagnostic::whole_file(
                path,
                "file given with --mcp-config does not exist".into(),
            ));
            continue;
        }
        if let Some(servers) = read_layer(path, ConfigSource::Flag(path.clone()), env, &mut loaded)
        {
            add_layer(&mut loaded, servers);
        }
    }
    loaded
}

fn read_layer(
    path: &Path,
    source: ConfigSource,
    env: &dyn Fn(&str) -> Option<String>,
    loaded: &mut LoadedServers,
) -> Option<Vec<ServerConfig>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            loaded
                .diagnostics
                .push(Diagnostic::whole_file(path, format!("cannot read: {e}")));
            return None;
        }
    };
    let (servers, diags) = mcp_json::parse(&text, &path.display().to_string(), &source, env);
    loaded.diagnostics.extend(diags);
    Some(servers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn embedded_defaults_are_docs_deploy_fs() {
        let loaded = load_servers_with_env(&LoadOptions::default(), &no_env);
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        assert_eq!(loaded.names(), ["docs", "deploy", "fs"]);
        assert_eq!(loaded.servers[2].command_line(), "toolgate serve fs .");
    }

    #[test]
    fn layers_override_in_order_and_untrusted_project_is_ignored() {
        let ws = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        std::fs::write(
            user.path().join("mcp.json"),
            r#"{"mcpServers": {"deploy": {"command": "user-deploy"}, "extra": {"command": "e"}}}"#,
        )
        .unwrap();
        std::fs::write(
            ws.path().join(".mcp.json"),
            r#"{"mcpServers": {"extra": {"command": "project-extra"}, "broken": {}}}"#,
        )
        .unwrap();
        let flag = ws.path().join("flag.json");
        std::fs::write(
            &flag,
            r#"{"mcpServers": {"docs": {"command": "flag-docs"}}}"#,
        )
        .unwrap();
        let mut opts = LoadOptions {
            workspace: ws.path().to_path_buf(),
            user_config_dir: Some(user.path().to_path_buf()),
            flag_files: vec![flag.clone()],
            trust_project: false,
            ..Default::default()
        };
        let untrusted = load_servers_with_env(&opts, &no_env);
        assert_eq!(untrusted.names(), ["docs", "deploy", "fs", "extra"]);
        assert_eq!(untrusted.servers[3].command_line(), "e");
        assert_eq!(
            untrusted.ignored_project_files,
            [ws.path().join(".mcp.json")]
        );
        assert_eq!(untrusted.servers[0].command_line(), "flag-docs");
        assert!(matches!(untrusted.servers[0].source, ConfigSource::Flag(_)));
        assert_eq!(untrusted.servers[1].command_line(), "user-deploy");

        opts.trust_project = true;
        let trusted = load_servers_with_env(&opts, &no_env);
        assert_eq!(trusted.servers[3].command_line(), "project-extra");
        assert!(trusted.servers[3].source.is_project());
        assert_eq!(trusted.diagnostics.len(), 1);
        assert!(trusted.diagnostics[0].message.contains("server 'broken'"));
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("é\nx", 3), (2, 1));
        assert_eq!(line_column("x", 99), (1, 2));
    }
}
