//! Command line entry: parses arguments and hands off to the library.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use toolgate::cli::bootstrap::StartOptions;
use toolgate::cli::commands::{self, ConfigFlags};
use toolgate::error::Failure;
use toolgate::journal::ResumeFrom;

#[derive(Parser, Debug)]
#[command(
    name = "toolgate",
    version,
    about = "A terminal console for an LLM agent whose MCP tool pool grows at run time, \
             behind a permission gate you control.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Run one prompt without the console and exit ("-" reads the prompt from stdin).
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    prompt: Option<String>,

    /// Output of headless mode.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output_format: OutputFormat,

    /// Allow a tool without asking (rule syntax as in settings, e.g. mcp__deploy__trigger).
    #[arg(long = "allow", value_name = "RULE")]
    allow: Vec<String>,

    /// Refuse a tool (rule syntax as in settings).
    #[arg(long = "deny", value_name = "RULE")]
    deny: Vec<String>,

    /// Model provider: anthropic, openai or scripted (default: from keys in the environment).
    #[arg(long)]
    provider: Option<String>,

    /// Model id (default: $MODEL_ID or the provider's default).
    #[arg(long)]
    model: Option<String>,

    /// Continue the latest session of this workspace.
    #[arg(short = 'c', long = "continue")]
    continue_session: bool,

    /// Resume a session by id.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,

    /// Permission mode: default, accept-edits, plan, ask or auto (default: [permissions]
    /// default_mode in config.toml, else default).
    #[arg(long, value_name = "MODE")]
    permission_mode: Option<toolgate::protocol::PermissionMode>,

    /// Deny a tool-call question nobody answered within this many seconds (console).
    #[arg(long, value_name = "SECS")]
    ask_timeout: Option<u64>,

    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(clap::Args, Debug, Clone, Default)]
struct ConfigArgs {
    /// Workspace folder (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Extra .mcp.json file(s), layered over the others.
    #[arg(long = "mcp-config", global = true, value_name = "FILE")]
    mcp_config: Vec<PathBuf>,

    /// Honour this workspace's .mcp.json and .toolgate/config.toml without asking.
    #[arg(long, global = true)]
    trust_project: bool,
}

impl ConfigArgs {
    fn flags(&self) -> ConfigFlags {
        ConfigFlags {
            workspace: self.workspace.clone(),
            mcp_config: self.mcp_config.clone(),
            trust_project: self.trust_project,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OutputFormat {
    Text,
    Jsonl,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one of toolgate's own MCP servers on stdio, or over Streamable HTTP with
    /// `--listen 127.0.0.1:PORT` (prints the endpoint URL; port 0 picks a free one).
    Serve {
        /// docs, deploy or fs
        server: String,
        /// Server arguments (fs: the root folder) and `--listen ADDR`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Inspect and use MCP servers outside the console.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Print the configured servers and the starting tool pool.
    Status,
    /// Restore the files the last turn changed in this workspace (modified and deleted
    /// ones come back, created ones are removed) and print them. Only the turn's own
    /// changes are undone; a file changed again since the turn is left alone and the undo
    /// refused, unless --force.
    Undo {
        /// List the workspace's checkpoints instead (time, session, turn, files changed).
        #[arg(long, conflicts_with = "dry_run")]
        list: bool,
        /// Print what would be restored (and what changed since the turn) without
        /// changing anything.
        #[arg(long)]
        dry_run: bool,
        /// Undo the last turn of this session (default: the last turn of any session).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Restore files changed again since the turn too, overwriting those changes.
        #[arg(long, conflicts_with_all = ["list", "dry_run"])]
        force: bool,
    },
    /// Check a session file's hash chain, or export its permission decisions.
    Audit {
        #[command(subcommand)]
        command: toolgate::cli::audit::AuditCommand,
    },
    /// Hooks (decision 0086): `hooks import claude` copies Claude Code's hooks.
    Hooks {
        #[command(subcommand)]
        command: toolgate::cli::hooks::HooksCommand,
    },
}

#[derive(Subcommand, Debug)]
enum McpCommand {
    /// Every configured server, whether it starts, and its tool count.
    List,
    /// The tools of one server, under their model-facing names.
    Tools { server: String },
    /// Call one tool and print its result.
    Call {
        server: String,
        tool: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        json: String,
        /// How to answer the server's requests for input (elicitation): ask on the
        /// terminal, send the form's defaults, or decline. Without a terminal, `ask`
        /// declines.
        #[arg(long, value_enum, default_value = "ask")]
        elicitation: toolgate::cli::prompt::ElicitationChoice,
    },
    /// Sign in to an HTTP server with OAuth (opens the browser; the URL is also printed).
    Login {
        server: String,
        /// Only print the sign-in URL; open it yourself (in any browser that can reach
        /// this machine's 127.0.0.1).
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the tokens of an HTTP server.
    Logout { server: String },
    /// Add a server: `add NAME -- COMMAND ARGS…` (stdio) or `add NAME URL` (HTTP).
    Add {
        name: String,
        /// Which file: user (~/.config/toolgate/mcp.json, the default) or project (.mcp.json).
        #[arg(long, short = 's', value_enum, default_value_t = ScopeArg::User)]
        scope: ScopeArg,
        /// stdio or http (default: http for a URL, else stdio).
        #[arg(long, short = 't', value_enum)]
        transport: Option<TransportArg>,
        /// An environment variable for a stdio server (repeatable).
        #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server (repeatable).
        #[arg(long = "header", short = 'H', value_name = "'Name: value'")]
        headers: Vec<String>,
        /// The command and its arguments (after `--`), or the server's URL.
        #[arg(required = true, num_args = 1..)]
        target: Vec<String>,
    },
    /// Add (or replace) a server from a JSON entry in .mcp.json format.
    AddJson {
        name: String,
        json: String,
        #[arg(long, short = 's', value_enum, default_value_t = ScopeArg::User)]
        scope: ScopeArg,
    },
    /// Remove a server from the file that defines it.
    Remove {
        name: String,
        #[arg(long, short = 's', value_enum)]
        scope: Option<ScopeArg>,
    },
    /// Show a server's definition and where it comes from.
    Get { name: String },
    /// Write `"enabled": true` into a server's entry.
    Enable {
        name: String,
        #[arg(long, short = 's', value_enum)]
        scope: Option<ScopeArg>,
    },
    /// Write `"enabled": false` into a server's entry (it stays configured, never starts).
    Disable {
        name: String,
        #[arg(long, short = 's', value_enum)]
        scope: Option<ScopeArg>,
    },
    /// Copy the servers of Claude Code, Codex CLI or gemini-cli into toolgate's file.
    Import {
        #[arg(value_enum)]
        from: ImportArg,
        #[arg(long, short = 's', value_enum, default_value_t = ScopeArg::User)]
        scope: ScopeArg,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ScopeArg {
    User,
    Project,
}

impl ScopeArg {
    fn scope(self) -> toolgate::cli::manage::Scope {
        match self {
            ScopeArg::User => toolgate::cli::manage::Scope::User,
            ScopeArg::Project => toolgate::cli::manage::Scope::Project,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TransportArg {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ImportArg {
    Claude,
    Codex,
    Gemini,
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(format!("cannot start the async runtime: {e}")))
}

/// A subcommand that printed its own report, with its exit code.
fn reported((output, code): (String, i32)) -> Result<(), Failure> {
    print!("{output}");
    Failure::from_reported_code(code)
}

impl McpCommand {
    fn is_management(&self) -> bool {
        !matches!(
            self,
            McpCommand::List
                | McpCommand::Tools { .. }
                | McpCommand::Call { .. }
                | McpCommand::Login { .. }
                | McpCommand::Logout { .. }
        )
    }
}

/// The file-editing `mcp` subcommands: no servers are started.
fn manage(command: McpCommand, flags: &ConfigFlags) -> Result<String, Failure> {
    use toolgate::cli::manage;
    let places = toolgate::settings::LoadOptions {
        flag_files: flags.mcp_config.clone(),
        ..toolgate::settings::LoadOptions::new(&flags.workspace(), false)
    };
    let scope_of = |s: Option<ScopeArg>| s.map(ScopeArg::scope);
    match command {
        McpCommand::Add {
            name,
            scope,
            transport,
            env,
            headers,
            target,
        } => manage::add(
            &places,
            &manage::AddArgs {
                name,
                scope: scope.scope(),
                transport: transport.map(|t| match t {
                    TransportArg::Stdio => manage::Transport::Stdio,
                    TransportArg::Http => manage::Transport::Http,
                }),
                env,
                headers,
                target,
            },
        ),
        McpCommand::AddJson { name, json, scope } => {
            manage::add_json(&places, scope.scope(), &name, &json)
        }
        McpCommand::Remove { name, scope } => manage::remove(&places, &name, scope_of(scope)),
        McpCommand::Get { name } => manage::get(&places, &name),
        McpCommand::Enable { name, scope } => {
            manage::set_enabled(&places, &name, scope_of(scope), true)
        }
        McpCommand::Disable { name, scope } => {
            manage::set_enabled(&places, &name, scope_of(scope), false)
        }
        McpCommand::Import { from, scope } => {
            use toolgate::settings::import::{Homes, ImportSource};
            let homes = Homes::from_env(&flags.workspace())
                .ok_or_else(|| Failure::Usage("no home folder: set $HOME".into()))?;
            let source = match from {
                ImportArg::Claude => ImportSource::Claude,
                ImportArg::Codex => ImportSource::Codex,
                ImportArg::Gemini => ImportSource::Gemini,
            };
            manage::import(&places, source, &homes, scope.scope())
        }
        McpCommand::List
        | McpCommand::Tools { .. }
        | McpCommand::Call { .. }
        | McpCommand::Login { .. }
        | McpCommand::Logout { .. } => Ok(String::new()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    toolgate::error::exit(run(cli))
}

fn run(cli: Cli) -> Result<(), Failure> {
    let rt = runtime()?;
    let flags = cli.config.flags();
    match cli.command {
        Some(Command::Serve { server, mut args }) => {
            // `--workspace` is a global flag, so clap takes it before the server sees it;
            // deploy is the server that keeps state in the workspace.
            if let (Some(dir), "deploy") = (&flags.workspace, server.as_str()) {
                args.push("--workspace".into());
                args.push(dir.display().to_string());
            }
            rt.block_on(toolgate::servers::serve(&server, &args))
                .map_err(|e| Failure::Run(format!("serve {server}: {e:#}")))
        }
        Some(Command::Mcp { command }) if command.is_management() => {
            print!("{}", manage(command, &flags)?);
            Ok(())
        }
        Some(Command::Mcp { command }) => reported(rt.block_on(async {
            match command {
                McpCommand::List => commands::mcp_list(&flags).await,
                McpCommand::Tools { server } => commands::mcp_tools(&flags, &server).await,
                McpCommand::Call {
                    server,
                    tool,
                    json,
                    elicitation,
                } => commands::mcp_call(&flags, &server, &tool, &json, elicitation).await,
                McpCommand::Login { server, no_browser } => {
                    commands::mcp_login(&flags, &server, !no_browser).await
                }
                McpCommand::Logout { server } => commands::mcp_logout(&flags, &server).await,
                // Handled above, without the runtime.
                _ => (String::new(), 0),
            }
        })),
        Some(Command::Status) => {
            let (out, code) = commands::status(&flags);
            print!("{out}");
            Failure::from_reported_code(code)
        }
        Some(Command::Undo {
            list,
            dry_run,
            session,
            force,
        }) => {
            use toolgate::cli::undo::{UndoAction, UndoOptions};
            let action = match (list, dry_run) {
                (true, _) => UndoAction::List,
                (false, true) => UndoAction::DryRun,
                (false, false) => UndoAction::Restore,
            };
            let (output, code) = toolgate::cli::undo::run(
                toolgate::checkpoint::default_root().as_deref(),
                toolgate::journal::default_sessions_dir().as_deref(),
                &flags.workspace(),
                UndoOptions {
                    action,
                    session,
                    force,
                },
            )?;
            print!("{output}");
            Failure::from_reported_code(code)
        }
        Some(Command::Hooks { command }) => reported(toolgate::cli::hooks::run(
            &command,
            &flags.workspace(),
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .as_deref(),
            toolgate::paths::user_config_dir().as_deref(),
        )),
        Some(Command::Audit { command }) => reported(toolgate::cli::audit::run(
            &command,
            toolgate::journal::default_sessions_dir().as_deref(),
            &flags.workspace(),
        )?),
        None => {
            let mut start = StartOptions::new(flags.workspace());
            start.allow = cli.allow;
            start.deny = cli.deny;
            start.provider = cli.provider;
            start.model = cli.model;
            start.resume = cli
                .resume
                .map(ResumeFrom::Id)
                .or(cli.continue_session.then_some(ResumeFrom::Latest));
            start.mcp_config = flags.mcp_config.clone();
            start.trust_project = flags.trust_project;
            start.ask_timeout = cli.ask_timeout.map(std::time::Duration::from_secs);
            start.permission_mode = cli.permission_mode;
            let result = match cli.prompt {
                Some(prompt) => {
                    let options = toolgate::headless::HeadlessOptions {
                        prompt,
                        output_format: match cli.output_format {
                            OutputFormat::Text => toolgate::headless::OutputFormat::Text,
                            OutputFormat::Jsonl => toolgate::headless::OutputFormat::Jsonl,
                        },
                        start,
                    };
                    rt.block_on(toolgate::headless::run(options))
                }
                None => rt.block_on(toolgate::cli::console::run(
                    toolgate::cli::console::ConsoleOptions { agent: start },
                )),
            };
            // Servers are stopped by the agent; do not wait for stray blocking tasks.
            rt.shutdown_timeout(std::time::Duration::from_secs(2));
            result
        }
    }
}
