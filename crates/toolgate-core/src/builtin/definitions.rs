//! What the model is told about the built-in and connector tools. The descriptions are the
//! only manual the model gets, so they state formats, limits and failure behaviour.

use super::BuiltinTool;
use super::shell::{DEFAULT_TIMEOUT, MAX_TIMEOUT, OUTPUT_LIMIT_CHARS};
use crate::pool::PoolTool;
use crate::pool::search::MAX_PARTS;
use serde_json::{Value, json};

/// bash, read_file, write_file, edit_file, glob, connect_mcp (enum of `server_names`), in
/// that order: the pool before anything is connected.
pub fn builtin_tools(server_names: &[String]) -> Vec<PoolTool> {
    vec![
        PoolTool::builtin(BuiltinTool::Bash, &bash_description(), bash_schema()),
        PoolTool::builtin(
            BuiltinTool::ReadFile,
            READ_FILE_DESCRIPTION,
            read_file_schema(),
        ),
        PoolTool::builtin(
            BuiltinTool::WriteFile,
            WRITE_FILE_DESCRIPTION,
            write_file_schema(),
        ),
        PoolTool::builtin(
            BuiltinTool::EditFile,
            EDIT_FILE_DESCRIPTION,
            edit_file_schema(),
        ),
        PoolTool::builtin(BuiltinTool::Glob, GLOB_DESCRIPTION, glob_schema()),
        PoolTool::builtin(
            BuiltinTool::ConnectMcp,
            &format!(
                "Connect to a configured MCP server and add its tools to your tool pool. The \
                 answer lists the tools discovered; from your next step on they can be called \
                 under the names mcp__<server>__<tool>. {}",
                available(server_names)
            ),
            server_name_schema(server_names, "Name of the MCP server to connect to."),
        ),
    ]
}

fn available(server_names: &[String]) -> String {
    if server_names.is_empty() {
        "No MCP servers are configured.".to_string()
    } else {
        format!("Configured servers: {}.", server_names.join(", "))
    }
}

fn server_name_schema(server_names: &[String], what: &str) -> Value {
    let mut name = json!({"type": "string", "description": what});
    // An empty `enum` matches nothing and some model APIs reject it; with no servers the
    // description says so and the agent answers any name with the (empty) list.
    if !server_names.is_empty() {
        name["enum"] = json!(server_names);
    }
    object_schema(json!({ "name": name }), &["name"])
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A string property with its description.
fn string_property(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// The `path` property of the file tools: the file to `verb`, relative or absolute.
fn path_property(verb: &str) -> Value {
    string_property(&format!(
        "File to {verb}, relative to the workspace (or absolute)."
    ))
}

fn bash_description() -> String {
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
         temp dir, no network, credential folders unreadable; a failure it caused is marked \
         `[sandbox: …]`. Prefer read_file, write_file, edit_file and glob for file work.",
        default = DEFAULT_TIMEOUT.as_secs(),
        max = MAX_TIMEOUT.as_millis(),
        limit = OUTPUT_LIMIT_CHARS,
        half = OUTPUT_LIMIT_CHARS / 2,
    )
}

fn bash_schema() -> Value {
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

const READ_FILE_DESCRIPTION: &str = "Read a UTF-8 text file. Each line is returned numbered \
like `cat -n`: the line number right-aligned in 6 columns, a tab, then the line exactly as in \
the file. The numbers and the tab are not part of the file — leave them out of edit_file's \
old_text. Shows up to `limit` lines (default 2000) and at most 50000 characters; when more \
exists a final line in square brackets says so. Binary files and missing files are errors. \
Paths are relative to the workspace; absolute paths are accepted.";

fn read_file_schema() -> Value {
    object_schema(
        json!({
            "path": path_property("read"),
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to show from the start (default 2000)."
            }
        }),
        &["path"],
    )
}

const WRITE_FILE_DESCRIPTION: &str = "Write `content` to a file, replacing it entirely if it \
exists and creating it, and any missing parent directories, if it does not. Returns the number \
of bytes written. To change part of an existing file use edit_file instead. Paths are relative \
to the workspace; absolute paths are accepted.";

fn write_file_schema() -> Value {
    object_schema(
        json!({
            "path": path_property("write"),
            "content": string_property("The complete new content of the file.")
        }),
        &["path", "content"],
    )
}

const EDIT_FILE_DESCRIPTION: &str = "Replace one exact piece of text in an existing text file. \
`old_text` must occur exactly once in the file, matching character for character including \
whitespace and indentation (copy it from read_file output without the line-number prefix). \
If it occurs 0 times or more than once the file is left unchanged and the error says how many \
times it occurs; then read the file again or include more surrounding lines to make it unique. \
Paths are relative to the workspace; absolute paths are accepted.";

fn edit_file_schema() -> Value {
    object_schema(
        json!({
            "path": path_property("edit"),
            "old_text": string_property("The exact text to replace; must occur exactly once."),
            "new_text": string_property("The text to put in its place (may be empty to delete).")
        }),
        &["path", "old_text", "new_text"],
    )
}

const GLOB_DESCRIPTION: &str = "Find files in the workspace whose path, relative to the \
workspace root, matches a glob pattern. `*` and `?` do not cross `/`; `**` matches any number \
of directories (`**/*.rs` finds Rust files at any depth, `src/*.rs` only directly in src); \
`{a,b}` and `[abc]` work too. Returns matching file paths (not directories), one per line, \
sorted, at most 200; when there are more, a final line says how many matched. Searches only \
inside the workspace, never follows symbolic links into other directories and skips `.git` \
and `target` directories.";

fn glob_schema() -> Value {
    object_schema(
        json!({
            "pattern": string_property("Glob pattern relative to the workspace root, e.g. `**/*.toml`.")
        }),
        &["pattern"],
    )
}

/// `disconnect_mcp`, offered only while something is connected (its enum is what is), so
/// the starting pool stays the six tools a user expects.
pub fn disconnect_tool(connected: &[String]) -> Option<PoolTool> {
    if connected.is_empty() {
        return None;
    }
    Some(PoolTool::builtin(
        BuiltinTool::DisconnectMcp,
        &format!(
            "Disconnect from a connected MCP server and remove its tools from your tool \
             pool. Use it when a server's tools are no longer needed. Connected servers: {}.",
            connected.join(", ")
        ),
        server_name_schema(connected, "Name of the connected MCP server to disconnect."),
    ))
}

/// The built-in part of the pool for the current connections.
pub fn pool_builtins(configured: &[String], connected: &[String]) -> Vec<PoolTool> {
    let mut tools = builtin_tools(configured);
    tools.extend(disconnect_tool(connected));
    tools
}

/// [`pool_builtins`] plus the resource tools while `with_resources` is not empty.
pub fn pool_builtins_with_resources(
    configured: &[String],
    connected: &[String],
    with_resources: &[String],
) -> Vec<PoolTool> {
    let mut tools = pool_builtins(configured, connected);
    tools.extend(resource_tools(with_resources));
    tools
}

/// `list_mcp_resources` and `read_mcp_resource`, offered only while a connected server
/// declares resources (`servers`: those servers, in connection order).
pub fn resource_tools(servers: &[String]) -> Vec<PoolTool> {
    if servers.is_empty() {
        return Vec::new();
    }
    let mut server = json!({"type": "string", "enum": servers});
    server["description"] = json!("Name of the connected MCP server.");
    let list_schema = object_schema(json!({ "server": server.clone() }), &[]);
    let read_schema = object_schema(
        json!({
            "server": server,
            "uri": string_property("The resource's URI as list_mcp_resources shows it, or a URI made from one of its templates.")
        }),
        &["server", "uri"],
    );
    vec![
        PoolTool::builtin(
            BuiltinTool::ListMcpResources,
            &format!(
                "List the resources (and resource templates) that connected MCP servers offer: \
                 one line per resource with its URI, name, MIME type and description; templates \
                 are RFC 6570 URI templates whose variables you fill in to make a URI. Without \
                 `server`, every server that has resources is listed. Servers with resources: {}.",
                servers.join(", ")
            ),
            list_schema,
        ),
        PoolTool::builtin(
            BuiltinTool::ReadMcpResource,
            "Read one resource of a connected MCP server by URI. Text contents come back as \
             text (long contents are cut with a marker saying so); images come back as images; \
             other binary contents are described, not shown. Reading a server's resource is \
             treated like calling one of its tools: the person may be asked first.",
            read_schema,
        ),
    ]
}

/// `exit_plan_mode`, in the pool only while the session is in plan mode.
pub fn exit_plan_mode_tool() -> PoolTool {
    PoolTool::builtin(
        BuiltinTool::ExitPlanMode,
        "You are in plan mode: read-only. When your plan is ready, call this with the plan \
         (markdown: the steps, the files you will change, how you will check the work). The \
         user reads it and either approves, which leaves plan mode so you can carry it out, \
         or keeps plan mode and tells you what to change.",
        object_schema(
            json!({ "plan": string_property("The plan, in markdown.") }),
            &["plan"],
        ),
    )
}

/// Most hits one `search_tools` call returns (and loads).
pub const SEARCH_LIMIT_MAX: u64 = 20;
/// Hits when the call gives no `limit`.
pub const SEARCH_LIMIT_DEFAULT: u64 = 5;

/// `search_tools`, in the pool while MCP tools are deferred. Its definition does not depend
/// on the connections, so it never breaks a cached prompt prefix by itself.
pub fn search_tools_tool() -> PoolTool {
    PoolTool::builtin(
        BuiltinTool::SearchTools,
        "Load MCP tools not in your tool list (the rest are deferred). Query: the action in \
         a few words (\"create a github issue\") or exact tool names. For a task of several \
         steps, give one query per step in `queries`. Found tools are callable from your next \
         step and stay loaded; the answer also names, unloaded, other tools on the same \
         resource.",
        object_schema(
            json!({
                "query": string_property("What to do, or tool names, comma-separated."),
                "queries": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_PARTS,
                    "description": "One query per step."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SEARCH_LIMIT_MAX,
                    "description": format!("Default {SEARCH_LIMIT_DEFAULT}.")
                }
            }),
            &[],
        ),
    )
}
