//! `[permissions]` in `config.toml` as it is written: the rule strings of `allow`, `ask` and
//! `deny` with their positions, and `outside_workspace`. What a rule means (and whether it
//! parses) is the policy's business; this module only reads the table, so that the policy
//! does no I/O and the files are read once with the rest of the settings.
//!
//! ```toml
//! [permissions]
//! allow = ["mcp__docs__search", "Bash(git status)"]
//! ask = ["mcp__deploy__trigger"]
//! deny = ["Bash(rm -rf *)"]
//! outside_workspace = "ask"   # or "deny"
//! default_mode = "default"    # or "accept-edits", "plan", "ask", "auto"
//! ```

use std::path::PathBuf;

use super::Diagnostic;
use crate::protocol::PermissionMode;

/// Which list of `[permissions]` a rule string is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionList {
    Allow,
    Ask,
    Deny,
}

/// `permissions.outside_workspace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutsideSetting {
    Ask,
    Deny,
}

/// One thing the table says, in the order of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionEntry {
    /// A rule string; `offset` is the byte offset of its value (the opening quote).
    Rule {
        list: PermissionList,
        text: String,
        offset: usize,
    },
    OutsideWorkspace(OutsideSetting),
    /// `default_mode`: the permission mode a session starts in (a later file's wins).
    DefaultMode(PermissionMode),
    /// A table that is not shaped as expected; the rest of it still counts. `list`: the one
    /// list the problem is confined to (an element of `allow` that is not a string), None
    /// when it may hide a rule of any list (a file that does not parse, an unknown key).
    Problem {
        diagnostic: Diagnostic,
        list: Option<PermissionList>,
    },
}

/// Which config file a table came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileLayer {
    User,
    Project,
    /// A managed file (`/etc/toolgate/managed.toml`, `TOOLGATE_MANAGED_CONFIG`): above
    /// every other layer.
    Managed,
}

/// The `[permissions]` of one config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionsFile {
    pub path: PathBuf,
    pub layer: FileLayer,
    /// The file's text: positions of problems found later (a rule that does not parse) are
    /// counted in it.
    pub text: String,
    pub entries: Vec<PermissionEntry>,
}

/// The permission rules of every layer: files (user, then a trusted project) and flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    /// The project's `config.toml`, present but not read because the folder is not trusted.
    pub ignored_project_file: Option<PathBuf>,
    pub files: Vec<PermissionsFile>,
    /// `--allow RULE` and `--deny RULE`.
    pub allow_flags: Vec<String>,
    pub deny_flags: Vec<String>,
    /// `[permissions]` of the managed files: above every other layer.
    pub managed: Vec<PermissionsFile>,
    /// `managed_rules_only = true` in a managed file: the other layers' allow rules (flags
    /// included) are ignored.
    pub managed_rules_only: bool,
}

impl Permissions {
    /// `default_mode` as the files say it (the project's over the user's), if any says it.
    pub fn default_mode(&self) -> Option<PermissionMode> {
        self.files
            .iter()
            .flat_map(|file| file.entries.iter())
            .filter_map(|entry| match entry {
                PermissionEntry::DefaultMode(mode) => Some(*mode),
                _ => None,
            })
            .next_back()
    }
}

/// Reads the `[permissions]` table of `text` (the contents of `file`). Other tables are left
/// alone (they belong to other parts of the settings).
pub fn parse_table(text: &str, file: &str) -> Vec<PermissionEntry> {
    parse_table_with(text, file, &[])
}

/// [`parse_table`], leaving the keys in `other_keys` to the caller (the managed file's own
/// switches).
pub fn parse_table_with(text: &str, file: &str, other_keys: &[&str]) -> Vec<PermissionEntry> {
    let mut entries = Vec::new();
    let problem =
        |offset: usize, list: Option<PermissionList>, message: String| PermissionEntry::Problem {
            diagnostic: Diagnostic::at(text, file, offset, message),
            list,
        };
    let whole = |diagnostic: Diagnostic| {
        vec![PermissionEntry::Problem {
            diagnostic,
            list: None,
        }]
    };
    let doc = match super::toml::parse(text, file, "permission rules") {
        Ok(doc) => doc,
        Err(problem) => return whole(problem),
    };
    let table = match super::toml::table(&doc, "permissions", text, file) {
        Ok(Some(table)) => table,
        Ok(None) => return entries,
        Err(problem) => return whole(problem),
    };
    for (key, value) in table.iter() {
        let at = super::toml::offset(value);
        let list = match key {
            "allow" => PermissionList::Allow,
            "ask" => PermissionList::Ask,
            "deny" => PermissionList::Deny,
            "outside_workspace" => {
                entries.push(match value.as_str() {
                    Some("ask") => PermissionEntry::OutsideWorkspace(OutsideSetting::Ask),
                    Some("deny") => PermissionEntry::OutsideWorkspace(OutsideSetting::Deny),
                    _ => problem(
                        at,
                        None,
                        "expected outside_workspace = \"ask\" or \"deny\"".into(),
                    ),
                });
                continue;
            }
            "default_mode" => {
                // A mode that cannot be read may have been a stricter one (plan, ask): like
                // a rule that cannot be read, it stops the start (list: None).
                entries.push(match value.as_str().and_then(PermissionMode::parse) {
                    Some(mode) => PermissionEntry::DefaultMode(mode),
                    None => problem(
                        at,
                        None,
                        format!("expected default_mode = {}", PermissionMode::NAMES),
                    ),
                });
                continue;
            }
            other if other_keys.contains(&other) => continue,
            other => {
                entries.push(problem(
                    at,
                    None,
                    format!("unknown key permissions.{other} (expected allow, ask, deny, outside_workspace or default_mode); ignored"),
                ));
                continue;
            }
        };
        let Some(array) = value.as_array() else {
            entries.push(problem(
                at,
                Some(list),
                format!("expected permissions.{key} to be an array of rule strings"),
            ));
            continue;
        };
        for element in array.iter() {
            let at = element.span().map(|s| s.start).unwrap_or(0);
            entries.push(match element.as_str() {
                Some(rule_text) => PermissionEntry::Rule {
                    list,
                    text: rule_text.to_string(),
                    offset: at,
                },
                None => problem(
                    at,
                    Some(list),
                    format!("expected a rule string in permissions.{key}"),
                ),
            });
        }
    }
    entries
}
