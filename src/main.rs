//! Command line entry: parses arguments and hands off to the library.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use toolgate::agent::session::ResumeFrom;
use toolgate::commands::{self, ConfigFlags};

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
    },
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("toolgate: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        })
}

fn finish((output, code): (String, i32)) -> ExitCode {
    print!("{output}");
    ExitCode::from(code.clamp(0, 255) as u8)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let flags = cli.config.flags();
    match cli.command {
        Some(Command::Serve { server, mut args }) => {
            // `--workspace` is a global flag, so clap takes it before the server sees it;
            // deploy is the server that keeps state in the workspace.
            if let (Some(dir), "deploy") = (&flags.workspace, server.as_str()) {
                args.push("--workspace".into());
                args.push(dir.display().to_string());
            }
            match rt.block_on(toolgate::servers::serve(&server, &args)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("toolgate serve {server}: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::Mcp { command }) => finish(rt.block_on(async {
            match command {
                McpCommand::List => commands::mcp_list(&flags).await,
                McpCommand::Tools { server } => commands::mcp_tools(&flags, &server).await,
                McpCommand::Call { server, tool, json } => {
                    commands::mcp_call(&flags, &server, &tool, &json).await
                }
            }
        })),
        Some(Command::Status) => {
            print!("{}", commands::status(&flags));
            ExitCode::SUCCESS
        }
        None => {
            let mut options = toolgate::headless::HeadlessOptions::new(
                cli.prompt.clone().unwrap_or_default(),
                flags.workspace(),
            );
            options.output_format = match cli.output_format {
                OutputFormat::Text => toolgate::headless::OutputFormat::Text,
                OutputFormat::Jsonl => toolgate::headless::OutputFormat::Jsonl,
            };
            options.allow = cli.allow;
            options.deny = cli.deny;
            options.provider = cli.provider;
            options.model = cli.model;
            options.resume = cli
                .resume
                .map(ResumeFrom::Id)
                .or(cli.continue_session.then_some(ResumeFrom::Latest));
            options.mcp_config = flags.mcp_config.clone();
            options.trust_project = flags.trust_project;
            let code = if cli.prompt.is_some() {
                rt.block_on(toolgate::headless::run(options))
            } else {
                rt.block_on(toolgate::console::run(toolgate::console::ConsoleOptions {
                    agent: options,
                }))
            };
            // Servers are stopped by the agent; do not wait for stray blocking tasks.
            rt.shutdown_timeout(std::time::Duration::from_secs(2));
            ExitCode::from(code.clamp(0, 255) as u8)
        }
    }
}
