//! The managed layer: a policy an administrator sets and no other layer can loosen. It is
//! read from the system file ([`SYSTEM_MANAGED_PATH`]) and from the file named by
//! `TOOLGATE_MANAGED_CONFIG` (both apply: the variable adds a layer, it cannot remove the
//! system file). Unlike the user's and project's files, a managed file is read strictly:
//! any problem (not TOML, an unknown table or key, a value of the wrong shape) is a
//! diagnostic, and a managed layer with a diagnostic refuses the start (decision 0082): a
//! half-read policy could drop a deny rule or a server block.
//!
//! ```toml
//! [permissions]
//! allow = ["mcp__docs__search"]
//! ask = ["mcp__deploy__status"]
//! deny = ["mcp__deploy__trigger"]
//! managed_rules_only = true   # allow rules of every other layer (flags too) are ignored
//! disable_auto_mode = true    # modes that decide without asking are refused
//!
//! [mcp]
//! allowed_servers = ["docs", "command:npx -y @acme/*", "url:https://*.acme.example/*"]
//! denied_servers = ["deploy"]
//!
//! [sandbox]                   # a floor: other layers may tighten it, never loosen it
//! mode = "workspace-write"
//! network = false
//! ```

use std::path::{Path, PathBuf};

use super::managed_sandbox::SandboxFloor;
use super::managed_servers::ServerPolicy;
use super::permissions::{FileLayer, PermissionsFile};
use super::{Diagnostic, Section};

/// The system managed file of this platform (the usual system configuration location).
#[cfg(target_os = "macos")]
pub const SYSTEM_MANAGED_PATH: &str = "/Library/Application Support/toolgate/managed.toml";
#[cfg(windows)]
pub const SYSTEM_MANAGED_PATH: &str = r"C:\ProgramData\toolgate\managed.toml";
#[cfg(not(any(target_os = "macos", windows)))]
pub const SYSTEM_MANAGED_PATH: &str = "/etc/toolgate/managed.toml";

/// The variable that names one more managed file.
pub const MANAGED_CONFIG_VAR: &str = "TOOLGATE_MANAGED_CONFIG";

/// Where the managed files are. The loader receives these (production: the system path
/// and the variable; tests: their own paths), so nothing below reads a fixed location.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedPlaces {
    /// Read when it exists; absent is no managed policy.
    pub system: Option<PathBuf>,
    /// Named on purpose (`TOOLGATE_MANAGED_CONFIG`): it must exist and be readable.
    pub extra: Option<PathBuf>,
}

impl ManagedPlaces {
    /// The system file and `TOOLGATE_MANAGED_CONFIG` (an empty value names no file).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> ManagedPlaces {
        ManagedPlaces {
            system: Some(PathBuf::from(SYSTEM_MANAGED_PATH)),
            extra: env(MANAGED_CONFIG_VAR)
                .filter(|v| !v.trim().is_empty())
                .map(PathBuf::from),
        }
    }

    /// The places in layer order, each with whether it must exist.
    fn each(&self) -> impl Iterator<Item = (&PathBuf, bool)> {
        self.system
            .iter()
            .map(|p| (p, false))
            .chain(self.extra.iter().map(|p| (p, true)))
    }
}

/// What the managed files say, merged: every file's constraints apply (a flag set in any
/// file is set; each file's server list must admit a server; the stricter sandbox wins).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManagedSettings {
    /// The managed files that were read, in layer order.
    pub files: Vec<PathBuf>,
    /// `[permissions]` of each file, for the policy (rules with their positions).
    pub permissions: Vec<PermissionsFile>,
    /// `permissions.managed_rules_only`: allow rules of the other layers are ignored.
    pub managed_rules_only: bool,
    /// `permissions.disable_auto_mode`: no mode or flag that decides calls without asking.
    pub disable_auto_mode: bool,
    /// `[mcp] allowed_servers` / `denied_servers`.
    pub servers: ServerPolicy,
    /// `[sandbox]`: the floor of the sandbox settings.
    pub sandbox: SandboxFloor,
    /// What the floor changed in the other layers' settings, one line each (for
    /// `toolgate status` and `/permissions`).
    pub overrides: Vec<String>,
    /// `[hooks]` of the managed files: they always run (decision 0086).
    pub hooks: super::HookSettings,
    /// `[flow]` of the managed files (decision 0102).
    pub flow: super::ManagedFlow,
}

impl ManagedSettings {
    /// Whether any managed file was read.
    pub fn is_active(&self) -> bool {
        !self.files.is_empty()
    }

    /// The managed files read, as one comma-separated line.
    pub fn files_shown(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        files.join(", ")
    }

    /// The server lists to enforce: the managed ones, or none admitted at all when the
    /// managed files have problems (fail closed).
    pub fn server_policy(section: &Section<ManagedSettings>) -> ServerPolicy {
        match section.diagnostics.first() {
            Some(first) => {
                ServerPolicy::admit_none(format!("the managed policy cannot be read ({first})"))
            }
            None => section.value.servers.clone(),
        }
    }

    /// Why a mode that decides calls without asking (`--permission-mode auto`, or any
    /// bypass-like flag) is refused; None when the managed policy allows it.
    pub fn auto_mode_refusal(&self) -> Option<String> {
        self.disable_auto_mode.then(|| {
            format!(
                "the managed policy ({}) sets disable_auto_mode: modes that decide calls without asking are not available",
                self.files_shown()
            )
        })
    }

    /// Why toolgate does not start with a managed layer that has problems (None: it has
    /// none).
    pub fn refusal(section: &Section<ManagedSettings>) -> Option<String> {
        (!section.diagnostics.is_empty()).then(|| {
            let lines: Vec<String> = section
                .diagnostics
                .iter()
                .map(|d| format!("  {d}"))
                .collect();
            format!(
                "the managed policy cannot be read, so toolgate does not start: a policy read in part could let through what the administrator stopped.\n{}\nAsk the administrator to fix the managed file.",
                lines.join("\n")
            )
        })
    }
}

const TABLES: &str = "permissions, mcp, sandbox, hooks or flow";
/// Keys of `[permissions]` that only a managed file may set.
pub(super) const MANAGED_PERMISSION_KEYS: [&str; 2] = ["managed_rules_only", "disable_auto_mode"];

/// Reads every managed file of `places`. Any problem is a diagnostic (and refuses start).
pub fn load(places: &ManagedPlaces) -> Section<ManagedSettings> {
    let mut section = Section::<ManagedSettings>::default();
    for (path, required) in places.each() {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let diagnostics = apply_file(&mut section.value, path, &text);
                section.diagnostics.extend(diagnostics);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {}
            Err(e) => section.diagnostics.push(Diagnostic::whole_file(
                path,
                if required {
                    format!("cannot read the managed file named by {MANAGED_CONFIG_VAR}: {e}")
                } else {
                    format!("cannot read the managed file: {e}")
                },
            )),
        }
    }
    section
}

/// Applies one managed file's text over `managed`; returns its problems.
pub fn apply_file(managed: &mut ManagedSettings, path: &Path, text: &str) -> Vec<Diagnostic> {
    let file = path.display().to_string();
    let doc = match super::toml::parse(text, &file, "managed policy") {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    managed.files.push(path.to_path_buf());
    let mut diagnostics = Vec::new();
    for (key, item) in doc.iter() {
        if !matches!(key, "permissions" | "mcp" | "sandbox" | "hooks" | "flow") {
            diagnostics.push(Diagnostic::at(
                text,
                &file,
                super::toml::offset(item),
                format!("unknown table or key {key} in the managed file (expected {TABLES})"),
            ));
        }
    }
    diagnostics.extend(permissions(managed, path, text, &file, &doc));
    diagnostics.extend(
        managed
            .hooks
            .add_file(text, path, super::permissions::FileLayer::Managed),
    );
    match super::toml::table(&doc, "mcp", text, &file) {
        Ok(Some(table)) => diagnostics.extend(managed.servers.add_table(table, text, &file)),
        Ok(None) => {}
        Err(problem) => diagnostics.push(problem),
    }
    match super::toml::table(&doc, "sandbox", text, &file) {
        Ok(Some(table)) => diagnostics.extend(managed.sandbox.add_table(table, text, &file)),
        Ok(None) => {}
        Err(problem) => diagnostics.push(problem),
    }
    match super::toml::table(&doc, "flow", text, &file) {
        Ok(Some(table)) => diagnostics.extend(managed.flow.add_table(table, text, &file)),
        Ok(None) => {}
        Err(problem) => diagnostics.push(problem),
    }
    diagnostics
}

/// `[permissions]`: the rule lists (read as every other file's are, every problem kept),
/// and the two managed-only switches.
fn permissions(
    managed: &mut ManagedSettings,
    path: &Path,
    text: &str,
    file: &str,
    doc: &toml_edit::Document<&str>,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let entries = super::permissions::parse_table_with(text, file, &MANAGED_PERMISSION_KEYS);
    diagnostics.extend(entries.iter().filter_map(|entry| match entry {
        super::PermissionEntry::Problem { diagnostic, .. } => Some(diagnostic.clone()),
        _ => None,
    }));
    if let Ok(Some(table)) = super::toml::table(doc, "permissions", text, file) {
        for key in MANAGED_PERMISSION_KEYS {
            let Some(value) = table.get(key) else {
                continue;
            };
            match value.as_bool() {
                Some(on) => {
                    let slot = if key == "managed_rules_only" {
                        &mut managed.managed_rules_only
                    } else {
                        &mut managed.disable_auto_mode
                    };
                    // Any file that sets it sets it: a second file cannot unset it.
                    *slot |= on;
                }
                None => diagnostics.push(Diagnostic::at(
                    text,
                    file,
                    super::toml::offset(value),
                    format!("expected permissions.{key} = true or false"),
                )),
            }
        }
    }
    managed.permissions.push(PermissionsFile {
        path: path.to_path_buf(),
        layer: FileLayer::Managed,
        text: text.to_string(),
        entries,
    });
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{PermissionEntry, PermissionList};

    fn read(text: &str) -> (ManagedSettings, Vec<String>) {
        let mut managed = ManagedSettings::default();
        let diags = apply_file(&mut managed, Path::new("/etc/toolgate/managed.toml"), text);
        (managed, crate::settings::shown(&diags))
    }

    #[test]
    fn a_full_file_is_read() {
        let (managed, diags) = read(
            "[permissions]\ndeny = [\"mcp__deploy__trigger\"]\nallow = [\"mcp__docs__search\"]\nmanaged_rules_only = true\ndisable_auto_mode = true\n\n[mcp]\ndenied_servers = [\"deploy\"]\n\n[sandbox]\nmode = \"workspace-write\"\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert!(managed.managed_rules_only && managed.disable_auto_mode);
        assert!(managed.is_active());
        let rules: Vec<_> = managed.permissions[0]
            .entries
            .iter()
            .filter_map(|e| match e {
                PermissionEntry::Rule { list, text, .. } => Some((*list, text.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            rules,
            [
                (PermissionList::Deny, "mcp__deploy__trigger"),
                (PermissionList::Allow, "mcp__docs__search")
            ]
        );
        assert_eq!(managed.permissions[0].layer, FileLayer::Managed);
    }

    #[test]
    fn every_problem_is_named_with_its_position() {
        for (text, expected) in [
            (
                "[permissions\ndeny = []\n",
                "/etc/toolgate/managed.toml:1:13: not valid TOML",
            ),
            (
                "[permissions]\ndenny = [\"x\"]\n",
                "/etc/toolgate/managed.toml:2:9: unknown key permissions.denny",
            ),
            (
                "[permissions]\nmanaged_rules_only = \"yes\"\n",
                "/etc/toolgate/managed.toml:2:22: expected permissions.managed_rules_only",
            ),
            (
                "[hookz]\nx = 1\n",
                "/etc/toolgate/managed.toml:1:1: unknown table or key hookz",
            ),
            (
                "[mcp]\nallowed_servers = \"docs\"\n",
                "/etc/toolgate/managed.toml:2:19: expected mcp.allowed_servers",
            ),
            (
                "[sandbox]\nmode = \"loose\"\n",
                "/etc/toolgate/managed.toml:2:8: expected sandbox.mode",
            ),
        ] {
            let (_, diags) = read(text);
            assert_eq!(diags.len(), 1, "{text}: {diags:?}");
            assert!(diags[0].starts_with(expected), "{text}: {}", diags[0]);
        }
    }

    #[test]
    fn the_system_file_is_optional_and_the_named_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent.toml");
        let quiet = load(&ManagedPlaces {
            system: Some(missing.clone()),
            extra: None,
        });
        assert!(quiet.diagnostics.is_empty());
        assert!(!quiet.value.is_active());
        let named = load(&ManagedPlaces {
            system: None,
            extra: Some(missing),
        });
        assert_eq!(named.diagnostics.len(), 1);
        assert!(
            named.diagnostics[0]
                .message
                .contains("TOOLGATE_MANAGED_CONFIG")
        );
        let refusal = ManagedSettings::refusal(&named).unwrap();
        assert!(refusal.contains("does not start"), "{refusal}");
    }

    #[test]
    fn both_files_apply_and_neither_unsets_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("system.toml");
        let extra = dir.path().join("extra.toml");
        std::fs::write(&system, "[permissions]\nmanaged_rules_only = true\n").unwrap();
        std::fs::write(
            &extra,
            "[permissions]\nmanaged_rules_only = false\ndeny = [\"Bash(curl:*)\"]\n",
        )
        .unwrap();
        let both = load(&ManagedPlaces {
            system: Some(system.clone()),
            extra: Some(extra.clone()),
        });
        assert!(both.diagnostics.is_empty(), "{:?}", both.diagnostics);
        assert!(both.value.managed_rules_only);
        assert_eq!(both.value.files, [system, extra]);
        assert_eq!(both.value.permissions.len(), 2);
    }

    #[test]
    fn a_load_and_every_reload_put_the_managed_layer_on_top() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        std::fs::create_dir(&user).unwrap();
        std::fs::write(
            user.join("config.toml"),
            "[permissions]\nallow = [\"mcp__deploy__trigger\"]\n[sandbox]\nmode = \"off\"\n",
        )
        .unwrap();
        let managed = dir.path().join("managed.toml");
        std::fs::write(
            &managed,
            "[permissions]\ndeny = [\"mcp__deploy__trigger\"]\ndisable_auto_mode = true\n[sandbox]\nmode = \"read-only\"\n",
        )
        .unwrap();
        let opts = crate::settings::LoadOptions {
            workspace: dir.path().to_path_buf(),
            user_config_dir: Some(user),
            managed: ManagedPlaces {
                system: None,
                extra: Some(managed.clone()),
            },
            ..Default::default()
        };
        // The watcher and the rule reload see the managed file like the others.
        assert!(crate::settings::rule_files(&opts).contains(&managed));
        let settings = crate::settings::load(&opts);
        assert!(settings.managed.diagnostics.is_empty());
        assert_eq!(settings.permissions.managed.len(), 1);
        assert_eq!(
            settings.sandbox.value.mode,
            crate::settings::SandboxMode::ReadOnly
        );
        assert!(
            settings
                .managed
                .value
                .auto_mode_refusal()
                .unwrap()
                .contains("disable_auto_mode")
        );
        let (policy, problems) = crate::policy::from_settings(&settings.permissions);
        assert!(problems.is_empty(), "{problems:?}");
        let summary = crate::policy::managed_summary(&settings.managed.value, &policy);
        assert!(summary[0].ends_with("managed.toml"), "{summary:?}");
        assert!(
            summary
                .iter()
                .any(|l| l.contains("raised to \"read-only\"")),
            "{summary:?}"
        );
    }

    #[test]
    fn the_variable_adds_a_file_beside_the_system_one() {
        let places = ManagedPlaces::from_env(&|name| {
            (name == MANAGED_CONFIG_VAR).then(|| "/tmp/m.toml".to_string())
        });
        assert_eq!(places.system, Some(PathBuf::from(SYSTEM_MANAGED_PATH)));
        assert_eq!(places.extra, Some(PathBuf::from("/tmp/m.toml")));
        assert_eq!(ManagedPlaces::from_env(&|_| Some(" ".into())).extra, None);
    }
}
