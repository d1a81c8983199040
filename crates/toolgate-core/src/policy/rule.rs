//! Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`.
//!
//! Forms: `*` (every tool), `mcp__*` (every MCP tool), `mcp__server` and `mcp__server__*`
//! (every tool of a server), `mcp__server__prefix*`, `mcp__server__tool`; `Bash` /
//! `Bash(git status:*)` (word prefix) / `Bash(npm run *)` (glob) / `Bash(npm test)` (exact);
//! `Read(glob)` (read_file and glob), `Edit(glob)` (edit_file), `Write(glob)` (write_file);
//! `connect_mcp(NAME)` / `disconnect_mcp(NAME)`, `read_mcp_resource(SERVER)` /
//! `list_mcp_resources(SERVER)`; a bare built-in name (`read_file`, …);
//! `sampling` / `sampling(SERVER)` / `sampling(prefix*)`: a server's `sampling/createMessage`
//! requests (not a tool: no tool rule, not even `*`, decides sampling); `Network(HOST)` /
//! `Network(HOST:PORT)` / `Network(*.DOMAIN)` / `Network(*)`: connections through the
//! network gate's proxy (`network.rs`; not a tool either).

use std::fmt;

use super::host_pattern::HostPattern;

use super::bash_pattern::BashPatternError;
pub use super::bash_pattern::{BashPattern, WordsMatch};
use crate::builtin::{BuiltinId, Judgement};
use crate::pool::{PoolTool, ToolOrigin, normalize};

#[derive(Debug, Clone)]
pub struct Rule {
    pub text: String,
    pub kind: RuleKind,
}

#[derive(Debug, Clone)]
pub enum RuleKind {
    Everything,
    AnyMcp,
    McpServer {
        server: String,
    },
    McpPrefix {
        server: String,
        prefix: String,
    },
    McpTool {
        name: String,
    },
    Bash(BashPattern),
    /// A bare built-in name or `Read`/`Edit`/`Write` without a specifier.
    Tools(Vec<BuiltinId>),
    Files {
        tools: Vec<BuiltinId>,
        glob: FileGlob,
    },
    Connector {
        tool: BuiltinId,
        name: NamePattern,
    },
    /// Sampling requests of the servers named (None: every server).
    Sampling {
        server: Option<NamePattern>,
    },
    /// Connections through the network gate's proxy to the hosts named (not a tool).
    Network(HostPattern),
}

#[derive(Debug, Clone)]
pub struct FileGlob {
    pub pattern: String,
    matcher: globset::GlobMatcher,
}

#[derive(Debug, Clone)]
pub enum NamePattern {
    Exact(String),
    Prefix(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    pub message: String,
    /// Character offset into the rule text where the problem is.
    pub offset: usize,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

fn err(offset: usize, message: impl Into<String>) -> RuleError {
    RuleError {
        message: message.into(),
        offset,
    }
}

/// The rule family (`Read(…)`, `Edit(…)`, `Write(…)`) that names a file tool's paths.
pub(crate) fn file_family(tool: BuiltinId) -> Option<&'static str> {
    tool.file_access().map(|access| access.family.rule_name())
}

/// The file tools a rule name covers: a family covers its members, a bare name itself.
fn file_tools(name: &str) -> Option<Vec<BuiltinId>> {
    let family: Vec<BuiltinId> = BuiltinId::all()
        .filter(|tool| file_family(*tool) == Some(name))
        .collect();
    if !family.is_empty() {
        return Some(family);
    }
    BuiltinId::from_name(name)
        .filter(|tool| file_family(*tool).is_some())
        .map(|tool| vec![tool])
}

fn valid_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let trimmed = text.trim();
        let lead = text.len() - text.trim_start().len();
        if trimmed.is_empty() {
            return Err(err(0, "empty rule"));
        }
        let (name, spec) = match trimmed.find('(') {
            Some(open) => {
                if !trimmed.ends_with(')') {
                    return Err(err(
                        lead + trimmed.len(),
                        "expected ')' at the end of the rule",
                    ));
                }
                let inner = &trimmed[open + 1..trimmed.len() - 1];
                (&trimmed[..open], Some((inner, lead + open + 1)))
            }
            None => {
                if let Some(pos) = trimmed.find(')') {
                    return Err(err(lead + pos, "unexpected ')'"));
                }
                (trimmed, None)
            }
        };
        let kind = Self::parse_kind(name, spec, lead)?;
        Ok(Rule {
            text: trimmed.to_string(),
            kind,
        })
    }

    fn parse_kind(
        name: &str,
        spec: Option<(&str, usize)>,
        lead: usize,
    ) -> Result<RuleKind, RuleError> {
        if name == "*" {
            return match spec {
                None => Ok(RuleKind::Everything),
                Some((_, at)) => Err(err(at, "'*' takes no specifier")),
            };
        }
        if let Some(pos) = name.find(|c: char| !valid_name_char(c) && c != '*') {
            return Err(err(
                lead + pos,
                format!(
                    "unexpected character {:?} in tool name",
                    &name[pos..].chars().next().unwrap_or(' ')
                ),
            ));
        }
        if let Some(rest) = name.strip_prefix("mcp__") {
            if let Some((_, at)) = spec {
                return Err(err(
                    at,
                    "MCP rules take no specifier; use mcp__server__tool",
                ));
            }
            return parse_mcp(rest, lead + 5);
        }
        if let Some(pos) = name.find('*') {
            return Err(err(
                lead + pos,
                "'*' is only allowed in MCP rules and as the whole rule",
            ));
        }
        if name == "Network" {
            return parse_network(spec, lead);
        }
        if name == "sampling" || name == "Sampling" {
            return Ok(RuleKind::Sampling {
                server: spec
                    .map(|(inner, at)| parse_name_pattern(inner, at))
                    .transpose()?,
            });
        }
        // `Bash` names the shell tool, as Claude Code spells it.
        let builtin = match name {
            "Bash" => BuiltinId::all().find(|tool| tool.is_shell()),
            other => BuiltinId::from_name(other),
        };
        if let Some(tool) = builtin {
            match tool.judgement() {
                Judgement::Shell => {
                    return match spec {
                        None => Ok(RuleKind::Bash(BashPattern::Any)),
                        Some((inner, at)) => BashPattern::parse(inner)
                            .map(RuleKind::Bash)
                            .map_err(|e: BashPatternError| err(at, e.to_string())),
                    };
                }
                Judgement::Connector | Judgement::Resource { .. } => {
                    return match spec {
                        None => Ok(RuleKind::Tools(vec![tool])),
                        Some((inner, at)) => Ok(RuleKind::Connector {
                            tool,
                            name: parse_name_pattern(inner, at)?,
                        }),
                    };
                }
                Judgement::Harmless { .. } => {
                    return match spec {
                        None => Ok(RuleKind::Tools(vec![tool])),
                        Some(_) => Err(err(lead, format!("tool '{name}' takes no specifier"))),
                    };
                }
                Judgement::File(_) => {}
            }
        }
        match (file_tools(name), spec) {
            (Some(tools), None) => Ok(RuleKind::Tools(tools)),
            (Some(tools), Some((inner, at))) => Ok(RuleKind::Files {
                tools,
                glob: FileGlob::new(inner, at)?,
            }),
            (None, None) => Err(err(
                lead,
                format!(
                    "unknown tool '{name}': expected Bash, Read, Edit, Write, {}, or an mcp__server[__tool] name",
                    BuiltinId::all()
                        .map(BuiltinId::name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            (None, Some(_)) => Err(err(
                lead,
                format!("tool '{name}' takes no specifier (or is unknown)"),
            )),
        }
    }

    /// True for rules that would silently allow everything (refused in allow lists).
    pub fn allows_everything(&self) -> bool {
        matches!(
            self.kind,
            RuleKind::Everything | RuleKind::AnyMcp | RuleKind::Bash(BashPattern::Any)
        )
    }

    /// True for a rule that names one MCP tool (`mcp__srv__tool`), not a server or a
    /// prefix: such a rule covers a tool that appears mid-session, a server-wide one not.
    pub fn names_one_mcp_tool(&self) -> bool {
        matches!(self.kind, RuleKind::McpTool { .. })
    }

    /// Whether the rule names this tool as a whole (without looking at the input).
    pub fn matches_tool(&self, tool: &PoolTool) -> bool {
        match &self.kind {
            RuleKind::Everything => true,
            RuleKind::AnyMcp => matches!(tool.origin, ToolOrigin::Mcp { .. }),
            RuleKind::McpServer { server } => match &tool.origin {
                ToolOrigin::Mcp { server: s, .. } => normalize(s) == *server || s == server,
                _ => false,
            },
            RuleKind::McpPrefix { server, prefix } => match &tool.origin {
                ToolOrigin::Mcp { server: s, tool: t } => {
                    (normalize(s) == *server || s == server)
                        && (normalize(t).starts_with(prefix.as_str())
                            || t.starts_with(prefix.as_str()))
                }
                _ => false,
            },
            RuleKind::McpTool { name } => match &tool.origin {
                ToolOrigin::Mcp { server, tool: t } => {
                    tool.name == *name
                        || format!("mcp__{}__{}", normalize(server), normalize(t)) == *name
                }
                _ => false,
            },
            RuleKind::Bash(_) => tool.builtin_kind().is_some_and(BuiltinId::is_shell),
            RuleKind::Tools(kinds) | RuleKind::Files { tools: kinds, .. } => tool
                .builtin_kind()
                .is_some_and(|kind| kinds.contains(&kind)),
            RuleKind::Connector { tool: kind, .. } => tool.builtin_kind() == Some(*kind),
            RuleKind::Sampling { .. } | RuleKind::Network(_) => false,
        }
    }
}

/// `Network(…)`'s specifier as a rule kind; `at` is where it starts in the rule text.
fn parse_network(spec: Option<(&str, usize)>, lead: usize) -> Result<RuleKind, RuleError> {
    let Some((inner, at)) = spec else {
        return Err(RuleError {
            message: "Network needs a host: Network(HOST), Network(HOST:PORT), Network(*.DOMAIN) or Network(*)".into(),
            offset: lead,
        });
    };
    HostPattern::parse(inner)
        .map(RuleKind::Network)
        .map_err(|message| RuleError {
            message: format!("Network({inner}): {message}"),
            offset: at,
        })
}

fn parse_mcp(rest: &str, at: usize) -> Result<RuleKind, RuleError> {
    if rest == "*" {
        return Ok(RuleKind::AnyMcp);
    }
    if rest.is_empty() {
        return Err(err(at, "expected a server name after 'mcp__'"));
    }
    match rest.split_once("__") {
        None => {
            if let Some(pos) = rest.find('*') {
                return Err(err(at + pos, "'*' is only allowed after mcp__server__"));
            }
            Ok(RuleKind::McpServer {
                server: rest.to_string(),
            })
        }
        Some((server, tool)) => {
            if server.is_empty() || server.contains('*') {
                return Err(err(at, "expected a server name after 'mcp__'"));
            }
            let tool_at = at + server.len() + 2;
            if let Some(pos) = tool.find('*') {
                if pos != tool.len() - 1 {
                    return Err(err(tool_at + pos, "'*' is only allowed at the end"));
                }
                let prefix = &tool[..pos];
                return Ok(if prefix.is_empty() {
                    RuleKind::McpServer {
                        server: server.to_string(),
                    }
                } else {
                    RuleKind::McpPrefix {
                        server: server.to_string(),
                        prefix: prefix.to_string(),
                    }
                });
            }
            if tool.is_empty() {
                return Err(err(
                    tool_at,
                    "expected a tool name or '*' after 'mcp__server__'",
                ));
            }
            Ok(RuleKind::McpTool {
                name: format!("mcp__{rest}"),
            })
        }
    }
}

fn parse_name_pattern(inner: &str, at: usize) -> Result<NamePattern, RuleError> {
    let spec = inner.trim();
    if spec.is_empty() {
        return Err(err(at, "expected a server name"));
    }
    if let Some(pos) = spec.find(|c: char| !valid_name_char(c) && c != '*') {
        return Err(err(
            at + pos,
            "server names contain only letters, digits, '_' and '-'",
        ));
    }
    match spec.find('*') {
        Some(pos) if pos == spec.len() - 1 => Ok(NamePattern::Prefix(spec[..pos].to_string())),
        Some(pos) => Err(err(at + pos, "'*' is only allowed at the end")),
        None => Ok(NamePattern::Exact(spec.to_string())),
    }
}

impl NamePattern {
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Exact(n) => n == name,
            NamePattern::Prefix(p) => name.starts_with(p.as_str()),
        }
    }
}

impl FileGlob {
    fn new(inner: &str, at: usize) -> Result<FileGlob, RuleError> {
        let pattern = inner.trim();
        if pattern.is_empty() {
            return Err(err(at, "expected a path or glob"));
        }
        let expanded = match pattern.strip_prefix("~/") {
            Some(rest) => match dirs::home_dir() {
                Some(home) => format!("{}/{rest}", home.display()),
                None => pattern.to_string(),
            },
            None => pattern.to_string(),
        };
        let glob = globset::GlobBuilder::new(&expanded)
            .literal_separator(true)
            .build()
            .map_err(|e| err(at, format!("bad glob: {}", e.kind())))?;
        Ok(FileGlob {
            pattern: pattern.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    /// `path` is workspace-relative for files inside, absolute for files outside.
    pub fn matches(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }
}

/// Escapes glob metacharacters so a rule matches exactly this path.
pub fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::tests::mcp;
    use serde_json::json;

    /// Whether the rule `rule` names the built-in tool `tool`.
    fn names(rule: &str, tool: &str) -> bool {
        Rule::parse(rule).unwrap().matches_tool(&builtin(tool))
    }

    fn builtin(name: &str) -> PoolTool {
        let kind = BuiltinId::from_name(name).unwrap();
        PoolTool::builtin(kind, "", json!({"type": "object"}))
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn mcp_forms() {
        let search = mcp("docs", "search");
        let trigger = mcp("deploy", "trigger");
        let r = |t: &str| Rule::parse(t).unwrap();
        assert!(r("mcp__docs").matches_tool(&search));
        assert!(!r("mcp__docs").matches_tool(&trigger));
        assert!(r("mcp__docs__*").matches_tool(&search));
        assert!(r("mcp__docs__sea*").matches_tool(&search));
        assert!(!r("mcp__docs__get*").matches_tool(&search));
        assert!(r("mcp__docs__search").matches_tool(&search));
        assert!(!r("mcp__docs__search").matches_tool(&trigger));
        assert!(r("mcp__*").matches_tool(&trigger));
        assert!(!r("mcp__*").matches_tool(&builtin("bash")));
        assert!(r("*").matches_tool(&builtin("bash")));
        // Raw names with '.' match through their normalized form.
        let dotted = mcp("docs.one", "get.version");
        assert!(r("mcp__docs_one__get_version").matches_tool(&dotted));
        assert!(r("mcp__docs_one").matches_tool(&dotted));
    }

    #[test]
    fn long_names_match_by_full_name_and_by_shortened_name() {
        let long_tool = "t".repeat(80);
        let tool = mcp("srv", &long_tool);
        assert!(tool.shortened);
        assert!(
            Rule::parse(&format!("mcp__srv__{long_tool}"))
                .unwrap()
                .matches_tool(&tool)
        );
        assert!(Rule::parse(&tool.name).unwrap().matches_tool(&tool));
    }

    #[test]
    fn bash_forms() {
        let p = |t: &str| match Rule::parse(t).unwrap().kind {
            RuleKind::Bash(b) => b,
            other => panic!("{other:?}"),
        };
        assert!(p("Bash(git status:*)").matches(&words("git status --short")));
        assert!(p("Bash(git status:*)").matches(&words("git status")));
        assert!(!p("Bash(git status:*)").matches(&words("git statusx")));
        assert!(!p("Bash(git status:*)").matches(&words("git log")));
        assert!(p("Bash(npm run *)").matches(&words("npm run build")));
        assert!(!p("Bash(npm run *)").matches(&words("npm test")));
        assert!(p("Bash(npm test)").matches(&words("npm test")));
        assert!(!p("Bash(npm test)").matches(&words("npm test --watch")));
        assert!(p("bash").matches(&words("anything at all")));
        assert!(names("Bash(ls)", "bash"));
    }

    #[test]
    fn file_and_connector_forms() {
        let rule = Rule::parse("Read(src/**)").unwrap();
        assert!(rule.matches_tool(&builtin("read_file")));
        assert!(rule.matches_tool(&builtin("glob")));
        assert!(!rule.matches_tool(&builtin("write_file")));
        let RuleKind::Files { glob, .. } = &rule.kind else {
            panic!()
        };
        assert!(glob.matches("src/a/b.rs"));
        assert!(!glob.matches("tests/a.rs"));
        let star = Rule::parse("Edit(*.md)").unwrap();
        let RuleKind::Files { glob, .. } = &star.kind else {
            panic!()
        };
        assert!(glob.matches("README.md"));
        assert!(!glob.matches("docs/x.md"), "* does not cross directories");
        assert!(names("Write(out.txt)", "write_file"));
        let c = Rule::parse("connect_mcp(docs)").unwrap();
        assert!(c.matches_tool(&builtin("connect_mcp")));
        let RuleKind::Connector { name, .. } = c.kind else {
            panic!()
        };
        assert!(name.matches("docs") && !name.matches("deploy"));
        assert!(names("disconnect_mcp", "disconnect_mcp"));
    }

    #[test]
    fn allow_everything_rules_are_recognised() {
        for t in ["*", "mcp__*", "Bash", "Bash(*)", "bash( * )", "Bash(:*)"] {
            assert!(Rule::parse(t).unwrap().allows_everything(), "{t}");
        }
        for t in ["mcp__docs", "Bash(npm *)", "Read(**)"] {
            assert!(!Rule::parse(t).unwrap().allows_everything(), "{t}");
        }
    }

    #[test]
    fn invalid_rules_say_where() {
        for (text, offset) in [
            ("Bash(ls", 7),
            ("mcp__docs__se*rch", 13),
            ("mcp__*__x", 5),
            ("Frobnicate", 0),
            ("mcp__docs(x)", 10),
            ("", 0),
            ("Read()", 5),
            ("ls)", 2),
            ("Bash(a*:*)", 5),
        ] {
            let e = Rule::parse(text).unwrap_err();
            assert_eq!(e.offset, offset, "{text}: {}", e.message);
        }
    }

    #[test]
    fn escaped_paths_match_literally() {
        let rule = Rule::parse(&format!("Read({})", escape_glob("a[1]/*.txt"))).unwrap();
        let RuleKind::Files { glob, .. } = &rule.kind else {
            panic!()
        };
        assert!(glob.matches("a[1]/*.txt"));
        assert!(!glob.matches("a1/x.txt"));
    }

    proptest::proptest! {
        #[test]
        fn parser_never_panics(text in "\\PC{0,60}") {
            if let Ok(rule) = Rule::parse(&text) {
                let _ = rule.allows_everything();
                let _ = rule.matches_tool(&builtin("bash"));
                let _ = rule.matches_tool(&mcp("docs", "search"));
            }
        }

        #[test]
        fn parser_never_panics_on_rule_alphabet(text in "[A-Za-z_*():. ~/\\[\\]{}]{0,30}") {
            let _ = Rule::parse(&text);
        }
    }
}
