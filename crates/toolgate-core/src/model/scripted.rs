//! The scripted demo model: replays a scenario (assets/scenarios/*.json) so toolgate works
//! end to end without an API key.
//!
//! It is stateless: every call works out where the conversation is from the request alone.
//! A new user text picks the first turn-start step whose `user` regex matches it; a message
//! of tool results continues after the step that issued those calls (its id is encoded in
//! the tool_use ids this provider hands out) and branches on the outcome of the last result.
//!
//! Scenario format:
//! ```json
//! { "name": "…", "description": "…", "chunk_chars": 14, "chunk_delay_ms": 12,
//!   "steps": [
//!     { "id": "start", "user": "(?i)deploy", "say": "text", "tools": [{"name": "…", "input": {}}] },
//!     { "id": "next", "after": "start", "on": "ok", "say": "…{{result}}…", "stop": "end_turn" } ] }
//! ```
//! A step without `after` starts a turn (`user` defaults to matching anything); `after` names
//! the step whose tool results it follows (`*` for any step); `on` is `ok`, `error`, `denied`
//! (an error result starting with `Permission denied`) or `any` (default). The first matching
//! step in file order wins. `say` may use `{{result}}` (the last tool result, shortened),
//! `{{result_line}}` (its first line) and `{{user}}` (the user's text of this turn), also
//! inside string values of tool inputs. `stop` defaults to `tool_use` when the step calls
//! tools and `end_turn` otherwise.

use super::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, Role, StopReason, StreamEvent,
    Usage,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

pub const LABEL: &str = toolgate_protocol::SCRIPTED_MODEL_LABEL;
pub const DEFAULT_SCENARIO: &str = "deploy_demo";

/// Scenarios compiled into the binary, by name (the file stem).
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "deploy_demo",
        include_str!("../../../../assets/scenarios/deploy_demo.json"),
    ),
    (
        "files",
        include_str!("../../../../assets/scenarios/files.json"),
    ),
];

const TOOL_ID_PREFIX: &str = "toolu_sc_";
const RESULT_MAX_CHARS: usize = 600;
const RESULT_LINE_MAX_CHARS: usize = 160;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("scenario {source_name}: {message}")]
    Invalid {
        source_name: String,
        message: String,
    },
    #[error("cannot read scenario file {path}: {message}")]
    Read { path: String, message: String },
}

impl From<ScenarioError> for ModelError {
    fn from(err: ScenarioError) -> Self {
        ModelError::Config(err.to_string())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Ok,
    Error,
    Denied,
    Any,
}

impl Outcome {
    fn of(content: &str, is_error: bool) -> Outcome {
        match (is_error, content.starts_with("Permission denied")) {
            (false, _) => Outcome::Ok,
            (true, true) => Outcome::Denied,
            (true, false) => Outcome::Error,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "default_chunk_chars")]
    chunk_chars: usize,
    #[serde(default)]
    chunk_delay_ms: u64,
    steps: Vec<StepFile>,
}

fn default_chunk_chars() -> usize {
    16
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepFile {
    id: String,
    user: Option<String>,
    after: Option<String>,
    on: Option<Outcome>,
    #[serde(default)]
    say: String,
    #[serde(default)]
    tools: Vec<ToolFile>,
    stop: Option<StopReason>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolFile {
    name: String,
    #[serde(default = "empty_object")]
    input: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug)]
enum Trigger {
    UserText(Regex),
    After { step: Option<String>, on: Outcome },
}

#[derive(Debug)]
struct Step {
    id: String,
    trigger: Trigger,
    say: String,
    tools: Vec<ToolFile>,
    stop: StopReason,
}

/// A validated scenario: regexes compiled, `after` references checked.
#[derive(Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    chunk_chars: usize,
    chunk_delay: Duration,
    steps: Vec<Step>,
}

impl Scenario {
    pub fn parse(source_name: &str, json: &str) -> Result<Scenario, ScenarioError> {
        let invalid = |message: String| ScenarioError::Invalid {
            source_name: source_name.to_string(),
            message,
        };
        let file: ScenarioFile = serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
        if file.steps.is_empty() {
            return Err(invalid("it has no steps".into()));
        }
        let mut steps: Vec<Step> = Vec::new();
        for step in file.steps {
            if steps.iter().any(|s| s.id == step.id) {
                return Err(invalid(format!("step id '{}' is used twice", step.id)));
            }
            if step.id.is_empty() || step.id.contains(char::is_whitespace) {
                return Err(invalid(format!(
                    "step id '{}' must be non-empty without spaces",
                    step.id
                )));
            }
            let trigger = match (&step.user, &step.after) {
                (Some(_), Some(_)) => {
                    return Err(invalid(format!(
                        "step '{}' has both 'user' and 'after'; a step either starts a turn or continues one",
                        step.id
                    )));
                }
                (user, None) => {
                    if step.on.is_some() {
                        return Err(invalid(format!(
                            "step '{}' has 'on' but no 'after'",
                            step.id
                        )));
                    }
                    let pattern = user.as_deref().unwrap_or(".*");
                    let regex = Regex::new(pattern).map_err(|e| {
                        invalid(format!("step '{}': bad 'user' regex: {e}", step.id))
                    })?;
                    Trigger::UserText(regex)
                }
                (None, Some(after)) => Trigger::After {
                    step: (after != "*").then(|| after.clone()),
                    on: step.on.unwrap_or(Outcome::Any),
                },
            };
            if step.say.is_empty() && step.tools.is_empty() {
                return Err(invalid(format!(
                    "step '{}' neither says anything nor calls a tool",
                    step.id
                )));
            }
            let stop = step.stop.unwrap_or(if step.tools.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            });
            steps.push(Step {
                id: step.id,
                trigger,
                say: step.say,
                tools: step.tools,
                stop,
            });
        }
        for step in &steps {
            if let Trigger::After {
                step: Some(after), ..
            } = &step.trigger
                && !steps.iter().any(|s| &s.id == after)
            {
                return Err(invalid(format!(
                    "step '{}' continues after unknown step '{after}'",
                    step.id
                )));
            }
        }
        Ok(Scenario {
            name: file.name,
            description: file.description,
            chunk_chars: file.chunk_chars.max(1),
            chunk_delay: Duration::from_millis(file.chunk_delay_ms),
            steps,
        })
    }

    pub fn embedded(name: &str) -> Result<Scenario, ScenarioError> {
        let (_, json) =
            EMBEDDED
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| ScenarioError::Invalid {
                    source_name: name.to_string(),
                    message: format!(
                        "no such embedded scenario (available: {})",
                        EMBEDDED
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?;
        Scenario::parse(name, json)
    }

    pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
        let json = std::fs::read_to_string(path).map_err(|e| ScenarioError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Scenario::parse(&path.display().to_string(), &json)
    }

    /// An embedded scenario name, or else a path to a scenario file.
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        if EMBEDDED.iter().any(|(n, _)| *n == name_or_path) {
            Scenario::embedded(name_or_path)
        } else {
            Scenario::from_file(Path::new(name_or_path))
        }
    }
}

/// Where the conversation stands, read from the request.
struct Position<'a> {
    /// The user's text that started this turn.
    user_text: String,
    /// Set when the last message carries tool results: (step that issued them, last result).
    continuation: Option<(Option<String>, &'a str, Outcome)>,
    /// Assistant messages so far; makes tool ids unique across turns.
    assistant_turns: usize,
}

fn text_of(message: &Message) -> String {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn has_tool_results(message: &Message) -> bool {
    message
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
}

fn step_of_tool_id(id: &str) -> Option<String> {
    let rest = id.strip_prefix(TOOL_ID_PREFIX)?;
    let mut parts = rest.splitn(3, '_');
    let (_turn, _k, step) = (parts.next()?, parts.next()?, parts.next()?);
    Some(step.to_string())
}

fn position(messages: &[Message]) -> Position<'_> {
    let assistant_turns = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    let user_text = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User && !has_tool_results(m))
        .map(text_of)
        .unwrap_or_default();
    let continuation = messages
        .last()
        .filter(|m| m.role == Role::User)
        .and_then(|last| {
            let (tool_use_id, content, is_error) =
                last.content.iter().rev().find_map(|b| match b {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        ..
                    } => Some((tool_use_id, content.as_str(), *is_error)),
                    _ => None,
                })?;
            Some((
                step_of_tool_id(tool_use_id),
                content,
                Outcome::of(content, is_error),
            ))
        });
    Position {
        user_text,
        continuation,
        assistant_turns,
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    let mut out: String = text.chars().take(max_chars).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

struct Fill<'a> {
    user: &'a str,
    result: &'a str,
}

impl Fill<'_> {
    fn text(&self, template: &str) -> String {
        let first_line = self
            .result
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        template
            .replace(
                "{{result_line}}",
                &shorten(first_line, RESULT_LINE_MAX_CHARS),
            )
            .replace("{{result}}", &shorten(self.result.trim(), RESULT_MAX_CHARS))
            .replace("{{user}}", self.user)
    }

    fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Splits text into pieces of about `size` characters, breaking after whitespace where it
/// can so the stream looks like a model's.
fn chunks(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut count = 0;
    for c in text.chars() {
        current.push(c);
        count += 1;
        if (count >= size && c.is_whitespace()) || count >= size * 2 {
            out.push(std::mem::take(&mut current));
            count = 0;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

pub struct ScriptedProvider {
    scenario: Scenario,
    chunk_delay: Duration,
}

impl ScriptedProvider {
    pub fn new(scenario: Scenario) -> Self {
        let chunk_delay = scenario.chunk_delay;
        ScriptedProvider {
            scenario,
            chunk_delay,
        }
    }

    /// The embedded default, the deploy story.
    pub fn demo() -> Result<Self, ModelError> {
        Ok(Self::new(Scenario::embedded(DEFAULT_SCENARIO)?))
    }

    /// Overrides the scenario's pause between text chunks (tests use zero).
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    fn pick(&self, pos: &Position<'_>) -> Option<&Step> {
        self.scenario
            .steps
            .iter()
            .find(|step| match (&step.trigger, &pos.continuation) {
                (Trigger::UserText(regex), None) => regex.is_match(&pos.user_text),
                (Trigger::After { step: after, on }, Some((prev, _, outcome))) => {
                    let step_matches = match after {
                        None => true,
                        Some(after) => prev.as_deref() == Some(after.as_str()),
                    };
                    step_matches && (*on == Outcome::Any || on == outcome)
                }
                _ => false,
            })
    }

    /// The events for one call, without the pauses.
    pub fn plan(&self, request: &ModelRequest) -> Vec<StreamEvent> {
        if request.system == super::SUMMARY_SYSTEM_PROMPT {
            return summary_plan(request);
        }
        let pos = position(&request.messages);
        let result = pos.continuation.as_ref().map(|(_, c, _)| *c).unwrap_or("");
        let fill = Fill {
            user: &pos.user_text,
            result,
        };
        let mut events = Vec::new();
        let (say, tools, stop, step_id) = match self.pick(&pos) {
            Some(step) => (
                fill.text(&step.say),
                step.tools.as_slice(),
                step.stop,
                step.id.as_str(),
            ),
            None => (
                format!(
                    "(The scripted demo model has no step in scenario '{}' for this point of the conversation. Configure an API key to talk to a real model.)",
                    self.scenario.name
                ),
                &[][..],
                StopReason::EndTurn,
                "",
            ),
        };
        for piece in chunks(&say, self.scenario.chunk_chars) {
            events.push(StreamEvent::TextDelta(piece));
        }
        for (k, tool) in tools.iter().enumerate() {
            let id = format!("{TOOL_ID_PREFIX}{}_{k}_{step_id}", pos.assistant_turns);
            events.push(StreamEvent::ToolUseStarted {
                id: id.clone(),
                name: tool.name.clone(),
            });
            events.push(StreamEvent::ToolUse {
                id,
                name: tool.name.clone(),
                input: fill.value(&tool.input),
            });
        }
        // A rough count (4 characters a token) so the status line has something to show.
        let input_chars: usize = request.system.len()
            + request
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .map(|b| match b {
                    ContentBlock::Text { text } => text.len(),
                    ContentBlock::ToolUse { input, .. } => input.to_string().len(),
                    ContentBlock::ToolResult {
                        content, images, ..
                    } => content.len() + images.iter().map(|i| i.data.len()).sum::<usize>(),
                    ContentBlock::Image(image) => image.data.len(),
                    ContentBlock::Thinking { thinking, .. } => thinking.len(),
                    ContentBlock::RedactedThinking { data } => data.len(),
                })
                .sum::<usize>();
        events.push(StreamEvent::Usage(Usage {
            input_tokens: (input_chars / 4) as u64,
            output_tokens: (say.len() / 4) as u64 + 10 * tools.len() as u64,
            ..Default::default()
        }));
        events.push(StreamEvent::Stop(stop));
        events
    }
}

/// The demo model's answer to a summary request: the transcript's user lines, each cut
/// to a line (a real model writes a real summary; this keeps the demo honest about it).
fn summary_plan(request: &ModelRequest) -> Vec<StreamEvent> {
    let transcript: String = request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let asked: Vec<String> = transcript
        .split("\n\n")
        .filter_map(|entry| entry.strip_prefix("USER: "))
        .map(|text| {
            text.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect()
        })
        .collect();
    let calls = transcript.matches("\n\nASSISTANT called ").count();
    let say = format!(
        "(Summary by the scripted demo model.) The person asked: {}. The agent made {calls} tool calls.",
        if asked.is_empty() {
            "nothing yet".to_string()
        } else {
            asked.join(" / ")
        }
    );
    vec![
        StreamEvent::TextDelta(say),
        StreamEvent::Stop(StopReason::EndTurn),
    ]
}

impl ModelProvider for ScriptedProvider {
    fn label(&self) -> String {
        LABEL.to_string()
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        let events = self.plan(&request);
        let delay = self.chunk_delay;
        async_stream::stream! {
            for event in events {
                let is_text = matches!(event, StreamEvent::TextDelta(_));
                yield Ok(event);
                if is_text && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_scenario_is_valid() {
        for (name, _) in EMBEDDED {
            Scenario::embedded(name).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn invalid_scenarios_are_explained() {
        let cases = [
            (r#"{"name":"x","steps":[]}"#, "no steps"),
            (
                r#"{"name":"x","steps":[{"id":"a","user":"(","say":"hi"}]}"#,
                "bad 'user' regex",
            ),
            (
                r#"{"name":"x","steps":[{"id":"a","after":"nope","say":"hi"}]}"#,
                "unknown step 'nope'",
            ),
            (
                r#"{"name":"x","steps":[{"id":"a","say":"hi"},{"id":"a","say":"ho"}]}"#,
                "used twice",
            ),
            (
                r#"{"name":"x","steps":[{"id":"a","sya":"hi"}]}"#,
                "unknown field `sya`",
            ),
        ];
        for (json, expected) in cases {
            let err = Scenario::parse("test.json", json).unwrap_err().to_string();
            assert!(err.contains(expected), "{err} should mention {expected}");
            assert!(err.contains("test.json"), "{err}");
        }
    }

    #[test]
    fn chunks_rejoin_to_the_text() {
        let text = "Let me look that up in the docs… ünïcode and a verylongwordwithoutspaces";
        let pieces = chunks(text, 8);
        assert!(pieces.len() > 3);
        assert_eq!(pieces.concat(), text);
    }

    #[test]
    fn tool_ids_carry_the_step() {
        assert_eq!(
            step_of_tool_id("toolu_sc_3_0_search_docs").as_deref(),
            Some("search_docs")
        );
        assert_eq!(step_of_tool_id("toolu_01ABC"), None);
    }
}
