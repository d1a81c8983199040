//! Configuration: `.mcp.json` in Claude Code's format (plus `"type": "builtin"`), layered
//! embedded defaults < user config dir < workspace < command-line flags.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

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
}

impl ServerConfig {
    /// The command line a user would recognise (shown before starting a project server).
    pub fn command_line(&self) -> String {
        match &self.transport {
            ServerTransport::Stdio { command, args, .. } => {
                std::iter::once(command.clone())
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            ServerTransport::Http { url, .. } => url.clone(),
            ServerTransport::Builtin { server, args } => std::iter::once(format!(
                "toolgate serve {server}"
            ))
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
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

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}
