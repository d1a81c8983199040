//! `toolgate` with no arguments: the full-screen console on the agent runtime.
//!
//! Before the agent starts, a workspace with its own `.mcp.json` or `.toolgate/config.toml`
//! that the user has not trusted yet gets one question, in the console's own permission
//! dialog. The answer is remembered in the state dir; until trusted, project files are
//! reported and ignored.

use crate::agent::AgentHandle;
use crate::cli::bootstrap::{FrontEnd, StartOptions};
use crate::error::{Failure, FailureKind};
use crate::gate::TrustStore;
use crate::protocol::Event;
use crate::protocol::questions::{Origin, Reply, Request, TrustAnswer, WorkspaceTrust};
use crate::protocol::{AgentEvent, UiCommand};
use crate::tui::ConsoleInfo;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokio::sync::mpsc;

/// How the console was asked to start (the shared flags of the command line).
#[derive(Debug, Clone)]
pub struct ConsoleOptions {
    /// Provider, model, workspace, resume, flags: the same as headless, minus the prompt.
    pub agent: StartOptions,
}

const CHANNEL: usize = 256;

/// Project files that only count once the folder is trusted.
fn project_files(workspace: &Path) -> Vec<PathBuf> {
    [
        workspace.join(".mcp.json"),
        crate::paths::workspace_dir(workspace).join("config.toml"),
    ]
    .into_iter()
    .filter(|p| p.is_file())
    .collect()
}

/// Runs the console until the user quits.
pub async fn run(options: ConsoleOptions) -> Result<(), Failure> {
    let _log_guard = init_file_logging();
    let workspace = options.agent.workspace.clone();

    // The front end gets its handle now; the agent behind it starts after the trust
    // question (if any) is answered through the same dialog.
    let (ui_command_tx, mut ui_command_rx) = mpsc::channel::<UiCommand>(CHANNEL);
    let (ui_event_tx, ui_event_rx) = mpsc::channel::<AgentEvent>(CHANNEL);
    let handle = AgentHandle {
        commands: ui_command_tx,
        events: ui_event_rx,
    };

    let mut agent_options = options.agent.clone();
    let untrusted = untrusted_project_files(&workspace, agent_options.trust_project);
    // Read once: the agent starts with these settings unless the answer to the trust
    // question lets the project's files in (then they are read again, with them).
    let preview_trust = untrusted.is_empty();
    let settings = crate::settings::load(
        &StartOptions {
            trust_project: preview_trust,
            ..agent_options.clone()
        }
        .settings_options(),
    );
    // A preview until the agent reports the servers with the session's own settings.
    let sandbox = crate::sandbox::Sandbox::default();
    let info = ConsoleInfo {
        workspace: workspace.clone(),
        servers: settings
            .servers
            .servers
            .iter()
            .map(|config| {
                let profile = sandbox.server_profile(config, &workspace);
                crate::views::server_info(config, Some(&profile))
            })
            .collect(),
        no_color: false,
        managed: {
            let (policy, _) = crate::policy::from_settings_checked(&settings.permissions);
            crate::policy::managed_summary(&settings.managed.value, &policy)
        },
        notify: settings.tui.value.notify,
    };

    let bridge = tokio::spawn(async move {
        if !untrusted.is_empty() {
            match ask_trust(&ui_event_tx, &mut ui_command_rx, &workspace, &untrusted).await {
                Some(true) => agent_options.trust_project = true,
                // The agent reports the ignored project files itself (startup notices).
                Some(false) => {}
                None => return,
            }
        } else {
            agent_options.trust_project = true;
        }
        let prepared = if agent_options.trust_project == preview_trust {
            crate::cli::bootstrap::prepare_with(&agent_options, FrontEnd::Console, settings)
        } else {
            crate::cli::bootstrap::prepare(&agent_options, FrontEnd::Console)
        };
        let config = match prepared {
            Ok(config) => config,
            Err(failure) => {
                let _ = ui_event_tx
                    .send(AgentEvent::Fact(Event::Error {
                        message: failure.to_string(),
                    }))
                    .await;
                // Keep the console open so the message can be read; quit ends it.
                while let Some(command) = ui_command_rx.recv().await {
                    if matches!(command, UiCommand::Shutdown) {
                        break;
                    }
                }
                return;
            }
        };
        let agent = crate::agent::spawn(config);
        forward(agent, ui_command_rx, ui_event_tx).await;
    });

    let result = crate::tui::run(handle, info).await;
    // The agent shuts its servers down on Shutdown (sent by the console on quit).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), bridge).await;
    match result {
        Ok(crate::tui::Ending::Quit) => Ok(()),
        // The terminal is restored and the agent shut down; the exit status says why.
        Ok(crate::tui::Ending::Signal(signal)) => {
            Err(Failure::Reported(FailureKind::Signal(signal)))
        }
        // A terminal gone without a signal ends as its hang-up signal would have.
        Ok(crate::tui::Ending::TerminalGone) => {
            Err(Failure::Reported(FailureKind::Signal(libc::SIGHUP)))
        }
        Err(e) => Err(Failure::from(e)),
    }
}

fn untrusted_project_files(workspace: &Path, trusted_by_flag: bool) -> Vec<PathBuf> {
    if trusted_by_flag {
        return Vec::new();
    }
    let files = project_files(workspace);
    if files.is_empty() {
        return files;
    }
    match TrustStore::open_default() {
        Ok(store) if store.is_trusted(workspace) => Vec::new(),
        Ok(_) => files,
        Err(e) => {
            tracing::warn!("trust store unreadable, treating the folder as untrusted: {e}");
            files
        }
    }
}

/// Asks in the console's inbox. `Some(true)` trusted (and remembered when answered
/// "always"), `Some(false)` not trusted, `None` the user quit.
async fn ask_trust(
    events: &mpsc::Sender<AgentEvent>,
    commands: &mut mpsc::Receiver<UiCommand>,
    workspace: &Path,
    files: &[PathBuf],
) -> Option<bool> {
    let (request, answer) = Request::new(
        Origin::Console {
            folder: workspace.to_path_buf(),
        },
        WorkspaceTrust {
            folder: workspace.to_path_buf(),
            files: files.to_vec(),
        },
        Instant::now(),
        None,
    );
    let asking = crate::gate::ask(events, request, answer, None);
    tokio::pin!(asking);
    let reply = loop {
        tokio::select! {
            reply = &mut asking => break reply?,
            command = commands.recv() => match command {
                None | Some(UiCommand::Shutdown) => return None,
                // Nothing runs before the question is answered.
                Some(_) => continue,
            },
        }
    };
    Some(match reply {
        Reply::Person(TrustAnswer::Always) => {
            if let Err(e) = TrustStore::open_default().and_then(|mut s| s.trust(workspace)) {
                let _ = events
                    .send(AgentEvent::Fact(Event::Error {
                        message: format!("could not remember trust: {e}"),
                    }))
                    .await;
            }
            true
        }
        Reply::Person(TrustAnswer::Once) => true,
        Reply::Person(TrustAnswer::No) | Reply::Expired(_) | Reply::Dismissed(_) => false,
    })
}

/// Pipes the console's commands to the agent and the agent's events to the console.
async fn forward(
    agent: AgentHandle,
    mut ui_commands: mpsc::Receiver<UiCommand>,
    ui_events: mpsc::Sender<AgentEvent>,
) {
    let AgentHandle {
        commands: agent_commands,
        events: mut agent_events,
    } = agent;
    loop {
        tokio::select! {
            command = ui_commands.recv() => {
                let Some(command) = command else { break };
                let shutdown = matches!(command, UiCommand::Shutdown);
                if agent_commands.send(command).await.is_err() || shutdown {
                    break;
                }
            }
            event = agent_events.recv() => {
                let Some(event) = event else { break };
                if ui_events.send(event).await.is_err() {
                    break;
                }
            }
        }
    }
    // The agent takes a closed command channel as its front end gone, and shuts down: a
    // loop left because the console stopped listening (its receiver dropped while an event
    // was on its way) has not passed the console's Shutdown on, and waiting for the agent's
    // events to end while still holding its command sender would wait for nothing.
    drop(agent_commands);
    // Let the agent finish its shutdown (servers closed) before the process exits.
    while agent_events.recv().await.is_some() {}
}

/// Log lines waiting for the writer thread (32 bytes of queue each).
const LOG_QUEUE_LINES: usize = 8_192;

/// Logs go to a file while the console owns the terminal.
fn init_file_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = crate::paths::state_dir()?.join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::never(dir, "toolgate.log");
    // The default queue holds 128,000 lines and is allocated and touched up front: 4 MiB
    // resident from the first frame, a fifth of the console's memory. Lines are written as
    // they come (a local file keeps up), so a few thousand in flight is plenty; beyond it
    // lines are dropped, as with the default queue, rather than stalling the console.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .ok()?;
    Some(guard)
}
