//! One way to build the agent, for both front ends: servers, hub, policy, model and the
//! session to resume, from the options the command line gave. The console and headless
//! mode differ only in the [`FrontEnd`] they pass.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::agent::{AgentConfig, DEFAULT_OUTPUT_BUDGET, DEFAULT_TURN_CAP};
use crate::error::Failure;
use crate::journal::{self, ResumeFrom};
use crate::mcp::McpHub;
use crate::policy::{Policy, Severity};
use crate::settings::reload::SettingsSeen;
use crate::settings::{Permissions, Settings};

/// Which front end the agent reports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    /// The full-screen console: questions go to the inbox, a resumed conversation is
    /// replayed on screen.
    Console,
    /// `toolgate -p`: never waits for input (an Ask is denied, saying how to allow it),
    /// prints only the new turn.
    Headless,
}

/// What both front ends take from the command line.
#[derive(Debug, Clone)]
pub struct StartOptions {
    pub workspace: PathBuf,
    /// `--allow RULE` (repeatable, policy rule syntax).
    pub allow: Vec<String>,
    /// `--deny RULE` (repeatable).
    pub deny: Vec<String>,
    /// `--continue` → `Some(Latest)`, `--resume ID` → `Some(Id)`.
    pub resume: Option<ResumeFrom>,
    /// `--mcp-config FILE` (repeatable).
    pub mcp_config: Vec<PathBuf>,
    /// Whether the workspace's own `.mcp.json` and `.toolgate/config.toml` count.
    pub trust_project: bool,
    /// `--provider NAME`; None selects by environment (see `crate::model::select`).
    pub provider: Option<String>,
    /// `--model ID` (else `$MODEL_ID`, else the provider's default).
    pub model: Option<String>,
    /// Model calls per user message.
    pub turn_cap: usize,
    pub output_budget: usize,
    /// `--ask-timeout SECS`: how long a tool-call question waits before it is denied.
    pub ask_timeout: Option<Duration>,
    /// `--permission-mode MODE`: wins over `[permissions] default_mode` and over the mode
    /// a resumed session was in.
    pub permission_mode: Option<crate::protocol::PermissionMode>,
}

impl StartOptions {
    pub fn new(workspace: PathBuf) -> StartOptions {
        StartOptions {
            workspace,
            allow: Vec::new(),
            deny: Vec::new(),
            resume: None,
            mcp_config: Vec::new(),
            trust_project: false,
            provider: None,
            model: None,
            turn_cap: DEFAULT_TURN_CAP,
            output_budget: DEFAULT_OUTPUT_BUDGET,
            ask_timeout: None,
            permission_mode: None,
        }
    }
}

impl StartOptions {
    /// Where the settings are read from, with the rule flags.
    pub fn settings_options(&self) -> crate::settings::LoadOptions {
        crate::settings::LoadOptions {
            flag_files: self.mcp_config.clone(),
            allow_flags: self.allow.clone(),
            deny_flags: self.deny.clone(),
            ..crate::settings::LoadOptions::new(&self.workspace, self.trust_project)
        }
    }
}

/// Builds the agent's configuration. Errors are usage errors: each is about something the
/// person asked for (a bad rule flag, an unknown provider or session).
pub fn prepare(opts: &StartOptions, front_end: FrontEnd) -> Result<AgentConfig, Failure> {
    let settings = crate::settings::load(&opts.settings_options());
    prepare_with(opts, front_end, settings)
}

/// [`prepare`] with the settings read already (from `opts.settings_options()`).
pub fn prepare_with(
    opts: &StartOptions,
    front_end: FrontEnd,
    settings: Settings,
) -> Result<AgentConfig, Failure> {
    let refusals = start_refusals(&settings);
    if !refusals.is_empty() {
        return Err(Failure::Usage(refusals.join("\n")));
    }
    let Settings {
        servers: loaded,
        permissions,
        sandbox: sandbox_section,
        tools,
        host,
        flow,
        model: model_section,
        tui,
        managed,
        hooks,
    } = settings;
    // The console reloads on file changes and `/mcp reload`; a headless run keeps the
    // configuration it started with.
    let (policy, policy_notices, rules) = build_policy(&permissions);
    let mut notices: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| format!("config: {d}"))
        .collect();
    notices.extend(loaded.ignored_project_files.iter().map(|f| {
        format!(
            "{} is ignored: this folder is not trusted (pass --trust-project)",
            f.display()
        )
    }));
    notices.extend(policy_notices);
    if managed.value.is_active() {
        notices.push(format!(
            "managed policy in force ({}): /permissions and `toolgate status` show what it sets and overrides",
            managed.value.files_shown()
        ));
    }
    notices.extend(
        sandbox_section
            .diagnostics
            .iter()
            .map(|d| format!("sandbox: {d}")),
    );
    let sandbox = crate::sandbox::Sandbox::new(sandbox_section.value.clone());
    notices.extend(tools.diagnostics.iter().map(|d| format!("config: {d}")));
    let (mcp_output_tokens, output_notice) =
        mcp_output_tokens(std::env::var("MAX_MCP_OUTPUT_TOKENS").ok().as_deref());
    notices.extend(output_notice);
    // Unavailable or switched off: said at every start, never a silent downgrade.
    notices.extend(sandbox.startup_notice(&opts.workspace));
    let host_settings = host.value;
    notices.extend(host.diagnostics.iter().map(|d| format!("config: {d}")));
    notices.extend(tui.diagnostics.iter().map(|d| format!("config: {d}")));
    notices.extend(flow.diagnostics.iter().map(|d| format!("config: {d}")));
    let reload = (front_end == FrontEnd::Console).then(|| crate::agent::ConfigReload {
        options: opts.settings_options(),
        known_problems: loaded.diagnostics.clone(),
        watch: true,
        rules: Some(crate::agent::RulesReload {
            settings_seen: Some(SettingsSeen::at_start(host_settings, sandbox_section.value)),
            ..rules
        }),
    });
    notices.extend(
        model_section
            .diagnostics
            .iter()
            .map(|d| format!("config: {d}")),
    );
    // Instruction files and command files; a command file never takes a built-in's name.
    let (project, project_notices) = crate::project::ProjectContext::load(
        &opts.workspace,
        crate::paths::user_config_dir().as_deref(),
        &crate::tui::builtin_command_words(),
    );
    notices.extend(project_notices);
    let model = select_model(opts, &model_section.value)?;
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        loaded.servers,
        hub_tx,
        crate::mcp::HubOptions {
            workspace: opts.workspace.clone(),
            sandbox: sandbox.clone(),
            log_level: host_settings.log_level,
            max_message_bytes: host_settings.max_message_bytes,
            managed_servers: managed.value.servers.clone(),
            ..Default::default()
        },
    );
    let mut config = AgentConfig::new(model, hub, hub_rx, policy, opts.workspace.clone());
    config.headless = front_end == FrontEnd::Headless;
    config.replay_history = front_end == FrontEnd::Console;
    config.startup_notices = notices;
    config.turn_cap = opts.turn_cap;
    config.context_window = model_section.value.context_window;
    config.auto_compact_percent = model_section.value.auto_compact_percent;
    config.output_budget = opts.output_budget;
    config.ask_timeout = opts.ask_timeout;
    config.sandbox = sandbox;
    config.sampling_max_tokens = host_settings.sampling_max_tokens;
    config.flow = flow.value;
    config.tool_search = tools.value;
    config.mcp_output_tokens = mcp_output_tokens;
    config.reload = reload;
    config.permission_mode = crate::agent::ModeStart {
        mode: opts
            .permission_mode
            .or(permissions.default_mode())
            .unwrap_or_default(),
        from_flag: opts.permission_mode.is_some(),
    };
    // Checked where every mode change is (`ModeSwitch::change`): the start, Shift+Tab.
    if let Some(why) = managed.value.auto_mode_refusal() {
        config
            .mode_limits
            .disabled
            .insert(crate::protocol::PermissionMode::Auto, why);
    }
    config.project = crate::project::ProjectContext {
        trusted: opts.trust_project,
        ..project
    };
    config.hooks = hooks.value;
    // A headless run cannot ask; `--trust-project` is the person's consent given up front,
    // for the project's hooks as for its servers (without it the project file is not read).
    config.hooks_project_consent = config.headless && opts.trust_project;
    if let Some(from) = &opts.resume {
        let dir = config
            .sessions_dir
            .clone()
            .ok_or_else(|| Failure::Usage(journal::SessionError::NoStateDir.to_string()))?;
        let id = journal::resolve(&dir, &opts.workspace, from)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        config.resume = Some(id);
    }
    Ok(config)
}

/// Why toolgate does not start with these settings, one paragraph per reason (none: it
/// starts). The one check behind both the start ([`prepare_with`]) and `toolgate status`,
/// so the two never disagree:
/// - a managed policy read in part would be looser than written (0082);
/// - a hook read in part could be a guard that silently never runs (0086);
/// - a rule problem that may hide a deny or ask rule would make the rules looser than
///   written (0068), as would a bad `--allow`/`--deny` flag (typed just now).
pub fn start_refusals(settings: &Settings) -> Vec<String> {
    let mut refusals = Vec::new();
    refusals.extend(crate::settings::ManagedSettings::refusal(&settings.managed));
    if !settings.hooks.diagnostics.is_empty() {
        let lines: Vec<String> = settings
            .hooks
            .diagnostics
            .iter()
            .map(|d| format!("  {d}"))
            .collect();
        refusals.push(format!(
            "hooks: toolgate does not start while a hook cannot be read:\n{}",
            lines.join("\n")
        ));
    }
    let (_, problems) = crate::policy::from_settings_checked(&settings.permissions);
    let mut file_problems = Vec::new();
    for problem in problems {
        let diagnostic = problem.diagnostic;
        if diagnostic.file.starts_with("--allow ") || diagnostic.file.starts_with("--deny ") {
            refusals.push(diagnostic.to_string());
        } else if problem.severity == Severity::Refuses {
            file_problems.push(format!("  {diagnostic}"));
        }
    }
    if !file_problems.is_empty() {
        refusals.push(refused_rules(&file_problems));
    }
    refusals
}

/// The host policy: shipped defaults < user config < project config (when trusted) <
/// `--allow` / `--deny`, with the rule problems that do not stop the start as notices
/// (those that do are [`start_refusals`]'). Also what the console needs to reload the
/// rules when their files change.
fn build_policy(permissions: &Permissions) -> (Policy, Vec<String>, crate::agent::RulesReload) {
    let (policy, problems) = crate::policy::from_settings_checked(permissions);
    let rules = crate::agent::RulesReload {
        known_problems: problems.iter().map(|p| p.diagnostic.clone()).collect(),
        // Set once the other settings are read (prepare).
        settings_seen: None,
    };
    let notices = problems
        .into_iter()
        .filter(|p| p.severity != Severity::Refuses)
        .filter(|p| {
            !p.diagnostic.file.starts_with("--allow ") && !p.diagnostic.file.starts_with("--deny ")
        })
        .map(|p| format!("permissions: {}", p.diagnostic))
        .collect();
    (policy, notices, rules)
}

/// Why toolgate does not start with these rules, each problem on a line of its own.
pub fn refused_rules(problems: &[String]) -> String {
    format!(
        "permission rules cannot be read, so toolgate does not start: skipping a deny or ask rule would let through calls it should stop or ask about.\n{}\nFix them and start again (`toolgate status` lists them).",
        problems.join("\n")
    )
}

fn select_model(
    opts: &StartOptions,
    settings: &crate::settings::ModelSettings,
) -> Result<Box<dyn crate::model::ModelProvider>, Failure> {
    let mut provider = crate::model::ProviderOptions::from_env();
    provider.retry = crate::model::RetryPolicy::from_settings(settings);
    provider.thinking_budget = settings.thinking;
    provider.provider_flag = opts.provider.clone();
    if opts.model.is_some() {
        provider.model = opts.model.clone();
    }
    // Every selection error is about what the person asked for (unknown provider, missing
    // key, unreadable scenario), so it is a usage error.
    crate::model::select(&provider).map_err(|e| Failure::Usage(e.to_string()))
}

/// `MAX_MCP_OUTPUT_TOKENS` (as in Claude Code): estimated tokens of one MCP result the model
/// gets. Unset: the default; not a positive number: the default and a notice saying so.
fn mcp_output_tokens(value: Option<&str>) -> (usize, Option<String>) {
    let default = crate::agent::DEFAULT_MCP_OUTPUT_TOKENS;
    match value.map(str::trim) {
        None | Some("") => (default, None),
        Some(text) => match text.parse::<usize>() {
            Ok(tokens) if tokens > 0 => (tokens, None),
            _ => (
                default,
                Some(format!(
                    "MAX_MCP_OUTPUT_TOKENS={text:?} is not a positive number of tokens; using {default}"
                )),
            ),
        },
    }
}
