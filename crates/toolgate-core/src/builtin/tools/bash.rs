//! `bash`: one shell command line, run in the sandbox (see `shell.rs`).

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::builtin::definitions::{object_schema, string_property};
use crate::builtin::handler::{
    BuiltinHandler, Definition, DefinitionContext, Judgement, LocalCall,
};
use crate::builtin::shell::{self, DEFAULT_TIMEOUT, MAX_TIMEOUT, OUTPUT_LIMIT_CHARS};
use crate::builtin::{BuiltinId, BuiltinOutput};

pub struct Bash;

pub const ID: BuiltinId = BuiltinId::new(&Bash);

#[async_trait]
impl BuiltinHandler for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }

    fn definition(&self, _: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: description(),
            input_schema: schema(),
        }
    }

    fn judgement(&self) -> Judgement {
        Judgement::Shell
    }

    async fn run(&self, call: LocalCall<'_>) -> BuiltinOutput {
        shell::run_bash(
            call.input,
            call.workspace,
            call.sandbox,
            call.cancel,
            call.trace,
        )
        .await
    }
}

fn description() -> String {
    format!(
        "Run a shell command with `bash -c` (or `sh -c` where bash is missing) in the \
         workspace directory. Returns stdout and stderr interleaved as they were written, then \
         a final line `exit status: N`; a non-zero exit status marks the result as an error. \
         stdin is empty, so commands that wait for input get end-of-file — pass flags such as \
         `--yes` or `--no-pager` instead. Each call starts a fresh shell: `cd` and variables do \
         not carry over, so chain steps with `&&`. Processes still running in the background \
         when the command finishes are stopped. The timeout is {default} s unless timeout_ms \
         sets another (at most {max} ms); on timeout the command and all its child processes \
         are killed and the result says so. Output over {limit} characters keeps the first \
         and last {half} characters with a line `[output truncated: N characters omitted]` \
         between them. Commands run in an OS sandbox: writes only in the workspace and the \
         temp dir, credential folders unreadable, and by default network only through \
         toolgate's proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are set; each new host needs the \
         person's approval, a refused one answers `toolgate: … denied`, and the result ends \
         with `[network: …]` listing the hosts reached); a failure the sandbox caused is \
         marked `[sandbox: …]`. Prefer read_file, write_file, edit_file and glob for file work.",
        default = DEFAULT_TIMEOUT.as_secs(),
        max = MAX_TIMEOUT.as_millis(),
        limit = OUTPUT_LIMIT_CHARS,
        half = OUTPUT_LIMIT_CHARS / 2,
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "command": string_property("The command line to run, e.g. `cargo test 2>&1 | tail -n 50`."),
            "timeout_ms": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT.as_millis() as u64,
                "description": format!(
                    "Optional timeout in milliseconds (default {}, larger values are capped at {}).",
                    DEFAULT_TIMEOUT.as_millis(),
                    MAX_TIMEOUT.as_millis()
                )
            },
            "unsandboxed": {
                "type": "boolean",
                "description": "Ask to run this command outside the sandbox (the person is asked every time unless they allow it for the session). Only when the sandbox blocked something the task really needs."
            },
            "justification": string_property("With unsandboxed: one line saying why the command cannot run in the sandbox; the person reads it.")
        }),
        &["command"],
    )
}
