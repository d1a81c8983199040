//! The tasks beside the agent loop: the command reader (front end → work queue, with
//! cancel, completions and roots answered at once), the hub-event forwarder, and the
//! config watcher's hook. None of them touches the agent's state: they only queue work.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::reload::{ConfigReload, ReloadCause};
use super::sampling::SamplingHost;
use crate::journal;
use crate::mcp::{HubEvent, McpHub, ServerStatus, SignInQuestion};
use crate::protocol::Event;
use crate::protocol::questions::{Origin, Reply as InboxReply, Request, SignIn, SignInAnswer};
use crate::protocol::{AgentEvent, ServerLogLine, ServerName, UiCommand};
use crate::protocol::{Reply, View};

/// Work for the agent task, in the order the front end sent it.
pub(super) enum Work {
    /// The token is created when the command arrives, so a Cancel sent right after a
    /// Submit always reaches the turn it was meant for.
    Submit(String, CancellationToken),
    Connect(String),
    Disconnect(String),
    Revoke(String),
    Clear,
    /// `/compact [focus]`; the token lets a cancel stop the summary request.
    Compact(Option<String>, CancellationToken),
    /// `/context`.
    ShowContext,
    /// `/hooks`.
    ShowHooks,
    /// `/undo`; the token lets a cancel withdraw its question.
    Undo(CancellationToken),
    /// `/mcp enable|disable NAME [--save]`.
    SetEnabled {
        server: ServerName,
        enabled: bool,
        save: bool,
    },
    /// `/mcp__server__prompt`: server, prompt, arguments; a turn like Submit.
    Prompt(
        String,
        String,
        std::collections::HashMap<String, String>,
        CancellationToken,
    ),
    /// `/model NAME`.
    SetModel(String),
    /// A server's tool list or state changed on its own.
    RefreshPool,
    /// Load the server configuration again (`/mcp reload`, or the watcher saw a change).
    Reload(ReloadCause),
    /// `/roots add` added this root (already in force): the session log keeps it, so a
    /// resumed session has it again.
    RootAdded(PathBuf),
    /// The permission mode changed beside the turn (already in force, logged, announced):
    /// the badges follow.
    ModeChanged,
    Shutdown,
}

/// Shared between the command reader and the agent task.
#[derive(Default)]
pub(super) struct Control {
    pub current_turn: Mutex<CancellationToken>,
    pub shutting_down: AtomicBool,
}

impl Control {
    pub fn cancel_current(&self) {
        self.current_turn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .cancel();
    }

    pub fn new_turn(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self
            .current_turn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = token.clone();
        token
    }
}

pub(super) async fn read_commands(
    mut commands: mpsc::Receiver<UiCommand>,
    work: mpsc::UnboundedSender<Work>,
    control: Arc<Control>,
    // Completions and roots are answered here, beside a running turn, not queued behind it.
    (hub, events): (McpHub, mpsc::Sender<AgentEvent>),
    sampling: Arc<SamplingHost>,
    modes: crate::gate::ModeSwitch,
) {
    while let Some(command) = commands.recv().await {
        let item = match command {
            UiCommand::Cancel => {
                control.cancel_current();
                continue;
            }
            UiCommand::Submit(text) => Work::Submit(text, control.new_turn()),
            UiCommand::Connect(name) => Work::Connect(name),
            UiCommand::Disconnect(name) => Work::Disconnect(name),
            // Sampling and network grants may be in use during a turn: revoked at once,
            // not after it (the grants are one store, shared with the tool calls').
            UiCommand::RevokeGrant(name) if crate::gate::is_revoked_at_once(&name) => {
                let text = sampling.gate.grants().revoke(&name);
                let _ = events
                    .send(AgentEvent::Fact(Event::Notice { message: text }))
                    .await;
                if let Some(event) = sampling.gate.grants().change_event() {
                    let _ = events.send(event).await;
                }
                continue;
            }
            UiCommand::RevokeGrant(name) => Work::Revoke(name),
            UiCommand::Clear => Work::Clear,
            UiCommand::Compact(focus) => Work::Compact(focus, control.new_turn()),
            UiCommand::ShowContext => Work::ShowContext,
            UiCommand::ShowHooks => Work::ShowHooks,
            UiCommand::Undo => Work::Undo(control.new_turn()),
            // Roots change beside a running turn: a server may be waiting for them.
            UiCommand::AddRoot(dir) => {
                let (hub, events, work) = (hub.clone(), events.clone(), work.clone());
                tokio::spawn(async move {
                    if let Some(root) = super::roots::add(hub, dir, events).await {
                        let _ = work.send(Work::RootAdded(root));
                    }
                });
                continue;
            }
            UiCommand::ListRoots => {
                let _ = events.send(super::roots::list(&hub)).await;
                continue;
            }
            UiCommand::SetServerEnabled {
                server,
                enabled,
                save,
            } => Work::SetEnabled {
                server: server.into_string().into(),
                enabled,
                save,
            },
            UiCommand::ReloadConfig => Work::Reload(ReloadCause::Asked),
            UiCommand::SetModel(name) => Work::SetModel(name),
            // Beside a turn: the provider's list for `/model` completion (one request).
            UiCommand::ListModels => {
                let (listing, events) = (sampling.model.list_models(), events.clone());
                tokio::spawn(async move {
                    let names = listing.await.unwrap_or_else(|e| {
                        tracing::info!("{e}");
                        Vec::new()
                    });
                    let _ = events
                        .send(AgentEvent::Reply(Reply::ModelNames(names)))
                        .await;
                });
                continue;
            }
            UiCommand::RunPrompt {
                server,
                prompt,
                arguments,
            } => Work::Prompt(server.into_string(), prompt, arguments, control.new_turn()),
            UiCommand::Complete {
                id,
                server,
                target,
                argument,
                value,
                context,
            } => {
                let (hub, events) = (hub.clone(), events.clone());
                tokio::spawn(async move {
                    let values = hub
                        .complete(&server, &target, &argument, &value, &context)
                        .await
                        .unwrap_or_else(|e| {
                            tracing::info!("completion on {server} failed: {e}");
                            Vec::new()
                        });
                    let _ = events
                        .send(AgentEvent::Reply(Reply::Completions { id, values }))
                        .await;
                });
                continue;
            }
            // In force at once: the running turn's next call is decided in the new mode.
            UiCommand::CyclePermissionMode => {
                if super::modes::cycle_beside_turn(&modes, &sampling).await {
                    let _ = work.send(Work::ModeChanged);
                }
                continue;
            }
            UiCommand::Shutdown => break,
        };
        if work.send(item).is_err() {
            return;
        }
    }
    // Shutdown, or the front end went away: stop what runs and let the agent clean up.
    control.shutting_down.store(true, Ordering::SeqCst);
    control.cancel_current();
    let _ = work.send(Work::Shutdown);
}

/// Starts the config watcher when the front end wants one; its batches become reloads.
/// A watcher that cannot start is logged: `/mcp reload` still works.
pub(super) fn watch_config(
    reload: Option<&ConfigReload>,
    work: mpsc::UnboundedSender<Work>,
) -> Option<crate::settings::watch::ConfigWatcher> {
    let reload = reload.filter(|r| r.watch)?;
    let files = reload.watched_files();
    let on_change = move |changed: Vec<PathBuf>| {
        let _ = work.send(Work::Reload(ReloadCause::Files(changed)));
    };
    match crate::settings::watch::watch(files, on_change) {
        Ok(watcher) => Some(watcher),
        Err(e) => {
            tracing::warn!("cannot watch the configuration files: {e}");
            None
        }
    }
}

pub(super) async fn forward_hub_events(
    mut hub_events: mpsc::UnboundedReceiver<HubEvent>,
    events: mpsc::Sender<AgentEvent>,
    work: mpsc::UnboundedSender<Work>,
    stopped: CancellationToken,
    sampling: Arc<SamplingHost>,
) {
    loop {
        let event = tokio::select! {
            () = stopped.cancelled() => return,
            event = hub_events.recv() => match event {
                Some(event) => event,
                None => return,
            },
        };
        match event {
            HubEvent::Status { server, status } => {
                let pool_may_change = matches!(
                    status,
                    ServerStatus::Failed { .. } | ServerStatus::Disconnected { .. }
                );
                if events
                    .send(AgentEvent::Fact(Event::ServerStatus { server, status }))
                    .await
                    .is_err()
                {
                    return;
                }
                if pool_may_change {
                    let _ = work.send(Work::RefreshPool);
                }
            }
            HubEvent::ToolsChanged { .. } => {
                let _ = work.send(Work::RefreshPool);
            }
            HubEvent::ToolsLeftOut { server, tools } => {
                for tool in tools {
                    let notice = format!(
                        "MCP server '{server}': tool '{}' is left out of the tool pool: {}. The server's other tools work.",
                        tool.name, tool.problem
                    );
                    if events
                        .send(AgentEvent::Fact(Event::Notice { message: notice }))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
            HubEvent::CatalogChanged { server, catalog } => {
                for problem in &catalog.problems {
                    let notice = format!(
                        "MCP server '{server}': {problem}; what it lists is left out of @ and / completion (its tools still work)"
                    );
                    if events
                        .send(AgentEvent::Fact(Event::Notice { message: notice }))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                if events
                    .send(AgentEvent::View(View::Catalog { server, catalog }))
                    .await
                    .is_err()
                {
                    return;
                }
                let _ = work.send(Work::RefreshPool);
            }
            HubEvent::Log {
                server,
                level,
                message,
            } => {
                tracing::info!(target: "toolgate::mcp", server = %server, %level, "{message}");
                journal::append_shared(
                    &sampling.log,
                    Event::ServerLog(ServerLogLine {
                        server: ServerName::from(&server),
                        level,
                        message: message.clone(),
                    }),
                );
                let event = AgentEvent::Fact(Event::ServerLog(ServerLogLine {
                    server,
                    level,
                    message,
                }));
                if events.send(event).await.is_err() {
                    return;
                }
            }
            // Each on its own task: the person may take a while, and other servers (and
            // this server's other requests, up to its bound) must not wait behind it.
            HubEvent::Sampling(question) => {
                tokio::spawn(sampling.clone().handle(question));
            }
            HubEvent::SamplingRefused {
                server,
                max_tokens,
                reason,
            } => {
                sampling
                    .refused_early(server.into_string(), max_tokens, reason)
                    .await;
            }
            HubEvent::Instructions { server, text } => {
                let event = AgentEvent::Fact(Event::ServerInstructions { server, text });
                if events.send(event).await.is_err() {
                    return;
                }
            }
            HubEvent::SignIn(question) => {
                if !ask_sign_in(question, &events).await {
                    return;
                }
            }
            HubEvent::Elicitation(question) => {
                if !super::elicitation::ask_elicitation(question, &events).await {
                    return;
                }
            }
            HubEvent::SignedIn { server } => {
                let _ = work.send(Work::Connect(server.into_string()));
            }
            HubEvent::SignInStarted { server, url } => {
                let notice = format!(
                    "Sign in to '{server}' in your browser (opening it now); if it does not open, visit:\n{url}"
                );
                if events
                    .send(AgentEvent::Fact(Event::Notice { message: notice }))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            HubEvent::Auth { server, status } => {
                if events
                    .send(AgentEvent::Fact(Event::ServerAuth { server, status }))
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

/// How long a sign-in question stays in the inbox before it counts as "not now".
const SIGN_IN_QUESTION_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Puts the hub's sign-in question into the inbox and relays the answer, without holding up
/// the other hub events (and so the other servers). False when the front end is gone.
async fn ask_sign_in(question: SignInQuestion, events: &mpsc::Sender<AgentEvent>) -> bool {
    let now = std::time::Instant::now();
    let (request, answer) = Request::new(
        Origin::Server {
            server: question.server.clone(),
        },
        SignIn {
            server: question.server.clone(),
            url: question.url.clone(),
            authorization_server: question.authorization_server.clone(),
            scopes: question.scopes.clone(),
            step_up: question.step_up,
        },
        now,
        Some(now + SIGN_IN_QUESTION_LIMIT),
    );
    if events
        .send(AgentEvent::Request(request.into()))
        .await
        .is_err()
    {
        question.answer(false);
        return false;
    }
    tokio::spawn(async move {
        tokio::select! {
            reply = answer => question.answer(matches!(reply, Ok(InboxReply::Person(SignInAnswer::SignIn)))),
            // The hub stopped waiting: dropping `answer` withdraws the request.
            () = question.withdrawn() => {}
        }
    });
    true
}
