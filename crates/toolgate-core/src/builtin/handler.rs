//! The one trait every built-in tool implements, in its own file under `tools/`: its name,
//! what the model is told about it, how the gate judges a call of it, and how it runs.
//! Nothing outside this module matches on which built-in a tool is: callers ask the
//! tool's handler (through [`super::BuiltinId`]) or read the data it gives.

use std::path::Path;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::BuiltinOutput;
use super::proposed::{NoPreview, ProposedWrite};
use crate::beneath::FileTarget;
use crate::sandbox::{Sandbox, WriteLog};

/// A built-in tool. Implementations are unit structs listed once in the registry
/// (`registry.rs`); adding a tool is one file in `tools/` and one line there.
#[async_trait]
pub trait BuiltinHandler: Send + Sync + 'static {
    /// The model-facing name (also the name rules and the session log use).
    fn name(&self) -> &'static str;

    /// What the model is told about the tool for the current connections.
    fn definition(&self, ctx: &DefinitionContext<'_>) -> Definition;

    /// When the tool is in the pool.
    fn presence(&self) -> Presence {
        Presence::Always
    }

    /// How the gate judges a call: which guard, which rule forms, which default.
    fn judgement(&self) -> Judgement;

    /// Whether the tool changes the pool itself (a "connector" to users and in the JSONL).
    fn changes_pool(&self) -> bool {
        false
    }

    /// Who runs a call once the gate let it through.
    fn runs_in(&self) -> RunsIn {
        RunsIn::Here
    }

    /// Runs a call here (for [`RunsIn::Here`] tools). The agent runs the others, so here
    /// they are an error, as a call of an unknown tool would be.
    async fn run(&self, call: LocalCall<'_>) -> BuiltinOutput {
        let _ = call;
        BuiltinOutput::error(format!("Unknown tool: {}", self.name()))
    }

    /// The change a call would make to a file, for the question's diff; an error saying
    /// why there is none for tools that write no file.
    fn proposed_write(&self, input: &Value, workspace: &Path) -> Result<ProposedWrite, NoPreview> {
        let _ = (input, workspace);
        Err(NoPreview {
            path: None,
            reason: format!("{} changes no file", self.name()),
        })
    }
}

/// A tool's model-facing description and input schema (its name is the handler's).
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub description: String,
    pub input_schema: Value,
}

/// What a definition may depend on: the servers of the session and the pool's limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefinitionContext<'a> {
    /// Configured MCP servers (connect_mcp's enum).
    pub configured: &'a [String],
    /// Connected servers (disconnect_mcp's enum).
    pub connected: &'a [String],
    /// Connected servers that declare resources.
    pub with_resources: &'a [String],
    /// Most queries one `search_tools` call takes (the pool's search splits no further).
    pub max_search_queries: usize,
}

/// When a built-in is in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// From the start of every session.
    Always,
    /// While at least one server is connected.
    WhileConnected,
    /// While a connected server declares resources.
    WithResources,
    /// Only in plan mode (the agent adds it).
    InPlanMode,
    /// Only while MCP tools are deferred (the pool's deferral adds it).
    WhileDeferring,
}

/// How the gate judges a call of a built-in: the policy's typed view of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// A shell command line in `command`: the bash guard, `Bash(…)` rules, the sandbox
    /// escalation, and the host-file watch around the run.
    Shell,
    /// A file tool: the workspace guard judges the location its input names.
    File(FileAccess),
    /// Names a server in `name`: `TOOL(NAME)` rules; allowed by default.
    Connector,
    /// A connected server's resources, named in `server`: `TOOL(SERVER)` rules. `reads`:
    /// reading one is like calling the server's tool (asked by default, counted as
    /// server content); listing only shows what the server published.
    Resource { reads: bool },
    /// Changes nothing by itself: allowed by default under `default_rule`; a rule may
    /// still deny it, and it takes no specifier.
    Harmless { default_rule: &'static str },
}

/// What a file tool does with the location its input names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileAccess {
    pub family: FileFamily,
    pub locate: Locate,
}

impl FileAccess {
    /// Whether the tool changes the file its path names.
    pub const fn writes(self) -> bool {
        !matches!(self.family, FileFamily::Read)
    }
}

/// The rule family (`Read(…)`, `Edit(…)`, `Write(…)`) that names a file tool's paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFamily {
    Read,
    Edit,
    Write,
}

impl FileFamily {
    pub const fn rule_name(self) -> &'static str {
        match self {
            FileFamily::Read => "Read",
            FileFamily::Edit => "Edit",
            FileFamily::Write => "Write",
        }
    }
}

/// How a file tool's input names its location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locate {
    /// The file in `path`.
    Path,
    /// The literal base of the glob in `pattern` (joined to an optional `path`).
    GlobPattern,
}

impl Locate {
    /// The input field that names the location.
    pub const fn field(self) -> &'static str {
        match self {
            Locate::Path => "path",
            Locate::GlobPattern => "pattern",
        }
    }
}

/// Who runs a built-in's call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsIn {
    /// [`BuiltinHandler::run`], with a [`LocalCall`].
    Here,
    /// The agent, because the call changes or reads the agent's own state.
    Agent(AgentJob),
}

/// The services the agent provides to the built-ins it runs. A new agent-run tool needs
/// the agent to offer what it does, so it adds a job here; a tool that runs here does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentJob {
    ConnectServer,
    DisconnectServer,
    SearchTools,
    ReviewPlan,
    ListResources,
    ReadResource,
}

/// One call of a built-in that runs here.
pub struct LocalCall<'a> {
    pub input: &'a Value,
    /// Relative paths resolve against it; absolute paths are used as given (the policy
    /// approved them).
    pub workspace: &'a Path,
    /// The sandbox bash runs under (or is refused by when it cannot be enforced).
    pub sandbox: &'a Sandbox,
    pub cancel: CancellationToken,
    /// Where a confined bash records the paths it asks to change.
    pub trace: Option<&'a WriteLog>,
    /// The location the gate resolved and decided for a file tool's call, which the tool
    /// opens (beneath the workspace's handle, or as approved outside it).
    pub target: Option<&'a FileTarget>,
}
