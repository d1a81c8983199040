//! `[mcp] allowed_servers` / `denied_servers` of the managed files: which servers may be
//! started or contacted at all, whichever file defines them.
//!
//! A pattern is one string: `NAME` (a glob over the server's name), `command:GLOB` (over
//! a stdio server's command line, the command and its arguments joined by spaces; for
//! toolgate's own servers `toolgate serve NAME ARGS…`) or `url:GLOB` (over an HTTP
//! server's URL). Globs are globset's: `*` matches any run of characters (slashes
//! included), `?` one character, `[…]` a class. A server is admitted when no denied
//! pattern matches it and, for every file that sets `allowed_servers`, one of that file's
//! allowed patterns does (an empty `allowed_servers` admits none).

use serde::{Deserialize, Serialize};

use super::{Diagnostic, ServerConfig, ServerTransport};

/// What a pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    Name,
    Command,
    Url,
}

/// One pattern as written, compiled.
#[derive(Debug, Clone)]
pub struct ServerPattern {
    pub kind: PatternKind,
    /// The pattern as the file writes it (`command:npx *`), for messages.
    pub text: String,
    matcher: globset::GlobMatcher,
}

impl PartialEq for ServerPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl ServerPattern {
    pub fn parse(text: &str) -> Result<ServerPattern, ServerPatternError> {
        let (kind, glob) = if let Some(rest) = text.strip_prefix("command:") {
            (PatternKind::Command, rest)
        } else if let Some(rest) = text.strip_prefix("url:") {
            (PatternKind::Url, rest)
        } else {
            (PatternKind::Name, text)
        };
        if glob.trim().is_empty() {
            return Err(ServerPatternError::Empty(text.to_string()));
        }
        let matcher = globset::GlobBuilder::new(glob)
            .literal_separator(false)
            .build()
            .map_err(|e| ServerPatternError::Invalid {
                text: text.to_string(),
                kind: e.kind().clone(),
            })?
            .compile_matcher();
        Ok(ServerPattern {
            kind,
            text: text.to_string(),
            matcher,
        })
    }

    pub fn matches(&self, config: &ServerConfig) -> bool {
        match (self.kind, &config.transport) {
            (PatternKind::Name, _) => self.matcher.is_match(&config.name),
            (
                PatternKind::Command,
                ServerTransport::Stdio { .. } | ServerTransport::Builtin { .. },
            ) => self.matcher.is_match(config.command_line()),
            (PatternKind::Url, ServerTransport::Http { url, .. }) => self.matcher.is_match(url),
            (PatternKind::Command, ServerTransport::Http { .. })
            | (PatternKind::Url, ServerTransport::Stdio { .. } | ServerTransport::Builtin { .. }) => {
                false
            }
        }
    }
}

/// A managed server pattern that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerPatternError {
    #[error("server pattern {0:?} is empty")]
    Empty(String),
    #[error("invalid server pattern {text:?}: {kind}")]
    Invalid {
        text: String,
        kind: globset::ErrorKind,
    },
}

/// Why the managed policy does not admit a server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerRefused {
    /// The managed files could not be read, so no server is admitted.
    #[error("server '{server}' is not started: {reason}")]
    Unreadable { server: String, reason: String },
    #[error(
        "server '{server}' is blocked by the managed policy: denied_servers pattern {pattern:?} in {file}"
    )]
    Denied {
        server: String,
        pattern: String,
        file: String,
    },
    #[error("server '{server}' is blocked by the managed policy: not in allowed_servers of {file}")]
    NotAllowed { server: String, file: String },
}

/// One file's list, with the file it came from.
#[derive(Debug, Clone, PartialEq)]
struct PatternList {
    file: String,
    patterns: Vec<ServerPattern>,
}

/// The managed server lists of every managed file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerPolicy {
    allowed: Vec<PatternList>,
    denied: Vec<PatternList>,
    /// The managed files could not be read: no server is admitted, for this reason.
    unreadable: Option<String>,
}

impl ServerPolicy {
    /// Whether the managed files say anything about servers.
    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty() && self.denied.is_empty() && self.unreadable.is_none()
    }

    /// A policy that admits no server, because the managed files have problems (the
    /// subcommands that start servers fail closed with this `reason`).
    pub fn admit_none(reason: String) -> ServerPolicy {
        ServerPolicy {
            unreadable: Some(reason),
            ..ServerPolicy::default()
        }
    }

    /// Ok when `config` may be started; else why not, naming the managed file and the
    /// pattern (or the list it is missing from).
    pub fn check(&self, config: &ServerConfig) -> Result<(), ServerRefused> {
        if let Some(reason) = &self.unreadable {
            return Err(ServerRefused::Unreadable {
                server: config.name.clone(),
                reason: reason.clone(),
            });
        }
        for list in &self.denied {
            if let Some(pattern) = list.patterns.iter().find(|p| p.matches(config)) {
                return Err(ServerRefused::Denied {
                    server: config.name.clone(),
                    pattern: pattern.text.clone(),
                    file: list.file.clone(),
                });
            }
        }
        for list in &self.allowed {
            if !list.patterns.iter().any(|p| p.matches(config)) {
                return Err(ServerRefused::NotAllowed {
                    server: config.name.clone(),
                    file: list.file.clone(),
                });
            }
        }
        Ok(())
    }

    /// Lines describing the lists (for `toolgate status` and `/permissions`).
    pub fn describe(&self) -> Vec<String> {
        let line = |word: &str, list: &PatternList| {
            let texts: Vec<&str> = list.patterns.iter().map(|p| p.text.as_str()).collect();
            format!("{word} = [{}] ({})", texts.join(", "), list.file)
        };
        self.allowed
            .iter()
            .map(|l| line("allowed_servers", l))
            .chain(self.denied.iter().map(|l| line("denied_servers", l)))
            .collect()
    }

    /// Reads `[mcp]` of one managed file; every problem is a diagnostic.
    pub(super) fn add_table(
        &mut self,
        table: &dyn toml_edit::TableLike,
        text: &str,
        file: &str,
    ) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        for (key, value) in table.iter() {
            let here = super::toml::offset(value);
            let target = match key {
                "allowed_servers" => &mut self.allowed,
                "denied_servers" => &mut self.denied,
                other => {
                    diagnostics.push(Diagnostic::at(
                        text,
                        file,
                        here,
                        format!("unknown key mcp.{other} in the managed file (expected allowed_servers or denied_servers)"),
                    ));
                    continue;
                }
            };
            let Some(array) = value.as_array() else {
                diagnostics.push(Diagnostic::at(
                    text,
                    file,
                    here,
                    format!("expected mcp.{key} to be an array of server patterns"),
                ));
                continue;
            };
            let mut patterns = Vec::new();
            for element in array.iter() {
                let at = element.span().map(|s| s.start).unwrap_or(here);
                match element.as_str().map(ServerPattern::parse) {
                    Some(Ok(pattern)) => patterns.push(pattern),
                    Some(Err(message)) => diagnostics.push(Diagnostic::at(
                        text,
                        file,
                        at,
                        format!("mcp.{key}: {message}"),
                    )),
                    None => diagnostics.push(Diagnostic::at(
                        text,
                        file,
                        at,
                        format!("expected a server pattern string in mcp.{key}"),
                    )),
                }
            }
            target.push(PatternList {
                file: file.to_string(),
                patterns,
            });
        }
        diagnostics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ConfigSource;
    use std::collections::BTreeMap;

    fn server(name: &str, transport: ServerTransport) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport,
            source: ConfigSource::Embedded,
            call_timeout_ms: 1000,
            sandbox: Default::default(),
            pool: Default::default(),
            always_load: false,
        }
    }

    fn stdio(name: &str, command: &str, args: &[&str]) -> ServerConfig {
        server(
            name,
            ServerTransport::Stdio {
                command: command.into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    fn http(name: &str, url: &str) -> ServerConfig {
        server(
            name,
            ServerTransport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
                oauth: Default::default(),
            },
        )
    }

    fn policy(text: &str) -> (ServerPolicy, Vec<Diagnostic>) {
        let doc = toml_edit::Document::parse(text).unwrap();
        let mut policy = ServerPolicy::default();
        let table = doc.get("mcp").unwrap().as_table_like().unwrap();
        let diags = policy.add_table(table, text, "m.toml");
        (policy, diags)
    }

    #[test]
    fn names_commands_and_urls_match_and_deny_wins() {
        let (policy, diags) = policy(
            "[mcp]\nallowed_servers = [\"docs\", \"command:npx -y @acme/*\", \"url:https://*.acme.example/*\", \"deploy\"]\ndenied_servers = [\"deploy\"]\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let builtin = server(
            "docs",
            ServerTransport::Builtin {
                server: "docs".into(),
                args: vec![],
            },
        );
        assert_eq!(policy.check(&builtin), Ok(()));
        assert_eq!(
            policy.check(&stdio("x", "npx", &["-y", "@acme/tools"])),
            Ok(())
        );
        assert_eq!(
            policy.check(&http("h", "https://mcp.acme.example/v1")),
            Ok(())
        );
        let refused = policy
            .check(&http("h", "https://evil.example/acme.example/"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "server 'h' is blocked by the managed policy: not in allowed_servers of m.toml"
        );
        let denied = policy
            .check(&stdio("deploy", "anything", &[]))
            .unwrap_err()
            .to_string();
        assert!(
            denied.contains("denied_servers pattern \"deploy\" in m.toml"),
            "{denied}"
        );
        assert_eq!(policy.describe().len(), 2);
    }

    #[test]
    fn an_empty_allow_list_admits_nothing_and_no_list_admits_everything() {
        let (none, _) = policy("[mcp]\nallowed_servers = []\n");
        assert!(none.check(&stdio("docs", "x", &[])).is_err());
        assert_eq!(
            ServerPolicy::default().check(&stdio("docs", "x", &[])),
            Ok(())
        );
    }

    #[test]
    fn bad_patterns_are_named() {
        let (_, diags) = policy("[mcp]\ndenied_servers = [\"command:\", 3, \"[x\"]\nother = 1\n");
        let shown = crate::settings::shown(&diags);
        assert_eq!(shown.len(), 4, "{shown:?}");
        assert!(
            shown[0].starts_with("m.toml:2:19: mcp.denied_servers: server pattern"),
            "{}",
            shown[0]
        );
        assert!(shown[1].contains("expected a server pattern string"));
        assert!(shown[2].contains("invalid server pattern \"[x\""));
        assert!(shown[3].contains("unknown key mcp.other"));
    }
}
