//! One load of every setting: each configuration file is read once, and every table of a
//! `config.toml` is taken from that one reading. The parts keep their own diagnostics, so
//! that each is reported (and a reload refused) as before the files were read together.

use std::path::{Path, PathBuf};

use super::permissions::{FileLayer, Permissions, PermissionsFile, parse_table};
use super::{
    Diagnostic, HostSettings, LoadOptions, LoadedServers, ManagedSettings, ModelSettings,
    SandboxSettings, SearchSettings, load_servers_with_env,
};

/// One part of the settings with the problems found reading it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section<T> {
    pub value: T,
    pub diagnostics: Vec<Diagnostic>,
}

/// Everything the configuration files and flags say: `servers` (the `.mcp.json` layers),
/// `permissions` (`[permissions]` of each `config.toml`, and the rule flags), and the other
/// `config.toml` tables: `[sandbox]`, `[tools]`, and `host` (`[mcp]` and `[sampling]`).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub servers: LoadedServers,
    pub permissions: Permissions,
    pub sandbox: Section<SandboxSettings>,
    pub tools: Section<SearchSettings>,
    pub host: Section<HostSettings>,
    /// `[flow]` (decision 0102), with the managed file's choices put over it.
    pub flow: Section<super::FlowSettings>,
    /// `[model]`: the retries of a model request (read at start).
    pub model: Section<ModelSettings>,
    /// `[tui]`: the console's notifications (read when it starts).
    pub tui: Section<super::TuiSettings>,
    /// The managed layer (decision 0082), already applied to the parts above (its rules
    /// are in `permissions`, its floor under `sandbox` and the servers' own choices). A
    /// diagnostic here refuses the start ([`ManagedSettings::refusal`]).
    pub managed: Section<ManagedSettings>,
    /// `[hooks]` of the managed files, the user's and a trusted project's, in that order
    /// (decision 0086). A diagnostic here refuses the start.
    pub hooks: Section<super::HookSettings>,
}

/// The workspace's `.toolgate/config.toml`.
pub fn project_config_path(workspace: &Path) -> PathBuf {
    crate::paths::workspace_dir(workspace).join("config.toml")
}

/// The `config.toml` files [`load`] reads (whether they exist yet or not): the user's, and
/// the project's when the workspace is trusted.
pub fn rule_files(opts: &LoadOptions) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = toml_files(opts).into_iter().map(|(path, _)| path).collect();
    // The managed files that exist (a reload keeps the managed layer on top, and a
    // changed managed file reloads the rules like any other).
    let managed = &opts.managed;
    files.extend(
        managed
            .system
            .iter()
            .chain(managed.extra.iter())
            .filter(|p| p.is_file())
            .cloned(),
    );
    files
}

fn toml_files(opts: &LoadOptions) -> Vec<(PathBuf, FileLayer)> {
    let mut files = Vec::new();
    if let Some(dir) = &opts.user_config_dir {
        files.push((dir.join("config.toml"), FileLayer::User));
    }
    if opts.trust_project {
        files.push((project_config_path(&opts.workspace), FileLayer::Project));
    }
    files
}

/// A `config.toml` that exists, read once: its text, or why it could not be read.
struct TomlFile {
    path: PathBuf,
    layer: FileLayer,
    text: Result<String, std::io::Error>,
}

impl TomlFile {
    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

fn read_toml_files(opts: &LoadOptions) -> Vec<TomlFile> {
    toml_files(opts)
        .into_iter()
        .filter_map(|(path, layer)| match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            text => Some(TomlFile { path, layer, text }),
        })
        .collect()
}

/// Loads every setting: embedded < user < project (when trusted) < flags.
pub fn load(opts: &LoadOptions) -> Settings {
    let env = |name: &str| std::env::var(name).ok();
    load_with_env(opts, &env)
}

pub fn load_with_env(opts: &LoadOptions, env: &dyn Fn(&str) -> Option<String>) -> Settings {
    let files = read_toml_files(opts);
    let project = project_config_path(&opts.workspace);
    let mut managed = super::managed::load(&opts.managed);
    let permissions = Permissions {
        ignored_project_file: (!opts.trust_project && project.exists()).then_some(project),
        files: files
            .iter()
            .map(|file| match &file.text {
                Ok(text) => PermissionsFile {
                    path: file.path.clone(),
                    layer: file.layer,
                    text: text.clone(),
                    entries: parse_table(text, &file.name()),
                },
                Err(e) => PermissionsFile {
                    path: file.path.clone(),
                    layer: file.layer,
                    text: String::new(),
                    entries: vec![super::PermissionEntry::Problem {
                        diagnostic: Diagnostic::whole_file(&file.path, format!("cannot read: {e}")),
                        list: None,
                    }],
                },
            })
            .collect(),
        allow_flags: opts.allow_flags.clone(),
        deny_flags: opts.deny_flags.clone(),
        managed: managed.value.permissions.clone(),
        managed_rules_only: managed.value.managed_rules_only,
    };
    let mut sandbox = layered(&files, Some("[sandbox]"), |value, text, file| {
        let base = (file.layer == FileLayer::Project).then_some(opts.workspace.as_path());
        super::sandbox::apply_layer(value, text, &file.name(), base)
    });
    let tools = layered(&files, Some("[tools]"), |value, text, file| {
        super::tools::apply_tools_layer(value, text, &file.name())
    });
    // Unreadable files are reported by the sandbox settings, which read the same ones.
    let host = layered(&files, None, |value, text, file| {
        super::host::apply_layer(value, text, &file.name())
    });
    let mut flow = layered(&files, None, |value, text, file| {
        super::flow::apply_layer(value, text, &file.name())
    });
    let model = layered(&files, None, |value, text, file| {
        super::model::apply_layer(value, text, &file.name())
    });
    let mut hooks = Section {
        value: managed.value.hooks.clone(),
        diagnostics: Vec::new(),
    };
    for file in &files {
        if let Ok(text) = &file.text {
            let problems = hooks.value.add_file(text, &file.path, file.layer);
            hooks.diagnostics.extend(problems);
        }
    }
    let tui = layered(&files, None, |value, text, file| {
        super::tui::apply_layer(value, text, &file.name())
    });
    let mut servers = load_servers_with_env(opts, env);
    // The managed floor last: nothing a user or project file says can loosen it.
    let floor = &managed.value.sandbox;
    let mut overrides = floor.apply(&mut sandbox.value);
    if !floor.is_empty() {
        sandbox.value.managed_floor = managed.value.files.first().cloned();
    }
    overrides.extend(floor.apply_to_servers(&mut servers.servers));
    overrides.extend(managed.value.flow.apply(&mut flow.value));
    managed.value.overrides = overrides;
    Settings {
        servers,
        permissions,
        sandbox,
        tools,
        host,
        flow,
        model,
        tui,
        managed,
        hooks,
    }
}

/// One table of every file over its default, a later file's values over an earlier's. A
/// file that could not be read is a diagnostic naming the `table` that does not apply
/// (none when `table` is None).
fn layered<T: Default>(
    files: &[TomlFile],
    table: Option<&str>,
    apply: impl Fn(&mut T, &str, &TomlFile) -> Vec<Diagnostic>,
) -> Section<T> {
    let mut section = Section::<T>::default();
    for file in files {
        match &file.text {
            Ok(text) => {
                let diagnostics = apply(&mut section.value, text, file);
                section.diagnostics.extend(diagnostics);
            }
            Err(e) => section.diagnostics.extend(table.map(|table| {
                Diagnostic::whole_file(
                    &file.path,
                    format!("cannot read: {e}; its {table} settings do not apply"),
                )
            })),
        }
    }
    section
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{SandboxMode, SearchMode};

    /// A user config dir and a workspace with these `config.toml` files (untrusted).
    fn files(user: &str, project: &str) -> ([tempfile::TempDir; 2], LoadOptions) {
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let [user_dir, ws] = &dirs;
        std::fs::write(user_dir.path().join("config.toml"), user).unwrap();
        std::fs::create_dir(ws.path().join(".toolgate")).unwrap();
        std::fs::write(ws.path().join(".toolgate/config.toml"), project).unwrap();
        let opts = LoadOptions {
            workspace: ws.path().to_path_buf(),
            user_config_dir: Some(user_dir.path().to_path_buf()),
            ..LoadOptions::default()
        };
        (dirs, opts)
    }

    #[test]
    fn project_file_overrides_the_mode_and_adds_paths_only_when_trusted() {
        let (_dirs, mut sources) = files(
            "[sandbox]\nnetwork = true\nwritable = [\"/opt/a\"]\n",
            "[sandbox]\nnetwork = false\nmode = \"read-only\"\nwritable = [\"out\"]\n",
        );
        let Section {
            value: untrusted,
            diagnostics: diags,
        } = load(&sources).sandbox;
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(untrusted.network, crate::settings::NetworkAccess::Full);
        assert_eq!(untrusted.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(untrusted.writable, [PathBuf::from("/opt/a")]);

        sources.trust_project = true;
        let trusted = load(&sources).sandbox.value;
        assert_eq!(trusted.network, crate::settings::NetworkAccess::None);
        assert_eq!(trusted.mode, SandboxMode::ReadOnly);
        assert_eq!(
            trusted.writable,
            [PathBuf::from("/opt/a"), sources.workspace.join("out")]
        );
    }

    #[test]
    fn every_table_comes_from_the_one_reading_of_each_file() {
        let (_dirs, mut opts) = files(
            "[permissions]\nallow = [\"mcp__docs__search\"]\n[tools]\nsearch = \"on\"\n",
            "[sampling]\nmax_tokens = 7\n[permissions]\ndeny = [\"Bash(rm)\"]\n",
        );
        let untrusted = load(&opts);
        assert_eq!(untrusted.tools.value.mode, SearchMode::On);
        assert_eq!(untrusted.permissions.files.len(), 1);
        assert_eq!(
            untrusted.permissions.ignored_project_file,
            Some(opts.workspace.join(".toolgate/config.toml"))
        );
        assert_eq!(untrusted.host.value, HostSettings::default());

        opts.trust_project = true;
        let trusted = load(&opts);
        assert_eq!(trusted.permissions.ignored_project_file, None);
        assert_eq!(trusted.permissions.files.len(), 2);
        assert_eq!(trusted.permissions.files[1].layer, FileLayer::Project);
        assert_eq!(trusted.host.value.sampling_max_tokens, 7);
        assert_eq!(rule_files(&opts).len(), 2);
    }
}
