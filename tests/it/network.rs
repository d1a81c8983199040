//! The network gate from the outside (issue 43): the shipped binary run headless against a
//! local model server, its bash calls and stdio servers reaching logging origin servers on
//! the loopback range (127.0.0.1, 127.0.0.2, 127.0.0.3) only through toolgate's proxy. Each
//! test checks what the far side received, and what the JSONL and the model were told.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fixture_server::fixture_file;
use crate::support::origin::{Origin, UdpSink};
use crate::support::window_api::{Say, WindowApi};

/// A model that plays `script` one answer per request, then says "done".
fn model(script: Vec<Say>) -> WindowApi {
    let mut script = script.into_iter();
    WindowApi::start(10 << 20, move |_| {
        script.next().unwrap_or_else(|| Say::Text("done".into()))
    })
}

fn bash(command: &str) -> Say {
    Say::Tool {
        name: "bash".into(),
        input: json!({ "command": command }),
    }
}

/// `toolgate -p go` in `ws` with `args`, its state and config under `home`.
fn run(home: &Path, ws: &Path, api: &WindowApi, args: &[&str], env: &[(&str, &Path)]) -> Output {
    std::fs::create_dir_all(home.join("config")).unwrap();
    let mut command = crate::support::headless_run::on_model_api(
        &api.url,
        "anthropic",
        &home.join("state"),
        &home.join("config"),
        ws,
    );
    command
        .args(["-p", "go", "--output-format", "jsonl"])
        .args(args)
        .env("TMPDIR", home)
        .env_remove(toolgate::settings::managed::MANAGED_CONFIG_VAR);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run toolgate")
}

/// The JSONL events of `kind` about `origin`'s address.
fn network_lines<'a>(events: &'a [Value], kind: &str, origin: &Origin) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| {
            e["type"] == kind
                && e["host"] == origin.addr.ip().to_string()
                && e["port"] == origin.addr.port()
        })
        .collect()
}

#[test]
fn an_allowed_host_is_reached_through_the_proxy_and_nothing_else_leaves() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let allowed = Origin::start("127.0.0.2");
    let unlisted = Origin::start("127.0.0.3");
    let (a, b) = (allowed.url(), unlisted.url());
    let command = format!(
        "curl -sS -m 5 {a}/via-http; curl -sS -m 5 -p {a}/via-connect; \
         curl -sS -m 5 -x \"$ALL_PROXY\" {a}/via-socks; curl -sS -m 5 {b}/unlisted; \
         curl -sS -m 5 --noproxy '*' {a}/direct; echo end"
    );
    let api = model(vec![bash(&command)]);
    let out = run(
        home.path(),
        ws.path(),
        &api,
        &["--allow", "Network(127.0.0.2)", "--allow", "Bash(curl:*)"],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    let result = &api.tool_results()[0];
    // HTTP (absolute form), CONNECT and SOCKS5 each reached the allowed host.
    let seen = allowed.seen();
    for path in ["/via-http", "/via-connect", "/via-socks"] {
        assert!(
            seen.iter()
                .any(|line| line == &format!("GET {path} HTTP/1.1")),
            "{path} missing: {seen:?}\n{result}"
        );
    }
    assert!(
        result.contains(&format!("hello from {}", allowed.addr)),
        "{result}"
    );
    // The unlisted host (headless: a question is a denial) and the direct socket got nothing.
    assert!(!seen.iter().any(|l| l.contains("/direct")), "{seen:?}");
    assert_eq!(unlisted.seen(), Vec::<String>::new(), "{result}");
    // The card's line lists the hosts, and the model read why one was refused.
    assert!(
        result.contains(&format!("{} allowed (3 connections", allowed.addr)),
        "{result}"
    );
    assert!(
        result.contains(&format!("{} denied", unlisted.addr)),
        "{result}"
    );
    // The traffic on the card is counted once the connections have closed.
    assert!(!result.contains("0 B received"), "{result}");
    let events = crate::support::jsonl(&out);
    let decided = network_lines(&events, "network_decided", &allowed);
    assert_eq!(decided.len(), 3, "{decided:#?}");
    assert!(decided.iter().all(|e| e["decision"] == "allow"
        && e["decider"]["rule"] == "Network(127.0.0.2)"
        && e["client"]["kind"] == "bash"));
    let refused = network_lines(&events, "network_decided", &unlisted);
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(refused[0]["decision"], "deny");
    assert!(
        refused[0]["why"]
            .as_str()
            .unwrap_or_default()
            .contains("--allow 'Network(127.0.0.3)'"),
        "{:#?}",
        refused[0]
    );
    let closed = network_lines(&events, "network_closed", &allowed);
    assert_eq!(closed.len(), 3, "{events:#?}");
    assert!(
        closed
            .iter()
            .all(|e| e["bytes_received"].as_u64().unwrap_or(0) > 0)
    );
}

#[test]
fn a_socket_that_ignores_the_proxy_and_a_udp_datagram_reach_nothing() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let local = Origin::start("127.0.0.1");
    let udp = UdpSink::start();
    let probe = format!(
        "import socket\n\
         try:\n    socket.create_connection(('127.0.0.1', {tcp}), timeout=3); print('tcp connected')\n\
         except OSError as e:\n    print('tcp refused:', e)\n\
         try:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', ('127.0.0.1', {udp})); print('udp sent')\n\
         except OSError as e:\n    print('udp refused:', e)\n",
        tcp = local.addr.port(),
        udp = udp.port
    );
    std::fs::write(ws.path().join("probe.py"), probe).unwrap();
    let api = model(vec![bash("python3 probe.py")]);
    let out = run(
        home.path(),
        ws.path(),
        &api,
        &[
            "--allow",
            "Network(127.0.0.1)",
            "--allow",
            "Bash(python3:*)",
        ],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    let result = &api.tool_results()[0];
    assert!(result.contains("tcp refused"), "{result}");
    assert!(result.contains("udp refused"), "{result}");
    assert_eq!(local.seen(), Vec::<String>::new());
    assert_eq!(udp.received(Duration::from_millis(500)), None);
}

#[test]
fn a_managed_deny_beats_a_user_allow() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let origin = Origin::start("127.0.0.2");
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/config.toml"),
        "[permissions]\nallow = [\"Network(127.0.0.2)\", \"Bash(curl:*)\"]\n",
    )
    .unwrap();
    let managed = home.path().join("managed.toml");
    std::fs::write(
        &managed,
        "[permissions]\ndeny = [\"Network(*.internal)\", \"Network(127.0.0.2)\"]\n",
    )
    .unwrap();
    let api = model(vec![bash(&format!(
        "curl -sS -m 5 {}/x; echo end",
        origin.url()
    ))]);
    let out = run(
        home.path(),
        ws.path(),
        &api,
        &[],
        &[(toolgate::settings::managed::MANAGED_CONFIG_VAR, &managed)],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(origin.seen(), Vec::<String>::new());
    let events = crate::support::jsonl(&out);
    let decided = network_lines(&events, "network_decided", &origin);
    assert_eq!(decided.len(), 1, "{events:#?}");
    assert_eq!(decided[0]["decision"], "deny");
    let source = &decided[0]["decider"]["source"];
    assert_eq!(source["source"], "managed", "{:#?}", decided[0]);
    assert_eq!(source["path"], managed.display().to_string());
}

#[test]
fn a_stdio_server_with_a_host_list_reaches_only_those_hosts() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let listed = Origin::start("127.0.0.2");
    let other = Origin::start("127.0.0.3");
    let mcp = json!({"mcpServers": {"fix": {
        "command": "python3",
        "args": [fixture_file("fixture_server.py").display().to_string()],
        // No "sandbox" of its own: a host list confines the server all the same.
        "network": [listed.addr.ip().to_string()],
        "env": {"FIXTURE_TOOLS": "[\"fetch\"]"},
    }}});
    let config = home.path().join("mcp.json");
    std::fs::write(&config, mcp.to_string()).unwrap();
    let fetch = |url: String| Say::Tool {
        name: "mcp__fix__fetch".into(),
        input: json!({ "url": url }),
    };
    let api = model(vec![
        Say::Tool {
            name: "connect_mcp".into(),
            input: json!({"name": "fix"}),
        },
        fetch(format!("{}/listed", listed.url())),
        fetch(format!("{}/other", other.url())),
    ]);
    let out = run(
        home.path(),
        ws.path(),
        &api,
        &[
            "--mcp-config",
            &config.display().to_string(),
            "--allow",
            "mcp__fix__fetch",
            "--allow",
            "connect_mcp(fix)",
            // A user rule does not widen a server's own list.
            "--allow",
            "Network(127.0.0.3)",
        ],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    let results = api.tool_results();
    assert_eq!(
        listed.seen(),
        vec!["GET /listed HTTP/1.1".to_string()],
        "{results:#?}"
    );
    assert_eq!(other.seen(), Vec::<String>::new(), "{results:#?}");
    let events = crate::support::jsonl(&out);
    let refused = network_lines(&events, "network_decided", &other);
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(refused[0]["client"]["server"], "fix");
    assert!(
        refused[0]["why"]
            .as_str()
            .unwrap_or_default()
            .contains("not in server 'fix''s \"network\" list")
    );
}

/// A console's home whose user config allows `curl` commands (so only the network gate
/// asks), its workspace, and an origin server on 127.0.0.2.
fn curl_console_home() -> (tempfile::TempDir, tempfile::TempDir, Origin) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/config.toml"),
        "[permissions]\nallow = [\"Bash(curl:*)\"]\n",
    )
    .unwrap();
    (home, ws, Origin::start("127.0.0.2"))
}

/// The console: the first connection to a new host is a question naming host, command and
/// call; "allow once" lets exactly that connection through, and the command's second
/// connection to the same host asks again (denied here): the host received one request.
#[test]
fn a_console_question_approved_once_lets_exactly_one_connection_through() {
    use crate::support::pty::{self, quit, scripted_console};
    let (home, ws, origin) = curl_console_home();
    let url = origin.url();
    let steps = json!([
        {"id": "go", "user": "(?i)^fetch", "say": "Fetching twice.",
         "tools": [{"name": "bash", "input": {"command":
            format!("curl -sS -m 30 {url}/one; echo; curl -sS -m 30 {url}/two; echo end")}}]},
        {"id": "done", "after": "go", "say": "Finished."}
    ]);
    let cmd = scripted_console(home.path(), ws.path(), steps);
    let (mut child, screen, mut keys) = pty::spawn(cmd, 40, 140);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "fetch");
    let target = origin.addr.to_string();
    let question = |t: &str| {
        t.contains("Network access")
            && t.contains(&format!("wants to connect to {target}"))
            && t.contains("curl -sS -m 30")
    };
    screen.wait_for("the network question", question);
    screen.wait_modal_armed("the network question to take keys");
    keys.press(b"y");
    screen.wait_text(&format!("{target} allowed (you allowed it once)"));
    screen.wait_for("the second network question", question);
    screen.wait_modal_armed("the second network question to take keys");
    keys.press(b"n");
    screen.wait_text("Finished.");
    assert_eq!(origin.seen(), vec!["GET /one HTTP/1.1".to_string()]);
    // The card's last line lists the host with one connection allowed and one refused
    // (Ctrl+O expands the card).
    keys.press(b"\x0f");
    screen.wait_for("the hosts on the bash card", |t| {
        t.contains(&format!("{target} allowed (1 connection"))
    });
    quit(&screen, &mut keys, &mut child);
}

/// A malformed network rule refuses the start, in an allow list too, naming the file, the
/// line and the column of the host.
#[test]
fn a_malformed_network_rule_refuses_the_start_naming_where() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    let config = home.path().join("config/config.toml");
    std::fs::write(
        &config,
        "[permissions]\nallow = [\"Network(registry.npmjs.org)\", \"Network(ex ample.com)\"]\n",
    )
    .unwrap();
    let api = model(vec![bash("echo should not run")]);
    let out = run(home.path(), ws.path(), &api, &[], &[]);
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let place = format!("{}:2:", config.display());
    assert!(stderr.contains(&place), "{stderr}");
    assert!(stderr.contains("ex ample.com"), "{stderr}");
    assert!(
        api.seen().is_empty(),
        "the model was asked: {:?}",
        api.seen().len()
    );
}

/// "This host for the session" lets every later connection to the host through without a
/// question; `/permissions` lists the grant, `x` revokes it, and the next connection asks
/// again.
#[test]
fn a_session_grant_for_a_host_is_listed_in_permissions_and_revocable() {
    use crate::support::pty::{self, quit, scripted_console};
    let (home, ws, origin) = curl_console_home();
    let url = origin.url();
    let twice = format!("curl -sS -m 30 {url}/a; echo; curl -sS -m 30 {url}/b; echo end");
    let once = format!("curl -sS -m 30 {url}/c; echo end");
    let steps = json!([
        {"id": "first", "user": "(?i)^first", "say": "Fetching twice.",
         "tools": [{"name": "bash", "input": {"command": twice}}]},
        {"id": "first_done", "after": "first", "say": "First done."},
        {"id": "again", "user": "(?i)^again", "say": "Fetching again.",
         "tools": [{"name": "bash", "input": {"command": once}}]},
        {"id": "again_done", "after": "again", "say": "Again done."}
    ]);
    let cmd = scripted_console(home.path(), ws.path(), steps);
    let (mut child, screen, mut keys) = pty::spawn(cmd, 40, 140);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "first");
    let target = origin.addr.to_string();
    screen.wait_for("the network question", |t| {
        t.contains("Network access") && t.contains(&format!("host: {target}"))
    });
    screen.wait_modal_armed("the network question to take keys");
    keys.press(b"a");
    screen.wait_text("First done.");
    assert_eq!(origin.seen(), ["GET /a HTTP/1.1", "GET /b HTTP/1.1"]);
    keys.enter_line(&screen, "/permissions");
    screen.wait_for("the host's grant in /permissions", |t| {
        t.contains("Session grants (this session only)") && t.contains("Network(127.0.0.2)")
    });
    keys.press(b"x");
    screen.wait_text("revoked the session grant for Network(127.0.0.2)");
    keys.press(b"\x1b");
    screen.wait_for("the overlay to close", |t| {
        !t.contains("Session grants (this")
    });
    keys.enter_line(&screen, "again");
    screen.wait_for("the question again after the revoke", |t| {
        t.contains("Network access") && t.contains("/c; echo end")
    });
    screen.wait_modal_armed("the second question to take keys");
    keys.press(b"n");
    screen.wait_text("Again done.");
    assert_eq!(origin.seen().len(), 2, "{:?}", origin.seen());
    quit(&screen, &mut keys, &mut child);
}
