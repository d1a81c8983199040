//! Hooks (decision 0086): commands the person (or the managed policy, or a consenting
//! project) attaches to the session's events, in Claude Code's protocol so that existing
//! hook scripts work. This module holds the hooks API: the configuration types (read from
//! the files by `settings`, which owns the file format; re-exported here), each event's
//! payload (`events.rs`), the runner and the reading of what hooks say (`output.rs`).
//! Where they run (decision 0092): the events that decide a tool call (PreToolUse,
//! PermissionRequest, Notification of a question, PostToolUse) in the gate's pipeline;
//! the session's events (SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd)
//! in the agent's turn loop.

mod events;
mod output;
mod runner;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub use output::PreToolSay;
pub use runner::Ran;
// The configuration types: `settings` reads them from the files (it is below the hooks,
// which run under the sandbox that settings configure; owning them here would make an
// import circle, decision 0092).
pub use crate::settings::{DEFAULT_HOOK_TIMEOUT, HookEvent, HookSettings, HookSpec};

use crate::sandbox::Sandbox;
use crate::settings::FileLayer;
use crate::settings::compile_matcher;

/// One hook in force, with its compiled matcher and how it last ended.
struct Entry {
    spec: HookSpec,
    /// A project's hook the person has not agreed to run (yet).
    held_back: bool,
    matcher: Option<regex::Regex>,
    last: Option<String>,
}

impl Entry {
    fn matches(&self, event: HookEvent, tool: Option<&str>) -> bool {
        !self.held_back
            && self.spec.event == event
            && match (&self.matcher, tool) {
                (Some(matcher), Some(tool)) => matcher.is_match(tool),
                // A matcher only narrows events about a tool.
                (Some(_), None) | (None, _) => true,
            }
    }

    fn label(&self) -> String {
        hook_label(&self.spec)
    }
}

/// How a hook is named to the person and in the audit record: its event, command and file.
pub fn hook_label(spec: &HookSpec) -> String {
    format!(
        "{} hook `{}` ({})",
        spec.event,
        spec.command,
        spec.file.display()
    )
}

/// One line of `/hooks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookLine {
    pub event: HookEvent,
    pub matcher: Option<String>,
    pub command: String,
    pub source: String,
    pub last: Option<String>,
}

/// A PreToolUse decision: the strongest say of the hooks that matched, and who said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreToolDecision {
    pub say: PreToolSay,
    /// The hook that said it (its label).
    pub hook: String,
    /// `updatedInput` of an allowing hook: the call runs with it, checked by the policy again.
    pub updated_input: Option<Value>,
}

/// What a set of hooks said about an event beyond a tool decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventResult {
    /// The first blocking reason (exit 2, or `decision: "block"`).
    pub block: Option<Block>,
    /// Context for the model (UserPromptSubmit, SessionStart).
    pub context: Vec<String>,
    /// Errors to show the person (non-blocking).
    pub notices: Vec<String>,
    /// PermissionRequest: a hook's answer to the question.
    pub answer: Option<PermissionAnswer>,
}

/// A hook that blocks what its event is about (a prompt, a stop, a call's result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub reason: String,
    /// The hook that blocks (its label).
    pub hook: String,
}

/// A PermissionRequest hook's answer to a question about a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionAnswer {
    pub allow: bool,
    pub reason: String,
    /// The hook that answered (its label).
    pub hook: String,
}

/// The hooks in force for one session, and where they run.
pub struct Hooks {
    entries: Vec<Entry>,
    workspace: PathBuf,
    sandbox: Sandbox,
    session_id: String,
    transcript_path: Option<PathBuf>,
    /// Context from SessionStart hooks, held for the first prompt.
    held: Vec<String>,
}

impl Hooks {
    /// The hooks of `settings`: all of the managed and the user's files run; a project's
    /// are held back until [`Hooks::consent_to_project`].
    pub fn new(
        settings: &HookSettings,
        workspace: &Path,
        sandbox: Sandbox,
        project_consent: bool,
    ) -> Hooks {
        let entries = settings
            .hooks
            .iter()
            .map(|spec| Entry {
                held_back: spec.layer == FileLayer::Project && !project_consent,
                // Checked when read: a matcher that does not compile never gets here.
                matcher: spec
                    .matcher
                    .as_deref()
                    .and_then(|m| compile_matcher(m).ok().flatten()),
                spec: spec.clone(),
                last: None,
            })
            .collect();
        Hooks {
            entries,
            workspace: workspace.to_path_buf(),
            sandbox,
            session_id: String::new(),
            transcript_path: None,
            held: Vec::new(),
        }
    }

    /// The project's hooks waiting for consent, as `EVENT: command`, and their file.
    pub fn held_back(&self) -> (Vec<String>, Option<PathBuf>) {
        let held: Vec<&Entry> = self.entries.iter().filter(|e| e.held_back).collect();
        let file = held.first().map(|e| e.spec.file.clone());
        let shown = held
            .iter()
            .map(|e| format!("{}: {}", e.spec.event, e.spec.command))
            .collect();
        (shown, file)
    }

    /// The person agreed: the project's hooks run from now on.
    pub fn consent_to_project(&mut self) {
        for entry in &mut self.entries {
            entry.held_back = false;
        }
    }

    /// No hooks at all (tests, and sessions whose files define none).
    pub fn none(workspace: &Path) -> Hooks {
        Hooks::new(
            &HookSettings::default(),
            workspace,
            Sandbox::new(Default::default()),
            false,
        )
    }

    pub fn set_session(&mut self, session_id: &str, transcript_path: Option<PathBuf>) {
        self.session_id = session_id.to_string();
        self.transcript_path = transcript_path;
    }

    /// Keeps context for the next prompt (SessionStart's).
    pub fn hold(&mut self, context: Vec<String>) {
        self.held.extend(context);
    }

    pub fn take_held(&mut self) -> Vec<String> {
        std::mem::take(&mut self.held)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether any hook is attached to `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.entries
            .iter()
            .any(|e| !e.held_back && e.spec.event == event)
    }

    /// What `/hooks` lists.
    pub fn lines(&self) -> Vec<HookLine> {
        self.entries
            .iter()
            .filter(|e| !e.held_back)
            .map(|e| HookLine {
                event: e.spec.event,
                matcher: e.spec.matcher.clone(),
                command: e.spec.command.clone(),
                source: source_of(&e.spec),
                last: e.last.clone(),
            })
            .collect()
    }

    /// Runs every hook matching `event` (and `tool`), in parallel, each with the common
    /// fields and `fields` on stdin; the endings in the entries' order, with their labels.
    pub async fn run(
        &mut self,
        event: HookEvent,
        tool: Option<&str>,
        fields: Map<String, Value>,
    ) -> Vec<(String, Ran)> {
        let chosen: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].matches(event, tool))
            .collect();
        if chosen.is_empty() {
            return Vec::new();
        }
        let mut input = json!({
            "session_id": self.session_id,
            "cwd": self.workspace,
            "hook_event_name": event.name(),
        });
        if let (Some(object), Some(path)) = (input.as_object_mut(), &self.transcript_path) {
            object.insert("transcript_path".into(), json!(path));
        }
        if let Some(object) = input.as_object_mut() {
            object.extend(fields);
        }
        let bytes = input.to_string().into_bytes();
        let runs = chosen.iter().map(|&i| {
            runner::run(
                &self.entries[i].spec,
                &bytes,
                &self.workspace,
                &self.sandbox,
            )
        });
        let endings = futures::future::join_all(runs).await;
        chosen
            .into_iter()
            .zip(endings)
            .map(|(i, ran)| {
                self.entries[i].last = Some(output::summary(&ran));
                (self.entries[i].label(), ran)
            })
            .collect()
    }

    /// Any event but PreToolUse: blocks, context, answers and errors of the matching hooks
    /// (each event's payload is built in `events.rs`).
    async fn event(&mut self, event: HookEvent, tool: Option<&str>, fields: Value) -> EventResult {
        let endings = self.run(event, tool, object(fields)).await;
        let mut result = EventResult::default();
        for (hook, ran) in endings {
            if result.block.is_none()
                && let Some(reason) = output::block_reason(&ran)
            {
                result.block = Some(Block {
                    reason,
                    hook: hook.clone(),
                });
            }
            if let Some(error) = output::error(&ran) {
                result.notices.push(format!("{hook} {error}"));
            }
            if matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
                && let Some(context) = output::context(&ran)
            {
                result.context.push(context);
            }
            if event == HookEvent::PermissionRequest
                && result.answer.as_ref().is_none_or(|answer| answer.allow)
                && let Some((allow, reason)) = output::permission_answer(&ran)
            {
                result.answer = Some(PermissionAnswer {
                    allow,
                    reason,
                    hook,
                });
            }
        }
        result
    }
}

pub(crate) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn source_of(spec: &HookSpec) -> String {
    let layer = match spec.layer {
        FileLayer::Managed => "managed",
        FileLayer::User => "user",
        FileLayer::Project => "project",
    };
    format!("{layer}: {}", spec.file.display())
}
