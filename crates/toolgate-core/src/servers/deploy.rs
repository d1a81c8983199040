//! `toolgate serve deploy [--workspace DIR]`: a small deployment runner.
//!
//! Services come from `<workspace>/.toolgate/deploy.toml`, or from the embedded
//! `assets/deploy.toml` (services `web` and `api` whose steps only echo and sleep).
//! `trigger` runs a service's steps with `sh -c` in the workspace and records every
//! attempt in `<workspace>/.toolgate/deployments.json`, so `status` survives restarts.
//! Every call but the read-only `status` is first logged as received in
//! `<workspace>/.toolgate/deploy-calls.jsonl` ([`super::deploy_calls`]).

use std::{
    collections::{BTreeMap, HashSet},
    path::{Path, PathBuf},
    process::Stdio,
    sync::Mutex,
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use rmcp::model::{Implementation, JsonObject, ToolAnnotations};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::common::{Backend, CallContext, SetupError, ToolOutput, ToolSpec, read_only};
use super::deploy_calls::CallLog;

const EMBEDDED_CONFIG: &str = include_str!("../../../../assets/deploy.toml");
/// Lines of output kept per deployment record.
const TAIL_LINES: usize = 20;
const TAIL_CHARS: usize = 2000;
/// Deployments shown by `status`.
const RECENT: usize = 5;
/// Records kept per service in the state file.
const KEEP: usize = 50;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServiceConfig {
    #[serde(default)]
    description: String,
    /// One shell command, or use `steps` for several.
    command: Option<String>,
    #[serde(default)]
    steps: Vec<String>,
    #[serde(default = "default_timeout")]
    timeout_secs: u64,
}

fn default_timeout() -> u64 {
    300
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeployConfig {
    #[serde(default)]
    services: BTreeMap<String, ServiceConfig>,
}

/// A service ready to run: its steps in order.
#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    pub description: String,
    pub steps: Vec<String>,
    pub timeout: Duration,
}

/// Parses a deploy.toml; `origin` names the file in error messages.
pub fn parse_config(text: &str, origin: &str) -> Result<Vec<Service>, SetupError> {
    let config: DeployConfig =
        toml::from_str(text).map_err(|e| SetupError::Invalid(format!("{origin}: {e}")))?;
    let mut services = Vec::new();
    for (name, service) in config.services {
        let mut steps = service.steps;
        if let Some(command) = service.command {
            steps.insert(0, command);
        }
        if steps.iter().all(|s| s.trim().is_empty()) {
            return Err(SetupError::Invalid(format!(
                "{origin}: service '{name}' needs `command = \"...\"` or `steps = [\"...\"]`"
            )));
        }
        services.push(Service {
            name,
            description: service.description,
            steps,
            timeout: Duration::from_secs(service.timeout_secs.max(1)),
        });
    }
    if services.is_empty() {
        return Err(SetupError::Invalid(format!(
            "{origin}: no [services.NAME] tables"
        )));
    }
    Ok(services)
}

/// One recorded deployment attempt.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Deployment {
    pub service: String,
    /// `v1`, `v2`, … counting attempts per service.
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub duration_ms: u64,
    /// `None` when the step was killed (timeout, cancellation) or could not start.
    pub exit_code: Option<i32>,
    pub succeeded: bool,
    pub output_tail: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StateFile {
    #[serde(default)]
    deployments: Vec<Deployment>,
}

/// The deploy server.
pub struct DeployBackend {
    workspace: PathBuf,
    config_origin: String,
    services: Vec<Service>,
    /// Serialises read-modify-write of the state file within this process.
    state_lock: tokio::sync::Mutex<()>,
    running: Mutex<HashSet<String>>,
    received: CallLog,
}

impl DeployBackend {
    /// Arguments: `[--workspace DIR]`; the default workspace is the current directory.
    pub fn from_args(args: &[String]) -> Result<Self, SetupError> {
        let mut workspace: Option<PathBuf> = None;
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            match arg.as_str() {
                "--workspace" => match iter.next() {
                    Some(dir) => workspace = Some(PathBuf::from(dir)),
                    None => {
                        return Err(SetupError::Invalid("--workspace needs a directory".into()));
                    }
                },
                other => {
                    return Err(SetupError::Invalid(format!(
                        "unexpected argument '{other}' (usage: toolgate serve deploy [--workspace DIR])"
                    )));
                }
            }
        }
        let workspace = match workspace {
            Some(dir) => dir,
            None => std::env::current_dir()
                .map_err(|e| SetupError::Invalid(format!("cannot read current directory: {e}")))?,
        };
        Self::new(workspace)
    }

    pub fn new(workspace: PathBuf) -> Result<Self, SetupError> {
        if !workspace.is_dir() {
            return Err(SetupError::Invalid(format!(
                "workspace {} is not a directory",
                workspace.display()
            )));
        }
        let custom = workspace.join(".toolgate").join("deploy.toml");
        let (text, origin) = match std::fs::read_to_string(&custom) {
            Ok(text) => (text, custom.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
                EMBEDDED_CONFIG.to_owned(),
                "embedded assets/deploy.toml".to_owned(),
            ),
            Err(e) => {
                return Err(SetupError::Invalid(format!(
                    "cannot read {}: {e}",
                    custom.display()
                )));
            }
        };
        let services = parse_config(&text, &origin)?;
        tracing::info!(config = %origin, services = services.len(), "deploy services loaded");
        Ok(Self {
            config_origin: origin,
            services,
            state_lock: tokio::sync::Mutex::new(()),
            running: Mutex::new(HashSet::new()),
            received: CallLog::new(&workspace),
            workspace,
        })
    }

    fn state_path(&self) -> PathBuf {
        self.workspace.join(".toolgate").join("deployments.json")
    }

    fn known(&self) -> String {
        self.services
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn service(&self, name: &str) -> Result<&Service, String> {
        self.services
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("Unknown service '{name}'. Known services: {}", self.known()))
    }

    fn is_running(&self, name: &str) -> bool {
        self.running
            .lock()
            .map(|set| set.contains(name))
            .unwrap_or(false)
    }

    async fn status(&self, args: &JsonObject) -> Result<ToolOutput, String> {
        let state = read_state(&self.state_path())?;
        let selected: Vec<&Service> = match args.get("service").and_then(Value::as_str) {
            Some(name) => vec![self.service(name)?],
            None => self.services.iter().collect(),
        };
        let mut text = String::new();
        let mut structured = Vec::new();
        for service in selected {
            let history: Vec<&Deployment> = state
                .deployments
                .iter()
                .filter(|d| d.service == service.name)
                .collect();
            let current = history.iter().rev().find(|d| d.succeeded);
            let last = history.last();
            let state_word = if self.is_running(&service.name) {
                "deploying".to_owned()
            } else {
                match (current, last) {
                    (_, None) => "never deployed".to_owned(),
                    (Some(c), Some(l)) if c.version == l.version => "deployed".to_owned(),
                    (_, Some(l)) => format!("last deployment {} failed", l.version),
                }
            };
            let version = current.map(|d| d.version.as_str()).unwrap_or("none");
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "Service {}: {state_word}; current version {version}\n",
                service.name
            ));
            if !service.description.is_empty() {
                text.push_str(&format!("  {}\n", service.description));
            }
            let recent: Vec<&&Deployment> = history.iter().rev().take(RECENT).collect();
            if recent.is_empty() {
                text.push_str("  No deployments recorded yet.\n");
            } else {
                text.push_str("  Recent deployments (newest first):\n");
                for d in &recent {
                    text.push_str(&format!("    {}\n", describe(d)));
                }
            }
            structured.push(json!({
                "service": service.name,
                "state": state_word,
                "current_version": current.map(|d| d.version.clone()),
                "recent": recent.iter().map(|d| serde_json::to_value(d).unwrap_or(Value::Null)).collect::<Vec<_>>(),
            }));
        }
        Ok(ToolOutput::text(text).with_structured(json!({ "services": structured })))
    }

    async fn trigger(&self, args: &JsonObject, ctx: CallContext) -> Result<ToolOutput, String> {
        let name = args
            .get("service")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let service = self.service(name)?.clone();
        let Some(_running) = RunningGuard::claim(&self.running, &service.name) else {
            return Err(format!(
                "Service '{}' is already being deployed; wait for it to finish and check status.",
                service.name
            ));
        };
        let record = self.run_deployment(&service, ctx).await?;
        let text = format!(
            "{} deployment of {} {}.\n{}\nOutput (last lines):\n{}",
            if record.succeeded {
                "Successful"
            } else {
                "FAILED"
            },
            record.service,
            record.version,
            describe(&record),
            if record.output_tail.is_empty() {
                "(no output)"
            } else {
                &record.output_tail
            }
        );
        let structured = serde_json::to_value(&record).unwrap_or(Value::Null);
        if record.succeeded {
            Ok(ToolOutput::text(text).with_structured(structured))
        } else {
            Err(text)
        }
    }

    async fn run_deployment(
        &self,
        service: &Service,
        ctx: CallContext,
    ) -> Result<Deployment, String> {
        let version = {
            let _guard = self.state_lock.lock().await;
            let state = read_state(&self.state_path())?;
            let attempts = state
                .deployments
                .iter()
                .filter(|d| d.service == service.name)
                .count();
            format!("v{}", attempts + 1)
        };
        let total = service.steps.len() as f64;
        let started_at = Utc::now();
        let clock = Instant::now();
        let mut output = String::new();
        let mut exit_code = Some(0);
        for (index, step) in service.steps.iter().enumerate() {
            ctx.progress(
                index as f64,
                Some(total),
                format!(
                    "{} {version}: step {}/{}: {step}",
                    service.name,
                    index + 1,
                    total
                ),
            )
            .await;
            let result = tokio::select! {
                result = run_step(step, &self.workspace, service, &version) => result,
                () = ctx.cancelled.cancelled() => StepResult {
                    output: "deployment cancelled by the client\n".to_owned(),
                    exit_code: None,
                },
            };
            output.push_str(&result.output);
            exit_code = result.exit_code;
            if exit_code != Some(0) {
                break;
            }
        }
        let succeeded = exit_code == Some(0);
        if succeeded {
            ctx.progress(
                total,
                Some(total),
                format!("{} {version} deployed", service.name),
            )
            .await;
        }
        let record = Deployment {
            service: service.name.clone(),
            version,
            started_at,
            finished_at: Utc::now(),
            duration_ms: clock.elapsed().as_millis() as u64,
            exit_code,
            succeeded,
            output_tail: tail(&output),
        };
        let _guard = self.state_lock.lock().await;
        let mut state = read_state(&self.state_path())?;
        state.deployments.push(record.clone());
        prune(&mut state.deployments, &service.name);
        write_state(&self.state_path(), &state)?;
        Ok(record)
    }
}

/// Marks a service as deploying for as long as it lives; rmcp drops the call's future when
/// the client cancels, and the mark must go away then too.
struct RunningGuard<'a> {
    set: &'a Mutex<HashSet<String>>,
    name: String,
}

impl<'a> RunningGuard<'a> {
    fn claim(set: &'a Mutex<HashSet<String>>, name: &str) -> Option<Self> {
        let mut running = set.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        running.insert(name.to_owned()).then(|| Self {
            set,
            name: name.to_owned(),
        })
    }
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        let mut running = self
            .set
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        running.remove(&self.name);
    }
}

struct StepResult {
    output: String,
    exit_code: Option<i32>,
}

async fn run_step(step: &str, workspace: &Path, service: &Service, version: &str) -> StepResult {
    // `exec 2>&1` interleaves stderr into stdout in the order the step wrote them.
    let script = format!("exec 2>&1\n{step}");
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(workspace)
        .env("TOOLGATE_SERVICE", &service.name)
        .env("TOOLGATE_DEPLOY_VERSION", version)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            return StepResult {
                output: format!("cannot start sh: {e}\n"),
                exit_code: None,
            };
        }
    };
    let mut stdout = child.stdout.take();
    let run = async {
        let mut bytes = Vec::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.read_to_end(&mut bytes).await;
        }
        let status = child.wait().await;
        (bytes, status)
    };
    match tokio::time::timeout(service.timeout, run).await {
        Ok((bytes, Ok(status))) => StepResult {
            output: String::from_utf8_lossy(&bytes).into_owned(),
            exit_code: status.code(),
        },
        Ok((bytes, Err(e))) => StepResult {
            output: format!(
                "{}\nwaiting for the step failed: {e}\n",
                String::from_utf8_lossy(&bytes)
            ),
            exit_code: None,
        },
        Err(_) => StepResult {
            output: format!(
                "step timed out after {} s and was killed\n",
                service.timeout.as_secs()
            ),
            exit_code: None,
        },
    }
}

fn describe(d: &Deployment) -> String {
    let exit = match d.exit_code {
        Some(code) => format!("exit {code}"),
        None => "killed".to_owned(),
    };
    format!(
        "{} {} at {} ({exit}, {} ms){}",
        d.version,
        if d.succeeded { "succeeded" } else { "failed" },
        d.started_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        d.duration_ms,
        if d.succeeded {
            ""
        } else {
            " - see output tail"
        }
    )
}

fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let joined = lines[start..].join("\n");
    let count = joined.chars().count();
    if count <= TAIL_CHARS {
        joined
    } else {
        joined.chars().skip(count - TAIL_CHARS).collect()
    }
}

fn prune(deployments: &mut Vec<Deployment>, service: &str) {
    let count = deployments.iter().filter(|d| d.service == service).count();
    let mut excess = count.saturating_sub(KEEP);
    deployments.retain(|d| {
        if excess > 0 && d.service == service {
            excess -= 1;
            false
        } else {
            true
        }
    });
}

fn read_state(path: &Path) -> Result<StateFile, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "deployment history {} is not valid: {e}; fix or remove it",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StateFile::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes through a temporary file and a rename so a crash never leaves half a file.
fn write_state(path: &Path, state: &StateFile) -> Result<(), String> {
    let dir = path.parent().ok_or("state path has no parent")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text = serde_json::to_string_pretty(state).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

impl Backend for DeployBackend {
    fn implementation(&self) -> Implementation {
        Implementation::new("toolgate-deploy", env!("CARGO_PKG_VERSION"))
            .with_title("toolgate deploy runner")
    }

    fn instructions(&self) -> String {
        format!(
            "Deploys the services of workspace {} (config: {}). Services: {}. Check `status` \
             before and after a `trigger`; a trigger really runs the service's commands.",
            self.workspace.display(),
            self.config_origin,
            self.known()
        )
    }

    fn tools(&self) -> Result<Vec<ToolSpec>, SetupError> {
        let names: Vec<Value> = self.services.iter().map(|s| json!(s.name)).collect();
        let known = self.known();
        Ok(vec![
            ToolSpec::new(
                "status",
                "Show a service's deployment status: its state (never deployed, deployed, \
                 deploying, last deployment failed), the version currently live and the most \
                 recent deployments with time, exit code and duration. Omit `service` to see \
                 every service. Read-only; safe to call any time.",
                json!({
                    "type": "object",
                    "properties": {
                        "service": {
                            "type": "string",
                            "description": format!("Service name, one of: {known}. Omit for all services.")
                        }
                    },
                    "additionalProperties": false
                }),
                read_only("Deployment status"),
            )?,
            ToolSpec::new(
                "trigger",
                "Deploy a service now: runs its configured commands in the workspace, reports \
                 progress per step, and records the new version, time, exit code and output \
                 tail. This changes what is live; only call it when the user asked for a \
                 deployment. Fails (isError) if a step exits non-zero, showing its output.",
                json!({
                    "type": "object",
                    "properties": {
                        "service": {
                            "type": "string",
                            "description": format!("Service to deploy, one of: {known}."),
                            "examples": names
                        }
                    },
                    "required": ["service"],
                    "additionalProperties": false
                }),
                ToolAnnotations::with_title("Trigger a deployment")
                    .read_only(false)
                    .destructive(true)
                    .idempotent(false),
            )?,
        ])
    }

    /// Every call but `status` is logged before anything else happens to it. `status` is
    /// left out because it is read-only: a line written for it would make a read-only call
    /// change the workspace (a checkpoint, a "changed 1 file" after every status).
    fn received(&self, tool: &str, args: Option<&JsonObject>) -> Result<(), String> {
        if tool == "status" {
            return Ok(());
        }
        let arguments = args.cloned().map(Value::Object).unwrap_or(Value::Null);
        self.received.record(tool, arguments).map_err(|e| {
            format!("Not run: the deploy server records every call before running it, and {e}")
        })
    }

    async fn call(
        &self,
        tool: &str,
        args: JsonObject,
        ctx: CallContext,
    ) -> Result<ToolOutput, String> {
        match tool {
            "status" => self.status(&args).await,
            "trigger" => self.trigger(&args, ctx).await,
            other => Err(format!(
                "tool '{other}' is not implemented by the deploy server"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_config_has_web_and_api() {
        let services = parse_config(EMBEDDED_CONFIG, "embedded").unwrap();
        let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["api", "web"]);
        assert!(services.iter().all(|s| s.steps.len() >= 2));
    }

    #[test]
    fn bad_config_names_the_file_and_problem() {
        let err = parse_config("[services.web]\ncomand = 'x'\n", "/w/.toolgate/deploy.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/w/.toolgate/deploy.toml"), "{err}");
        assert!(err.contains("comand"), "{err}");
        let err = parse_config("[services.web]\ndescription = 'no command'\n", "f")
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs `command"), "{err}");
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let kept = tail(&text);
        assert!(
            kept.starts_with("line 11\n") && kept.ends_with("line 30"),
            "{kept}"
        );
    }
}
