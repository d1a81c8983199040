//! Project servers: a server defined by the (trusted) project's `.mcp.json` runs a program
//! of the project's choosing, so its first connect in a session asks, showing its command
//! line; approval is keyed by the command line, so a changed definition asks again.

use std::collections::BTreeSet;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Gate;
use super::ask::ask;
use crate::ids::ServerName;
use crate::protocol::AgentEvent;
use crate::protocol::questions::{Origin, ProjectServer, ProjectServerAnswer, Reply, Request};
use crate::settings::ServerConfig;

/// Project servers approved this session, by name and command line.
#[derive(Debug, Default)]
pub(super) struct Approved(BTreeSet<(String, String)>);

impl Approved {
    /// The question connecting `server` needs, if any: servers from the project's
    /// `.mcp.json` ask once per session (per command line).
    pub(super) fn question(&self, server: &ServerConfig) -> Option<ProjectServer> {
        if !server.source.is_project() {
            return None;
        }
        let command_line = server.command_line();
        if self
            .0
            .contains(&(server.name.clone(), command_line.clone()))
        {
            return None;
        }
        Some(ProjectServer {
            server: server.name.clone().into(),
            why: format!(
                "server '{}' is defined by this project and would run: {command_line}",
                server.name
            ),
            command_line,
        })
    }

    pub(super) fn approve(&mut self, server: &ServerConfig) {
        self.0.insert((server.name.clone(), server.command_line()));
    }
}

impl Gate {
    /// A server defined by the (trusted) project starts a program of the project's
    /// choosing: the first connect of it in a session asks, showing its command line.
    /// Headless runs only reach project servers with `--trust-project`, which is the
    /// user's consent given up front. Returns `Err(why)` when it was not approved.
    pub async fn approve_project_server(
        &mut self,
        config: &ServerConfig,
        events: &mpsc::Sender<AgentEvent>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(), ProjectServerRefused> {
        let Some(question) = self.approved_projects.question(config) else {
            return Ok(());
        };
        if self.headless {
            self.approved_projects.approve(config);
            return Ok(());
        }
        let server = question.server.clone();
        let command_line = question.command_line.clone();
        let (request, answer) = Request::new(
            Origin::Project {
                server: server.clone(),
            },
            question,
            Instant::now(),
            None,
        );
        match ask(events, request, answer, cancel).await {
            Some(Reply::Person(ProjectServerAnswer::Start)) => {
                self.approved_projects.approve(config);
                Ok(())
            }
            None => Err(ProjectServerRefused::Cancelled { server }),
            Some(_) => Err(ProjectServerRefused::Denied {
                server,
                command_line,
            }),
        }
    }

    /// A connected project server whose definition changed on disk: reconnecting it starts
    /// the new definition, so the person is asked first, whatever was approved before
    /// (the environment or headers may have changed under the same command line). True
    /// when approved; the new command line then counts as approved for the session.
    pub async fn approve_changed_project_server(
        &mut self,
        config: &ServerConfig,
        events: &mpsc::Sender<AgentEvent>,
    ) -> bool {
        if self.headless {
            self.approved_projects.approve(config);
            return true;
        }
        let command_line = config.command_line();
        let (request, answer) = Request::new(
            Origin::Project {
                server: config.name.clone().into(),
            },
            ProjectServer {
                server: config.name.clone().into(),
                why: format!(
                    "the project changed the definition of '{}' in its .mcp.json; reconnecting runs: {command_line}",
                    config.name
                ),
                command_line,
            },
            Instant::now(),
            None,
        );
        let approved = matches!(
            ask(events, request, answer, None).await,
            Some(Reply::Person(ProjectServerAnswer::Start))
        );
        if approved {
            self.approved_projects.approve(config);
        }
        approved
    }
}

/// Why a project server was not started; the text is the tool result the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ProjectServerRefused {
    #[error("Cancelled: project server '{server}' was not started")]
    Cancelled { server: ServerName },
    #[error(
        "Permission denied: the user did not approve starting the project's MCP server '{server}' ({command_line})"
    )]
    Denied {
        server: ServerName,
        command_line: String,
    },
}
