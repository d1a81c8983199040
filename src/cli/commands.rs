//! The non-console subcommands: `toolgate mcp list|tools|call`, and the configuration
//! summary. They print to stdout; they never run while the console owns the terminal.

use crate::cli::prompt::ElicitationChoice;
use crate::mcp::{HubEvent, McpHub, ServerStatus, SignInMode};
use crate::oauth::Opener;
use crate::pool::{self, Pool};
use crate::sandbox::Sandbox;
use crate::settings::{LoadOptions, LoadedServers, ManagedSettings, ServerPolicy, Settings};
use std::fmt::Write as _;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// Where configuration comes from, as the command line says.
#[derive(Debug, Clone, Default)]
pub struct ConfigFlags {
    pub workspace: Option<PathBuf>,
    pub mcp_config: Vec<PathBuf>,
    pub trust_project: bool,
}

impl ConfigFlags {
    pub fn workspace(&self) -> PathBuf {
        self.workspace
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// Every setting of the config files (the project's only when trusted), read once.
    pub fn settings(&self) -> Settings {
        crate::settings::load(&LoadOptions {
            flag_files: self.mcp_config.clone(),
            ..LoadOptions::new(&self.workspace(), self.trust_project)
        })
    }
}

fn report_diagnostics(loaded: &LoadedServers, out: &mut String) {
    for d in &loaded.diagnostics {
        let _ = writeln!(out, "warning: {d}");
    }
    for f in &loaded.ignored_project_files {
        let _ = writeln!(
            out,
            "note: {} is ignored until you trust this folder (run the console, or pass --trust-project)",
            f.display()
        );
    }
}

/// A hub for one command. A sign-in page it opens is also printed on stderr: the person
/// may have no browser here, and stdout is the command's report.
fn hub_for(
    (loaded, managed_servers): (&LoadedServers, ServerPolicy),
    flags: &ConfigFlags,
    sandbox: Sandbox,
    sign_in: SignInMode,
    opener: Opener,
    elicitation: ElicitationChoice,
) -> McpHub {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // `toolgate status` builds a hub outside the runtime only to list; it never signs in.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            while let Some(event) = rx.recv().await {
                match event {
                    HubEvent::SignInStarted { server, url } => eprintln!(
                        "To sign in to '{server}', open this page (a browser is being opened where possible):\n  {url}"
                    ),
                    // One at a time: the next question waits in the channel meanwhile.
                    HubEvent::Elicitation(question) => answer_elicitation(question, elicitation).await,
                    _ => {}
                }
            }
        });
    }
    McpHub::with_options(
        loaded.servers.clone(),
        tx,
        crate::mcp::HubOptions {
            workspace: flags.workspace(),
            sandbox,
            sign_in,
            opener,
            managed_servers,
            ..Default::default()
        },
    )
}

/// Asks on the terminal when there is one and the person did not choose otherwise.
async fn answer_elicitation(question: crate::mcp::ElicitationQuestion, choice: ElicitationChoice) {
    use std::io::IsTerminal;
    let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if choice == ElicitationChoice::Ask && on_terminal {
        let asked = question.clone();
        let reply = tokio::task::spawn_blocking(move || {
            crate::cli::prompt::ask(
                &asked.server,
                &asked.ask,
                &mut std::io::stdin().lock(),
                &mut std::io::stderr(),
            )
        })
        .await;
        // A failed terminal counts as no answer: declined.
        if let Ok(Ok(reply)) = reply {
            question.answer(reply);
        }
        return;
    }
    let (reply, line) = crate::cli::prompt::unattended(&question.server, &question.ask, choice);
    eprintln!("{line}");
    question.answer(reply);
}

/// Loads the settings (writing every diagnostic into `out`) and builds a hub for one
/// command over them. `sign_in`: sign in when a server asks, through this opener; None
/// never signs in.
fn open_hub(
    flags: &ConfigFlags,
    out: &mut String,
    sign_in: Option<Opener>,
    elicitation: ElicitationChoice,
) -> (LoadedServers, Sandbox, McpHub) {
    open_hub_with(flags.settings(), flags, out, sign_in, elicitation)
}

/// [`open_hub`] over settings read already.
fn open_hub_with(
    settings: Settings,
    flags: &ConfigFlags,
    out: &mut String,
    sign_in: Option<Opener>,
    elicitation: ElicitationChoice,
) -> (LoadedServers, Sandbox, McpHub) {
    let (loaded, sandbox, managed_servers) = load_all(settings, out);
    let (mode, opener) = match sign_in {
        Some(opener) => (SignInMode::Now, opener),
        None => (SignInMode::Never, Opener::System),
    };
    let hub = hub_for(
        (&loaded, managed_servers),
        flags,
        sandbox.clone(),
        mode,
        opener,
        elicitation,
    );
    (loaded, sandbox, hub)
}

/// Servers, sandbox settings and the managed server lists, writing every diagnostic into
/// `out`. A managed file with problems admits no server (fail closed), saying why.
fn load_all(settings: Settings, out: &mut String) -> (LoadedServers, Sandbox, ServerPolicy) {
    report_diagnostics(&settings.servers, out);
    for d in &settings.sandbox.diagnostics {
        let _ = writeln!(out, "warning: {d}");
    }
    for d in &settings.managed.diagnostics {
        let _ = writeln!(
            out,
            "error: {d} (the managed policy cannot be read: toolgate does not start and no server is started)"
        );
    }
    let managed_servers = ManagedSettings::server_policy(&settings.managed);
    (
        settings.servers,
        Sandbox::new(settings.sandbox.value),
        managed_servers,
    )
}

/// The pool the agent starts with, or after connecting the given servers.
pub fn pool_of(hub: &McpHub) -> Result<Pool, pool::PoolError> {
    let servers = hub.server_tools();
    let connected: Vec<String> = servers.iter().map(|s| s.server().to_string()).collect();
    pool::assemble(
        &crate::pool::pool_builtins(&hub.configured(), &connected),
        &servers,
    )
}

/// `toolgate mcp list`: every server, whether it starts, and how many tools it has.
pub async fn mcp_list(flags: &ConfigFlags) -> (String, i32) {
    let mut out = String::new();
    // Listing never opens a browser: a server that wants a sign-in says so.
    let (loaded, _, hub) = open_hub(flags, &mut out, None, ElicitationChoice::Decline);
    let checks = loaded.servers.iter().map(|s| {
        let hub = hub.clone();
        async move { (s.name.clone(), hub.connect(&s.name).await) }
    });
    let results = futures::future::join_all(checks).await;
    let mut failed = 0;
    for (server, result) in results {
        let config = loaded.servers.iter().find(|s| s.name == server);
        let command = config.map(|c| c.command_line()).unwrap_or_default();
        match (result, hub.status(&server)) {
            (Ok(tools), ServerStatus::Ready { protocol, .. }) => {
                let _ = writeln!(
                    out,
                    "{server:<12} ready   {:>3} tools  protocol {protocol}  ({command})",
                    tools.len()
                );
            }
            (Err(e), _) => {
                failed += 1;
                let _ = writeln!(out, "{server:<12} failed  {e}  ({command})");
            }
            (Ok(_), other) => {
                let _ = writeln!(out, "{server:<12} {other:?}");
            }
        }
        if let Some(auth) = hub.auth_status(&server).await {
            let _ = writeln!(out, "{:<12} sign-in: {auth}", "");
        }
    }
    hub.shutdown().await;
    (out, i32::from(failed > 0))
}

/// Connects one server, lets `body` write its part, and always shuts the hub down.
/// Failures become an `error:` line and exit code 1.
async fn with_server<F>(
    flags: &ConfigFlags,
    server: &str,
    elicitation: ElicitationChoice,
    body: F,
) -> (String, i32)
where
    F: AsyncFnOnce(&McpHub, &mut String) -> Result<i32, String>,
{
    let mut out = String::new();
    // The person asked for this server: sign in if it wants that.
    let (_, _, hub) = open_hub(flags, &mut out, Some(Opener::System), elicitation);
    let result = match hub.connect(server).await {
        Ok(_) => body(&hub, &mut out).await,
        Err(e) => Err(e.to_string()),
    };
    hub.shutdown().await;
    let code = result.unwrap_or_else(|e| {
        let _ = writeln!(out, "error: {e}");
        1
    });
    (out, code)
}

/// `toolgate mcp tools NAME`: the tools of one server as the model would see them.
pub async fn mcp_tools(flags: &ConfigFlags, server: &str) -> (String, i32) {
    with_server(
        flags,
        server,
        ElicitationChoice::Decline,
        async |hub: &McpHub, out: &mut String| {
            let pool = pool_of(hub).map_err(|e| e.to_string())?;
            for tool in pool.tools.iter().filter(|t| t.server() == Some(server)) {
                let raw = match &tool.origin {
                    pool::ToolOrigin::Mcp { tool, .. } => tool.clone(),
                    _ => String::new(),
                };
                let marker = if tool.shortened { " (shortened)" } else { "" };
                let _ = writeln!(out, "{}{marker}  [raw: {raw}]", tool.name);
                let first_line = tool.description.lines().next().unwrap_or("");
                let _ = writeln!(out, "    {}", crate::sanitize::for_terminal(first_line));
                if !tool.claims.is_empty() {
                    let _ = writeln!(out, "    server claims: {}", tool.claims.describe());
                }
            }
            Ok(0)
        },
    )
    .await
}

/// `toolgate mcp call NAME TOOL JSON`: one call, printed as the model would receive it.
/// No policy applies here: the person typing the command is the one deciding.
/// A server's elicitation during the call is answered as `elicitation` says.
pub async fn mcp_call(
    flags: &ConfigFlags,
    server: &str,
    tool: &str,
    json: &str,
    elicitation: ElicitationChoice,
) -> (String, i32) {
    let arguments: serde_json::Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => return (format!("error: arguments are not valid JSON: {e}\n"), 2),
    };
    with_server(
        flags,
        server,
        elicitation,
        async |hub: &McpHub, out: &mut String| {
            let output = hub
                .call(server, tool, arguments, None, CancellationToken::new())
                .await
                .map_err(|e| e.to_string())?;
            out.push_str(&crate::sanitize::for_terminal(&output.text));
            out.push('\n');
            Ok(i32::from(output.is_error))
        },
    )
    .await
}

/// `toolgate mcp login NAME [--no-browser]`: signs in to an HTTP server now (again, if it
/// was signed in), then connects to show that the token works.
pub async fn mcp_login(flags: &ConfigFlags, server: &str, open_browser: bool) -> (String, i32) {
    let mut out = String::new();
    let opener = if open_browser {
        Opener::System
    } else {
        Opener::ShowOnly
    };
    let (_, _, hub) = open_hub(flags, &mut out, Some(opener), ElicitationChoice::Decline);
    let code = match hub.sign_in_now(server).await {
        Ok(status) => {
            let _ = writeln!(out, "{server}: {status}");
            match hub.connect(server).await {
                Ok(tools) => {
                    let _ = writeln!(out, "{server}: connected, {} tools", tools.len());
                    0
                }
                Err(e) => {
                    let _ = writeln!(out, "error: {e}");
                    1
                }
            }
        }
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            1
        }
    };
    hub.shutdown().await;
    (out, code)
}

/// `toolgate mcp logout NAME`: forgets the server's tokens and registration.
pub async fn mcp_logout(flags: &ConfigFlags, server: &str) -> (String, i32) {
    let mut out = String::new();
    let (_, _, hub) = open_hub(flags, &mut out, None, ElicitationChoice::Decline);
    let code = match hub.sign_out(server).await {
        Ok(true) => {
            let _ = writeln!(out, "{server}: signed out (its tokens are forgotten)");
            0
        }
        Ok(false) => {
            let _ = writeln!(out, "{server}: was not signed in");
            0
        }
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            1
        }
    };
    (out, code)
}

/// The problems of the permission rules: errors (toolgate does not start with them) first.
fn report_rule_problems(problems: &[crate::policy::RuleProblem], out: &mut String) {
    use crate::policy::Severity;
    let errors = problems
        .iter()
        .filter(|p| p.severity == Severity::Refuses)
        .count();
    let _ = writeln!(
        out,
        "Permission rules: {}",
        match errors {
            0 => "no errors".to_string(),
            1 => "1 error (toolgate does not start until it is fixed)".to_string(),
            n => format!("{n} errors (toolgate does not start until they are fixed)"),
        }
    );
    for severity in [Severity::Refuses, Severity::Notice] {
        for problem in problems.iter().filter(|p| p.severity == severity) {
            let label = match severity {
                Severity::Refuses => "error",
                Severity::Notice => "warning",
            };
            let _ = writeln!(out, "  {label}: {}", problem.diagnostic);
        }
    }
}

/// What `toolgate` printed before the console existed, kept as `toolgate status`, and
/// whether toolgate would start with this configuration: exit code 2 where the start
/// refuses (the same check, [`crate::cli::bootstrap::start_refusals`]), else 0.
pub fn status(flags: &ConfigFlags) -> (String, i32) {
    let mut out = String::new();
    let settings = flags.settings();
    let refusals = crate::cli::bootstrap::start_refusals(&settings);
    let notices = section_notices(&settings);
    let (policy, rule_problems) = crate::policy::from_settings_checked(&settings.permissions);
    let managed = crate::policy::managed_summary(&settings.managed.value, &policy);
    let (loaded, sandbox, hub) =
        open_hub_with(settings, flags, &mut out, None, ElicitationChoice::Decline);
    let workspace = flags.workspace();
    let _ = writeln!(out, "Sandbox: {}", sandbox.status().describe());
    let bash = sandbox.bash_profile(&workspace);
    let _ = match sandbox.status().check(&bash) {
        Ok(()) => writeln!(out, "  bash: {}", bash.describe()),
        Err(e) => writeln!(
            out,
            "  bash: {} — cannot be enforced: {}",
            bash.describe(),
            e.reason()
        ),
    };
    // Plan mode's "no writes" is the kernel's (decision 0088): say what that takes here.
    let plan = sandbox
        .with_bash_writes(crate::sandbox::BashWrites::Nothing)
        .bash_profile(&workspace);
    let _ = match sandbox.status().check(&plan) {
        Ok(()) => writeln!(out, "  bash in plan mode: {}", plan.describe()),
        Err(e) => writeln!(
            out,
            "  bash in plan mode: {} — cannot be enforced, so bash is refused in plan mode: {}",
            plan.describe(),
            e.reason()
        ),
    };
    let _ = writeln!(
        out,
        "  network proxy: {}",
        sandbox.status().describe_proxy()
    );
    report_rule_problems(&rule_problems, &mut out);
    for notice in &notices {
        let _ = writeln!(out, "warning: {notice}");
    }
    for line in managed {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "Configured MCP servers:");
    for s in &loaded.servers {
        let source = match &s.source {
            crate::settings::ConfigSource::Embedded => "embedded".to_string(),
            crate::settings::ConfigSource::User(p)
            | crate::settings::ConfigSource::Project(p)
            | crate::settings::ConfigSource::Flag(p) => p.display().to_string(),
        };
        let _ = writeln!(out, "  {:<12} {}  [{source}]", s.name, s.command_line());
        if let Some(reason) = hub.blocked_reason(&s.name) {
            let _ = writeln!(out, "  {:<12} never started: {reason}", "");
        }
        if !matches!(s.transport, crate::settings::ServerTransport::Http { .. }) {
            let profile = sandbox.server_profile(s, &workspace);
            let _ = writeln!(out, "  {:<12} sandbox: {}", "", profile.describe());
        }
    }
    match pool_of(&hub) {
        Ok(pool) => {
            let _ = writeln!(out, "Tool pool ({} tools):", pool.tools.len());
            for t in &pool.tools {
                let _ = writeln!(out, "  {}", t.name);
            }
        }
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
        }
    }
    // Last, where it is seen: the verdict, and each reason in the start's own words.
    if refusals.is_empty() {
        let _ = writeln!(out, "Start: toolgate starts with this configuration.");
        (out, 0)
    } else {
        let _ = writeln!(
            out,
            "Start: refused. toolgate does not start until this is fixed:"
        );
        for refusal in &refusals {
            let _ = writeln!(out, "error: {refusal}");
        }
        (out, 2)
    }
}

/// The settings sections read in part (`[tools]`, the host's, `[tui]`, `[model]`): what
/// the start announces as notices about them, listed by `toolgate status` too.
fn section_notices(settings: &crate::settings::Settings) -> Vec<String> {
    let sections = [
        ("tools", &settings.tools.diagnostics),
        ("host", &settings.host.diagnostics),
        ("tui", &settings.tui.diagnostics),
        ("model", &settings.model.diagnostics),
    ];
    sections
        .into_iter()
        .flat_map(|(section, diagnostics)| {
            diagnostics
                .iter()
                .map(move |d| format!("config [{section}]: {d}"))
        })
        .collect()
}
