//! `toolgate hooks import claude`: Claude Code's `"hooks"` of a `settings.json` copied into
//! a toolgate `config.toml` as `[[hooks.EVENT]]` tables, keeping the rest of the file as
//! it is written (toml_edit). A hook already there (same event, matcher and command) is
//! not copied twice; an entry toolgate cannot run is reported, not copied.
//!
//! Claude Code runs its hooks outside any sandbox; toolgate runs hooks in the bash sandbox
//! unless a hook says `sandbox = false`. So a hook copied from the user's own file is
//! written `sandbox = false` (as it was written to run) unless the person asks for the
//! sandbox, and a project's hook, which may never leave the sandbox, is copied as it is;
//! each copied line says which way it will run.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, value};

use super::HookEvent;

/// How the copied hooks will run: the choice is written into each copied hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopiedHooksRun {
    /// `sandbox = false`: as Claude Code ran them (the user's own file only).
    Unsandboxed,
    /// No `sandbox` key: in the bash sandbox, like every hook by default.
    Sandboxed,
}

impl CopiedHooksRun {
    /// What the person reads after each copied hook.
    fn note(self) -> &'static str {
        match self {
            CopiedHooksRun::Unsandboxed => {
                "sandbox = false: runs outside the sandbox, as Claude Code ran it"
            }
            CopiedHooksRun::Sandboxed => {
                "runs in the sandbox: writes only in the workspace and temp, no network"
            }
        }
    }
}

/// What one import did, one line per hook, for the person.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub copied: Vec<String>,
    pub skipped: Vec<String>,
}

/// Why an import copied nothing.
#[derive(Debug, thiserror::Error)]
pub enum HooksImportError {
    /// Claude Code's settings file (the caller names it).
    #[error("cannot read: {0}")]
    ReadSettings(#[source] std::io::Error),
    #[error("not valid JSON ({0}); nothing was copied")]
    NotJson(#[source] serde_json::Error),
    #[error("cannot read {}: {source}", path.display())]
    ReadConfig {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the config file is not valid TOML ({0}); nothing was copied")]
    NotToml(#[source] toml_edit::TomlError),
    /// The config file's `hooks` (None) or `hooks.EVENT` is something else than tables.
    #[error("{}; nothing was copied", not_tables(*.0))]
    NotHookTables(Option<HookEvent>),
    #[error("cannot write {}: {}", .0.path.display(), .0.source)]
    Write(#[source] crate::paths::WriteError),
}

fn not_tables(event: Option<HookEvent>) -> String {
    match event {
        None => "the config file's hooks is not a table".to_string(),
        Some(event) => {
            format!("hooks.{event} in the config file is not [[hooks.{event}]] tables")
        }
    }
}

/// Copies the hooks of the Claude Code settings file `from` into the toolgate config file
/// `into` (which may not exist yet), written atomically and only when a hook was copied.
/// None when `from` does not exist.
pub fn copy_claude_hooks(
    from: &Path,
    into: &Path,
    run: CopiedHooksRun,
) -> Result<Option<ImportReport>, HooksImportError> {
    let json = match std::fs::read_to_string(from) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HooksImportError::ReadSettings(e)),
    };
    let toml = match std::fs::read_to_string(into) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(HooksImportError::ReadConfig {
                path: into.to_path_buf(),
                source,
            });
        }
    };
    let (text, report) = import_claude_hooks(&json, &toml, run)?;
    if !report.copied.is_empty() {
        crate::paths::write_atomically(into, text.as_bytes()).map_err(HooksImportError::Write)?;
    }
    Ok(Some(report))
}

/// Adds the hooks of Claude Code's `settings_json` to `config_toml`; the new text of the
/// config file and what was copied. An error when either file cannot be read as its format.
pub fn import_claude_hooks(
    settings_json: &str,
    config_toml: &str,
    run: CopiedHooksRun,
) -> Result<(String, ImportReport), HooksImportError> {
    let settings: Value = serde_json::from_str(settings_json).map_err(HooksImportError::NotJson)?;
    let mut doc: DocumentMut = config_toml.parse().map_err(HooksImportError::NotToml)?;
    let mut report = ImportReport::default();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return Ok((doc.to_string(), report));
    };
    for (name, groups) in events {
        let Some(event) = HookEvent::parse(name) else {
            report
                .skipped
                .push(format!("{name}: not an event toolgate runs"));
            continue;
        };
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty());
            if let Some(m) = matcher
                && super::compile_matcher(m).is_err()
            {
                report
                    .skipped
                    .push(format!("{event} [{m}]: the matcher is not a regex"));
                continue;
            }
            for hook in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let command = hook.get("command").and_then(Value::as_str);
                let kind = hook.get("type").and_then(Value::as_str);
                let (Some("command"), Some(command)) = (kind, command) else {
                    report.skipped.push(format!(
                        "{event}: a hook of type {} (toolgate runs type \"command\" only)",
                        kind.unwrap_or("?")
                    ));
                    continue;
                };
                let timeout = hook.get("timeout").and_then(Value::as_i64);
                let shown = match matcher {
                    Some(m) => format!("{event} [{m}]: {command}"),
                    None => format!("{event}: {command}"),
                };
                if present(&doc, event, matcher, command) {
                    report.skipped.push(format!("{shown} (already there)"));
                    continue;
                }
                add(&mut doc, event, matcher, command, timeout, run)?;
                report.copied.push(format!("{shown} ({})", run.note()));
            }
        }
    }
    Ok((doc.to_string(), report))
}

fn groups(doc: &DocumentMut, event: HookEvent) -> Option<&ArrayOfTables> {
    doc.get("hooks")?
        .as_table_like()?
        .get(event.name())?
        .as_array_of_tables()
}

fn present(doc: &DocumentMut, event: HookEvent, matcher: Option<&str>, command: &str) -> bool {
    groups(doc, event).is_some_and(|groups| {
        groups.iter().any(|group| {
            group.get("matcher").and_then(Item::as_str) == matcher
                && group
                    .get("hooks")
                    .and_then(Item::as_array)
                    .is_some_and(|hooks| {
                        hooks.iter().any(|h| {
                            h.as_inline_table()
                                .and_then(|t| t.get("command"))
                                .and_then(|c| c.as_str())
                                == Some(command)
                        })
                    })
        })
    })
}

fn add(
    doc: &mut DocumentMut,
    event: HookEvent,
    matcher: Option<&str>,
    command: &str,
    timeout: Option<i64>,
    run: CopiedHooksRun,
) -> Result<(), HooksImportError> {
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or(HooksImportError::NotHookTables(None))?;
    let groups = hooks
        .entry(event.name())
        .or_insert(Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or(HooksImportError::NotHookTables(Some(event)))?;
    let mut hook = InlineTable::new();
    hook.insert("type", "command".into());
    hook.insert("command", command.into());
    if let Some(seconds) = timeout {
        hook.insert("timeout", seconds.into());
    }
    if run == CopiedHooksRun::Unsandboxed {
        hook.insert("sandbox", false.into());
    }
    let mut list = toml_edit::Array::new();
    list.push(hook);
    let mut group = Table::new();
    if let Some(m) = matcher {
        group.insert("matcher", value(m));
    }
    group.insert("hooks", value(list));
    groups.push(group);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: &str = r#"{"permissions": {}, "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-done"}, {"type": "prompt", "prompt": "x"}]}]
    }}"#;

    #[test]
    fn hooks_are_copied_keeping_the_file_and_read_back() {
        let before = "# mine\n[permissions]\nallow = [\"read_file\"]  # keep\n";
        let (after, report) =
            import_claude_hooks(CLAUDE, before, CopiedHooksRun::Unsandboxed).unwrap();
        assert!(after.starts_with(before), "{after}");
        let note = CopiedHooksRun::Unsandboxed.note();
        assert_eq!(
            report.copied,
            [
                format!("PreToolUse [Bash]: guard.sh ({note})"),
                format!("Stop: notify-done ({note})")
            ]
        );
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        let mut read = super::super::HookSettings::default();
        let problems = read.add_file(
            &after,
            std::path::Path::new("c.toml"),
            super::super::FileLayer::User,
        );
        assert!(problems.is_empty(), "{problems:?}\n{after}");
        assert_eq!(read.hooks.len(), 2);
        assert_eq!(read.hooks[0].timeout.as_secs(), 5);
        assert!(read.hooks.iter().all(|h| !h.sandboxed), "{after}");
        // A second import copies nothing again.
        let (again, report) =
            import_claude_hooks(CLAUDE, &after, CopiedHooksRun::Unsandboxed).unwrap();
        assert_eq!(again, after);
        assert!(report.copied.is_empty());
    }

    #[test]
    fn sandboxed_copies_carry_no_sandbox_key_and_a_project_file_reads_them() {
        let (after, report) = import_claude_hooks(CLAUDE, "", CopiedHooksRun::Sandboxed).unwrap();
        assert!(!after.contains("sandbox"), "{after}");
        assert!(
            report.copied[0].ends_with(
                "(runs in the sandbox: writes only in the workspace and temp, no network)"
            )
        );
        let mut read = super::super::HookSettings::default();
        let problems = read.add_file(
            &after,
            std::path::Path::new("p.toml"),
            super::super::FileLayer::Project,
        );
        assert!(problems.is_empty(), "{problems:?}\n{after}");
        assert!(read.hooks.iter().all(|h| h.sandboxed));
    }
}
