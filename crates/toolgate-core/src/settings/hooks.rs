//! `[hooks]` in `config.toml`: Claude Code's hooks JSON in TOML form (decision 0086).
//! Read from the managed files, the user's file and a trusted project's file; every hook
//! keeps the file it came from, since where a hook comes from decides whether it runs
//! (a project's hooks need the person's consent) and whether it may leave the sandbox
//! (only the user's and the managed files may say `sandbox = false`).
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "mcp__deploy__.*"          # a regex over the model-facing tool name; absent = all
//! hooks = [{ type = "command", command = "~/bin/release-freeze", timeout = 10 }]
//! ```

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Diagnostic;
use super::permissions::FileLayer;
use super::toml::offset;

/// A hook's time limit unless its entry says `timeout` (seconds), as in Claude Code.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// When a hook runs; the names are Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    Notification,
    Stop,
    PreCompact,
    SessionEnd,
}

impl HookEvent {
    pub const ALL: [HookEvent; 9] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Notification => "Notification",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the event is about one tool (its matcher is over the tool's name).
    pub fn has_tool(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse | HookEvent::PostToolUse | HookEvent::PermissionRequest
        )
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One hook command as a file defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    pub event: HookEvent,
    /// The regex over the model-facing tool name, as written; None (or `*`, or empty)
    /// matches every tool. Checked to compile when read.
    pub matcher: Option<String>,
    pub command: String,
    pub timeout: Duration,
    /// Whether it runs under the bash sandbox (false only from the user's or a managed file).
    pub sandboxed: bool,
    pub layer: FileLayer,
    pub file: PathBuf,
}

/// Every hook the files define, managed first, then the user's, then the project's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookSettings {
    pub hooks: Vec<HookSpec>,
}

impl HookSettings {
    /// Adds the `[hooks]` table of one file; returns its problems (each one refuses the
    /// start: a hook read in part could be a guard that silently does not run).
    pub fn add_file(
        &mut self,
        text: &str,
        path: &std::path::Path,
        layer: FileLayer,
    ) -> Vec<Diagnostic> {
        let file = path.display().to_string();
        let doc = match super::toml::parse(text, &file, "hooks") {
            Ok(doc) => doc,
            Err(problem) => return vec![problem],
        };
        let table = match super::toml::table(&doc, "hooks", text, &file) {
            Ok(Some(table)) => table,
            Ok(None) => return Vec::new(),
            Err(problem) => return vec![problem],
        };
        let reader = Reader {
            text,
            file: &file,
            path,
            layer,
        };
        let mut problems = Vec::new();
        for (key, item) in table.iter() {
            let Some(event) = HookEvent::parse(key) else {
                problems.push(reader.at(
                    item,
                    format!(
                        "unknown hook event {key} (expected one of {})",
                        HookEvent::ALL.map(HookEvent::name).join(", ")
                    ),
                ));
                continue;
            };
            match item.as_array_of_tables() {
                Some(groups) => {
                    for group in groups.iter() {
                        reader.group(event, group, &mut self.hooks, &mut problems);
                    }
                }
                None => problems.push(reader.at(
                    item,
                    format!("expected [[hooks.{key}]] tables (matcher, hooks)"),
                )),
            }
        }
        problems
    }
}

struct Reader<'a> {
    text: &'a str,
    file: &'a str,
    path: &'a std::path::Path,
    layer: FileLayer,
}

impl Reader<'_> {
    fn at(&self, item: &toml_edit::Item, message: String) -> Diagnostic {
        Diagnostic::at(self.text, self.file, offset(item), message)
    }

    fn at_value(&self, value: &toml_edit::Value, message: String) -> Diagnostic {
        let start = value.span().map(|s| s.start).unwrap_or(0);
        Diagnostic::at(self.text, self.file, start, message)
    }

    /// One `[[hooks.EVENT]]` table: `matcher` and `hooks`.
    fn group(
        &self,
        event: HookEvent,
        group: &toml_edit::Table,
        out: &mut Vec<HookSpec>,
        problems: &mut Vec<Diagnostic>,
    ) {
        let mut matcher = None;
        for (key, item) in group.iter() {
            match key {
                "matcher" => match item.as_str() {
                    Some(text) => match compile_matcher(text) {
                        Ok(_) => matcher = Some(text.to_string()),
                        Err(e) => {
                            let e = e.to_string();
                            let why = e
                                .lines()
                                .last()
                                .unwrap_or_default()
                                .trim_start_matches("error: ");
                            problems.push(
                                self.at(item, format!("matcher is not a valid regex ({why})")),
                            );
                        }
                    },
                    None => problems.push(self.at(item, "expected matcher to be a string".into())),
                },
                "hooks" => {}
                other => problems.push(self.at(
                    item,
                    format!("unknown key {other} in [[hooks.{event}]] (expected matcher, hooks)"),
                )),
            }
        }
        let Some(item) = group.get("hooks") else {
            problems.push(Diagnostic::at(
                self.text,
                self.file,
                group.span().map(|s| s.start).unwrap_or(0),
                format!("[[hooks.{event}]] has no hooks = [...]"),
            ));
            return;
        };
        let Some(list) = item.as_array() else {
            problems.push(self.at(item, "expected hooks to be an array of tables".into()));
            return;
        };
        for entry in list.iter() {
            match self.command(event, matcher.clone(), entry) {
                Ok(spec) => out.push(spec),
                Err(problem) => problems.push(problem),
            }
        }
    }

    /// One `{ type = "command", command = "...", timeout = 60, sandbox = false }`.
    fn command(
        &self,
        event: HookEvent,
        matcher: Option<String>,
        entry: &toml_edit::Value,
    ) -> Result<HookSpec, Diagnostic> {
        let Some(table) = entry.as_inline_table() else {
            return Err(self.at_value(
                entry,
                "expected a hook to be { type = \"command\", command = \"...\" }".into(),
            ));
        };
        let mut command = None;
        let mut timeout = DEFAULT_HOOK_TIMEOUT;
        let mut sandboxed = true;
        let mut kind = None;
        for (key, value) in table.iter() {
            match key {
                "type" => kind = value.as_str().map(str::to_string),
                "command" => match value.as_str() {
                    Some(text) if !text.trim().is_empty() => command = Some(text.to_string()),
                    _ => {
                        return Err(self
                            .at_value(value, "expected command to be a non-empty string".into()));
                    }
                },
                "timeout" => match value.as_integer().filter(|n| (1..=86_400).contains(n)) {
                    Some(seconds) => timeout = Duration::from_secs(seconds.unsigned_abs()),
                    None => {
                        return Err(self.at_value(
                            value,
                            "expected timeout to be whole seconds from 1 to 86400".into(),
                        ));
                    }
                },
                "sandbox" => match value.as_bool() {
                    Some(false) if self.layer == FileLayer::Project => {
                        return Err(self.at_value(value, "sandbox = false is for your own config.toml only: a project's hooks always run in the sandbox".into()));
                    }
                    Some(flag) => sandboxed = flag,
                    None => {
                        return Err(
                            self.at_value(value, "expected sandbox to be true or false".into())
                        );
                    }
                },
                other => {
                    return Err(self.at_value(value, format!("unknown key {other} in a hook (expected type, command, timeout, sandbox)")));
                }
            }
        }
        if kind.as_deref() != Some("command") {
            return Err(self.at_value(
                entry,
                "expected type = \"command\" (the only hook type toolgate runs)".into(),
            ));
        }
        let Some(command) = command else {
            return Err(self.at_value(entry, "a hook needs command = \"...\"".into()));
        };
        Ok(HookSpec {
            event,
            matcher,
            command,
            timeout,
            sandboxed,
            layer: self.layer,
            file: self.path.to_path_buf(),
        })
    }
}

/// The matcher as a regex over the whole name (`Write` matches only `Write`, as in Claude
/// Code); None for a matcher that matches every name (`*` or empty).
pub fn compile_matcher(text: &str) -> Result<Option<regex::Regex>, regex::Error> {
    let text = text.trim();
    if text.is_empty() || text == "*" {
        return Ok(None);
    }
    regex::Regex::new(&format!("^(?:{text})$")).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(text: &str, layer: FileLayer) -> (HookSettings, Vec<String>) {
        let mut hooks = HookSettings::default();
        let problems = hooks.add_file(text, Path::new("/u/config.toml"), layer);
        (hooks, problems.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn a_claude_code_shaped_table_is_read() {
        let (hooks, problems) = read(
            "[[hooks.PreToolUse]]\nmatcher = \"mcp__deploy__.*\"\nhooks = [{ type = \"command\", command = \"check\", timeout = 10 }]\n\n[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"a\" }, { type = \"command\", command = \"b\", sandbox = false }]\n",
            FileLayer::User,
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(hooks.hooks.len(), 3);
        assert_eq!(hooks.hooks[0].event, HookEvent::PreToolUse);
        assert_eq!(hooks.hooks[0].matcher.as_deref(), Some("mcp__deploy__.*"));
        assert_eq!(hooks.hooks[0].timeout, Duration::from_secs(10));
        assert_eq!(hooks.hooks[1].timeout, DEFAULT_HOOK_TIMEOUT);
        assert!(hooks.hooks[1].sandboxed);
        assert!(!hooks.hooks[2].sandboxed);
    }

    #[test]
    fn every_problem_is_named_with_its_position() {
        let (_, problems) = read(
            "[[hooks.PreToolUze]]\nhooks = []\n[[hooks.PreToolUse]]\nmatcher = \"(\"\nhooks = [{ type = \"command\", command = \"x\", timeout = \"soon\" }]\n",
            FileLayer::User,
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("/u/config.toml:1:1: unknown hook event PreToolUze"));
        assert!(
            problems[1] == "/u/config.toml:4:11: matcher is not a valid regex (unclosed group)"
        );
        assert!(
            problems[2].starts_with("/u/config.toml:5:55: expected timeout"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_project_hook_cannot_leave_the_sandbox() {
        let (hooks, problems) = read(
            "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"b\", sandbox = false }]\n",
            FileLayer::Project,
        );
        assert!(hooks.hooks.is_empty());
        assert!(problems[0].contains("a project's hooks always run in the sandbox"));
    }

    #[test]
    fn matchers_are_whole_name_regexes() {
        let m = compile_matcher("Edit|Write").unwrap().unwrap();
        assert!(m.is_match("Write") && !m.is_match("WriteFile"));
        assert!(compile_matcher("*").unwrap().is_none());
    }
}
