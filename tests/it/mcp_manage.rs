//! `toolgate mcp add|add-json|remove|get|enable|disable|import` as a user runs them: the
//! real binary, a temporary HOME and workspace, and the files it leaves behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        Env {
            _dir: dir,
            home,
            ws,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("TOOLGATE_STATE_DIR", self.home.join("state"))
            .env_remove("TOOLGATE_CONFIG_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .output()
            .expect("run toolgate")
    }

    /// Runs and expects success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs and expects a usage error; returns stderr.
    fn usage_error(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn user_file(&self) -> PathBuf {
        self.home.join(".config/toolgate/mcp.json")
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn add_then_get_round_trips_env_and_headers() {
    let env = Env::new();
    let added = env.ok(&[
        "mcp",
        "add",
        "gh",
        "-e",
        "GITHUB_TOKEN=ghp_123",
        "-e",
        "LOG=debug",
        "--",
        "npx",
        "-y",
        "@mcp/github",
        "--read-only",
    ]);
    assert!(
        added.contains("Added MCP server 'gh' (user scope)"),
        "{added}"
    );
    env.ok(&[
        "mcp",
        "add",
        "--transport",
        "http",
        "web",
        "http://127.0.0.1:9/mcp",
        "-H",
        "Authorization: Bearer abc",
        "-H",
        "X-Team: core",
    ]);
    let gh = env.ok(&["mcp", "get", "gh"]);
    let user = env.user_file().display().to_string();
    assert_eq!(
        gh,
        format!(
            "gh:\n  Scope: user ({user})\n  Type: stdio\n  Command: npx\n  Args: -y @mcp/github --read-only\n  Environment:\n    GITHUB_TOKEN=ghp_123\n    LOG=debug\n  Enabled: yes\n"
        )
    );
    let web = env.ok(&["mcp", "get", "web"]);
    assert_eq!(
        web,
        format!(
            "web:\n  Scope: user ({user})\n  Type: http\n  URL: http://127.0.0.1:9/mcp\n  Headers:\n    Authorization: Bearer abc\n    X-Team: core\n  Enabled: yes\n"
        )
    );
    // A --mcp-config file wins over both scopes, as in the loader; get says so.
    let flag = env.ws.join("flag.json");
    std::fs::write(&flag, r#"{"mcpServers": {"gh": {"command": "from-flag"}}}"#).unwrap();
    let flagged = env.ok(&["mcp", "get", "gh", "--mcp-config", flag.to_str().unwrap()]);
    assert!(
        flagged.starts_with(&format!(
            "gh:\n  Scope: --mcp-config ({})\n",
            flag.display()
        )) && flagged.contains("Command: from-flag")
            && flagged.contains(&format!("Overrides: user ({user})")),
        "{flagged}"
    );
    // The loader reads what was written: both are configured servers now.
    let status = env.ok(&["status"]);
    assert!(
        status.contains("gh           npx -y @mcp/github --read-only"),
        "{status}"
    );
    assert!(
        status.contains("web          http://127.0.0.1:9/mcp"),
        "{status}"
    );
    // Adding the same name again is refused and changes nothing.
    let before = read(&env.user_file());
    let again = env.usage_error(&["mcp", "add", "gh", "--", "other"]);
    assert!(again.contains("server 'gh' already exists in"), "{again}");
    assert_eq!(read(&env.user_file()), before);
}

#[test]
fn edits_keep_formatting_comments_order_and_write_enabled() {
    let env = Env::new();
    let project = env.ws.join(".mcp.json");
    let original = "{\n\t\"$schema\": \"x\",\n\t\"mcpServers\": {\n\t\t\"zeta\": {\"command\": \"z\", \"args\": [\"1\"]},\n\n\t\t\"alpha\": {\n\t\t\t\"command\": \"a\"\n\t\t}\n\t},\n\t\"extra\": [1, 2]\n}\n";
    std::fs::write(&project, original).unwrap();

    env.ok(&[
        "mcp",
        "add-json",
        "--scope",
        "project",
        "new",
        r#"{"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "1"}}"#,
    ]);
    env.ok(&["mcp", "disable", "zeta"]);
    let text = read(&project);
    assert_eq!(
        text,
        "{\n\t\"$schema\": \"x\",\n\t\"mcpServers\": {\n\t\t\"zeta\": {\n\t\t\t\"command\": \"z\",\n\t\t\t\"args\": [\"1\"],\n\t\t\t\"enabled\": false\n\t\t},\n\n\t\t\"alpha\": {\n\t\t\t\"command\": \"a\"\n\t\t},\n\t\t\"new\": {\n\t\t\t\"type\": \"http\",\n\t\t\t\"url\": \"http://127.0.0.1:9/mcp\",\n\t\t\t\"headers\": {\n\t\t\t\t\"X\": \"1\"\n\t\t\t}\n\t\t}\n\t},\n\t\"extra\": [1, 2]\n}\n"
    );
    assert!(env.ok(&["mcp", "get", "zeta"]).contains("  Enabled: no\n"));
    env.ok(&["mcp", "enable", "zeta"]);
    assert!(read(&project).contains("\t\t\t\"args\": [\"1\"],\n\t\t\t\"enabled\": true\n\t\t},"));
    assert!(env.ok(&["mcp", "get", "zeta"]).contains("  Enabled: yes\n"));

    // add-json replaces in place; remove takes the entry and nothing else.
    env.ok(&[
        "mcp",
        "add-json",
        "--scope",
        "project",
        "alpha",
        r#"{"command": "a2"}"#,
    ]);
    let removed = env.ok(&["mcp", "remove", "new"]);
    assert!(
        removed.contains("Removed MCP server 'new' (project scope)"),
        "{removed}"
    );
    assert_eq!(
        read(&project),
        "{\n\t\"$schema\": \"x\",\n\t\"mcpServers\": {\n\t\t\"zeta\": {\n\t\t\t\"command\": \"z\",\n\t\t\t\"args\": [\"1\"],\n\t\t\t\"enabled\": true\n\t\t},\n\n\t\t\"alpha\": {\n\t\t\t\"command\": \"a2\"\n\t\t}\n\t},\n\t\"extra\": [1, 2]\n}\n"
    );

    // A built-in server is disabled through a full copy in the user file.
    env.ok(&["mcp", "disable", "docs"]);
    let user: serde_json::Value = serde_json::from_str(&read(&env.user_file())).unwrap();
    assert_eq!(
        user["mcpServers"]["docs"],
        serde_json::json!({"type": "builtin", "server": "docs", "enabled": false})
    );
    let docs = env.ok(&["mcp", "get", "docs"]);
    assert!(
        docs.contains("Enabled: no") && docs.contains("Overrides: built-in"),
        "{docs}"
    );
    let builtin = env.usage_error(&["mcp", "remove", "deploy"]);
    assert!(
        builtin.contains("cannot be removed, only disabled"),
        "{builtin}"
    );
}

#[test]
fn errors_name_the_file_and_position_and_change_nothing() {
    let env = Env::new();
    let project = env.ws.join(".mcp.json");
    let broken = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n";
    std::fs::write(&project, broken).unwrap();
    let err = env.usage_error(&["mcp", "add", "--scope", "project", "b", "--", "y"]);
    assert!(
        err.contains(&format!("{}:3:", project.display())) && err.contains("invalid JSON"),
        "{err}"
    );
    assert!(err.contains("the file was not changed"), "{err}");
    assert_eq!(read(&project), broken);

    let err = env.usage_error(&["mcp", "add-json", "j", r#"{"command": }"#]);
    assert!(
        err.contains("the JSON argument:1:13: invalid JSON"),
        "{err}"
    );
    let err = env.usage_error(&["mcp", "add-json", "j", r#"{"args": ["x"]}"#]);
    assert!(
        err.contains("server 'j': expected a \"command\" string"),
        "{err}"
    );
    let err = env.usage_error(&["mcp", "add", "bad.name", "--", "x"]);
    assert!(err.contains("names must match [A-Za-z0-9_-]+"), "{err}");
    let err = env.usage_error(&["mcp", "add", "h", "http://127.0.0.1:9/mcp", "-e", "A=1"]);
    assert!(err.contains("-e/--env is for stdio servers"), "{err}");
    std::fs::write(&project, "{\"mcpServers\": {}}").unwrap();
    let err = env.usage_error(&["mcp", "remove", "nobody"]);
    assert!(
        err.contains("no MCP server 'nobody' is configured"),
        "{err}"
    );
    assert!(!env.user_file().exists(), "nothing was written");
}

#[test]
fn import_from_claude_codex_and_gemini() {
    let env = Env::new();
    let ws = std::fs::canonicalize(&env.ws).unwrap();
    // Claude Code: user-wide and this project's private ("local") entries.
    std::fs::write(
        env.home.join(".claude.json"),
        serde_json::json!({
            "numStartups": 3,
            "mcpServers": {
                "memory": {"command": "npx", "args": ["-y", "@mcp/memory"], "env": {"DIR": "/m"}},
                "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"}
            },
            "projects": {
                ws.display().to_string(): {
                    "mcpServers": {"linear": {"type": "http", "url": "http://127.0.0.1:9/linear", "headers": {"Authorization": "Bearer ${LINEAR}"}}}
                }
            }
        })
        .to_string(),
    )
    .unwrap();
    let out = env.ok(&["mcp", "import", "claude"]);
    assert!(out.contains("imported memory (from"), "{out}");
    assert!(
        out.contains("imported linear (from") && out.contains("(local, this project)"),
        "{out}"
    );
    assert!(
        out.contains("skipped legacy") && out.contains("HTTP+SSE"),
        "{out}"
    );
    assert!(out.contains("2 servers imported from Claude Code"), "{out}");
    let linear = env.ok(&["mcp", "get", "linear"]);
    assert!(
        linear.contains("    Authorization: Bearer ${LINEAR}\n"),
        "{linear}"
    );

    // Codex CLI: $CODEX_HOME/config.toml with comments.
    let codex_home = env.home.join("codex-elsewhere");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "# Codex settings\nmodel = \"o3\"\n\n# file tools\n[mcp_servers.files]\ncommand = \"npx\" # the runner\nargs = [\"-y\", \"@mcp/filesystem\", \"/data\"]\nenv = { \"LOG\" = \"1\" }\ntool_timeout_sec = 30\n\n[mcp_servers.notion]\nurl = \"http://127.0.0.1:9/notion\"\nbearer_token_env_var = \"NOTION_TOKEN\"\nenabled = false\n\n[mcp_servers.memory]\ncommand = \"other\"\n",
    )
    .unwrap();
    let codex = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["mcp", "import", "codex", "--scope", "project"])
        .current_dir(&env.ws)
        .env("HOME", &env.home)
        .env("CODEX_HOME", &codex_home)
        .env_remove("TOOLGATE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(codex.status.success(), "{codex:?}");
    let out = String::from_utf8_lossy(&codex.stdout);
    assert!(out.contains("3 servers imported from Codex CLI"), "{out}");
    let project: serde_json::Value =
        serde_json::from_str(&read(&env.ws.join(".mcp.json"))).unwrap();
    assert_eq!(
        project["mcpServers"]["files"],
        serde_json::json!({"command": "npx", "args": ["-y", "@mcp/filesystem", "/data"], "env": {"LOG": "1"}, "timeout": 30000})
    );
    assert_eq!(
        project["mcpServers"]["notion"],
        serde_json::json!({"type": "http", "url": "http://127.0.0.1:9/notion", "headers": {"Authorization": "Bearer ${NOTION_TOKEN}"}, "enabled": false})
    );
    // The project's `memory` wins over the user's in `get`, which names what it overrides.
    let memory = env.ok(&["mcp", "get", "memory"]);
    assert!(
        memory.contains("Command: other") && memory.contains("Overrides: user ("),
        "{memory}"
    );

    // gemini-cli: settings.json with comments, httpUrl, include/exclude lists.
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    std::fs::write(
        env.home.join(".gemini/settings.json"),
        "{\n  // my servers\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"search\": {\"httpUrl\": \"http://127.0.0.1:9/search\", \"headers\": {\"K\": \"v\"}, \"includeTools\": [\"find\"], \"timeout\": 5000},\n    \"py\": {\"command\": \"python\", \"args\": [\"-m\", \"srv\"], \"cwd\": \"./tools\", \"env\": {\"A\": \"$B\"}, \"excludeTools\": [\"rm\"], \"trust\": true},\n    \"files\": {\"command\": \"dup\"}\n  }\n}\n",
    )
    .unwrap();
    let out = env.ok(&["mcp", "import", "gemini"]);
    assert!(out.contains("3 servers imported from gemini-cli"), "{out}");
    assert!(out.contains("`trust: true` is not carried over"), "{out}");
    let user: serde_json::Value = serde_json::from_str(&read(&env.user_file())).unwrap();
    assert_eq!(
        user["mcpServers"]["search"],
        serde_json::json!({"type": "http", "url": "http://127.0.0.1:9/search", "headers": {"K": "v"}, "timeout": 5000, "includeTools": ["find"]})
    );
    assert_eq!(
        user["mcpServers"]["py"],
        serde_json::json!({"command": "python", "args": ["-m", "srv"], "env": {"A": "$B"}, "cwd": "./tools", "excludeTools": ["rm"]})
    );
    // `files` came from gemini into the user file, though the project has one too.
    assert_eq!(user["mcpServers"]["files"]["command"], "dup");
    // Importing again adds nothing and says why.
    let again = env.ok(&["mcp", "import", "gemini"]);
    assert!(
        again.contains("skipped search: already defined in"),
        "{again}"
    );
}

#[test]
fn import_reports_a_broken_source_with_file_and_line() {
    let env = Env::new();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    let config = env.home.join(".codex/config.toml");
    std::fs::write(
        &config,
        "# ok\n[mcp_servers.a]\ncommand = \"x\"\nargs = [\n",
    )
    .unwrap();
    let err = env.usage_error(&["mcp", "import", "codex"]);
    assert!(
        err.contains(&format!(
            "error: {}:4:9: invalid TOML: unclosed array",
            config.display()
        )) && err.contains("invalid TOML"),
        "{err}"
    );
    std::fs::write(
        env.home.join(".claude.json"),
        "{\"mcpServers\": {\n  \"a\": }",
    )
    .unwrap();
    let err = env.usage_error(&["mcp", "import", "claude"]);
    assert!(err.contains(".claude.json:2:8: invalid JSON"), "{err}");
    assert!(!env.user_file().exists());
    let none = env.ok(&["mcp", "import", "gemini"]);
    assert!(
        none.contains("no gemini-cli MCP servers found (looked in"),
        "{none}"
    );
}
