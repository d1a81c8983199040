//! OAuth for HTTP MCP servers against a real authorization server and a protected MCP
//! server on 127.0.0.1 (support::oauth_servers): the real toolgate binary signs in with
//! `$BROWSER` set to a script that opens the page and follows its redirects, as a person's
//! browser would (tests/fixtures/browser.mjs).

use crate::support::fixture_server::fixture_file;
use crate::support::oauth_servers::{
    AsConfig, AuthServer, Misbehaviour, ResourceServer, RsConfig, Seen,
};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One person's machine: a workspace, a state folder (tokens) and a config file.
struct Machine {
    dir: tempfile::TempDir,
}

struct Run {
    stdout: String,
    stderr: String,
    code: i32,
    took: Duration,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {} after {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.took, self.stdout, self.stderr
        )
    }
}

fn browser() -> String {
    let script = fixture_file("browser.mjs");
    format!("node {}", script.display())
}

impl Machine {
    fn new() -> Machine {
        let machine = Machine {
            dir: tempfile::tempdir().unwrap(),
        };
        for sub in ["workspace", "state", "config"] {
            std::fs::create_dir_all(machine.dir.path().join(sub)).unwrap();
        }
        machine
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn token_file(&self) -> PathBuf {
        self.path("state/oauth/tokens.json")
    }

    /// Waits until the token stored for `remote` at `url` has run out by toolgate's own
    /// count (when it received the token, plus the lifetime the server gave), so the next
    /// command must renew it before use. Read from the token file, not guessed as a margin
    /// for how late the client got the token.
    async fn wait_until_the_client_counts_the_token_expired(&self, url: &str) {
        let file = toolgate::oauth::TokenFile::at(self.token_file());
        let expires_at = file
            .entry("remote", url)
            .unwrap()
            .and_then(|entry| entry.expires_at())
            .unwrap_or_else(|| {
                panic!(
                    "no stored token with a lifetime: {}",
                    std::fs::read_to_string(self.token_file()).unwrap_or_default()
                )
            });
        while chrono::Utc::now() <= expires_at {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `.mcp.json` with one HTTP server `remote` and its `oauth` object.
    fn configure(&self, url: &str, oauth: serde_json::Value) {
        let config = serde_json::json!({"mcpServers": {"remote": {
            "type": "http", "url": url, "oauth": oauth
        }}});
        std::fs::write(self.path("servers.json"), config.to_string()).unwrap();
    }

    async fn toolgate(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let started = Instant::now();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
        command
            .args(args)
            .arg("--workspace")
            .arg(self.path("workspace"))
            .arg("--mcp-config")
            .arg(self.path("servers.json"))
            .env("TOOLGATE_STATE_DIR", self.path("state"))
            .env("TOOLGATE_CONFIG_DIR", self.path("config"))
            .env("BROWSER", browser())
            .env("TOOLGATE_SIGN_IN_TIMEOUT_SECS", "20")
            .envs(env.iter().copied())
            .kill_on_drop(true);
        let output = tokio::time::timeout(Duration::from_secs(60), command.output())
            .await
            .expect("toolgate finished in bounded time")
            .unwrap();
        Run {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code().unwrap_or(-1),
            took: started.elapsed(),
        }
    }
}

fn line_of<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_call_list_logout_with_dynamic_registration() {
    let auth = AuthServer::start(AsConfig::default()).await;
    let rs = ResourceServer::start(
        RsConfig {
            scopes_supported: Some(vec!["docs:read".into()]),
            ..RsConfig::default()
        },
        &auth,
    )
    .await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));

    let login = machine.toolgate(&["mcp", "login", "remote"], &[]).await;
    assert_eq!(login.code, 0, "{login:?}");
    assert!(
        login.stdout.contains("remote: signed in (expires "),
        "{login:?}"
    );
    assert!(
        login.stdout.contains("remote: connected, 2 tools"),
        "{login:?}"
    );
    // The page is always shown, whether or not a browser opens.
    assert!(
        login
            .stderr
            .contains("To sign in to 'remote', open this page")
            && login.stderr.contains(&format!("{}/authorize?", auth.url)),
        "{login:?}"
    );

    // What the authorization server saw: registration asking for refresh tokens, an
    // authorization request with PKCE S256, the resource and the resource's scopes, and the
    // code exchange with the same resource, as a public client.
    let seen = auth.state.seen();
    assert!(
        seen.iter()
            .any(|s| matches!(s, Seen::Register { auth_method, grant_types }
            if auth_method == "none" && grant_types.contains(&"refresh_token".to_string()))),
        "{seen:?}"
    );
    let authorizations = auth.state.authorizations();
    assert_eq!(authorizations.len(), 1, "{seen:?}");
    let Seen::Authorize {
        scope,
        resource,
        challenge_method,
        ..
    } = &authorizations[0]
    else {
        unreachable!()
    };
    assert_eq!(scope.as_deref(), Some("docs:read"));
    assert_eq!(resource.as_deref(), Some(rs.url.as_str()));
    assert_eq!(challenge_method.as_deref(), Some("S256"));
    assert!(
        seen.contains(&Seen::CodeExchange {
            resource: Some(rs.url.clone()),
            client_auth: "none".into()
        }),
        "{seen:?}"
    );

    // Tokens live in the state folder, readable by the owner only.
    let file = machine.token_file();
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);

    // A later command uses the stored token: no second sign-in.
    let call = machine
        .toolgate(
            &["mcp", "call", "remote", "search", r#"{"query": "api key"}"#],
            &[],
        )
        .await;
    assert_eq!(call.code, 0, "{call:?}");
    assert!(call.stdout.to_lowercase().contains("key"), "{call:?}");
    assert_eq!(auth.state.authorizations().len(), 1);
    assert_eq!(
        rs.refused_tokens.load(std::sync::atomic::Ordering::SeqCst),
        0
    );

    let list = machine.toolgate(&["mcp", "list"], &[]).await;
    assert!(
        line_of(&list.stdout, "remote ").contains("ready"),
        "{list:?}"
    );
    assert!(
        list.stdout.contains("sign-in: signed in (expires "),
        "{list:?}"
    );

    let logout = machine.toolgate(&["mcp", "logout", "remote"], &[]).await;
    assert_eq!(logout.code, 0, "{logout:?}");
    assert!(logout.stdout.contains("remote: signed out"), "{logout:?}");
    let list = machine.toolgate(&["mcp", "list"], &[]).await;
    assert!(
        line_of(&list.stdout, "remote ")
            .contains("sign in needed: run `toolgate mcp login remote`"),
        "{list:?}"
    );
    assert!(list.stdout.contains("sign-in: sign in needed"), "{list:?}");
    assert_eq!(
        auth.state.authorizations().len(),
        1,
        "listing never signs in"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_refreshed_before_expiry_and_after_a_401_without_a_new_sign_in() {
    // rmcp renews a token once less than min(30 s, half its lifetime) is left.
    let lifetime = Duration::from_secs(4);
    let auth = AuthServer::start(AsConfig {
        token_lifetime: lifetime,
        ..AsConfig::default()
    })
    .await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));
    let login = machine.toolgate(&["mcp", "login", "remote"], &[]).await;
    assert_eq!(login.code, 0, "{login:?}");
    let after_login = rs.presented.lock().unwrap().len();
    let before = auth.state.refreshes();
    // Tokens issued from now on live an hour: the refreshed token cannot run short while
    // a slow machine starts the next command, so each refresh below has one cause.
    auth.state.set_token_lifetime(Duration::from_secs(3600));

    // The token runs out: the next command refreshes it before using it, so the server
    // never sees an expired token. Wait until the server says the signed-in token has
    // expired, and until the client counts it expired too.
    auth.state.wait_until_all_expired().await;
    machine
        .wait_until_the_client_counts_the_token_expired(&rs.url)
        .await;
    let call = machine
        .toolgate(&["mcp", "call", "remote", "get_version", "{}"], &[])
        .await;
    assert_eq!(call.code, 0, "{call:?}");
    assert_eq!(
        auth.state.refreshes(),
        before + 1,
        "{:?}",
        auth.state.seen()
    );
    assert_eq!(
        rs.refused_tokens.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request went out with an expired token"
    );
    assert!(
        auth.state.seen().contains(&Seen::Refresh {
            resource: Some(rs.url.clone())
        }),
        "the refresh names the resource too: {:?}",
        auth.state.seen()
    );
    assert!(rs.presented.lock().unwrap().len() > after_login);

    // The server forgets every token (revoked): a 401, one refresh, the request again.
    auth.state.revoke_access_tokens();
    let call = machine
        .toolgate(&["mcp", "call", "remote", "get_version", "{}"], &[])
        .await;
    assert_eq!(call.code, 0, "{call:?}");
    assert_eq!(auth.state.refreshes(), before + 2);
    assert_eq!(auth.state.authorizations().len(), 1, "no new sign-in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_refresh_shows_as_refresh_failed() {
    let lifetime = Duration::from_secs(3);
    let auth = AuthServer::start(AsConfig {
        token_lifetime: lifetime,
        misbehaviour: Misbehaviour::RejectRefresh,
        ..AsConfig::default()
    })
    .await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));
    let login = machine.toolgate(&["mcp", "login", "remote"], &[]).await;
    assert_eq!(login.code, 0, "{login:?}");
    let before = auth.state.refreshes();
    // Wait until the server says the token has expired, and until the client counts it
    // expired too (it received the token a moment after the server issued it).
    auth.state.wait_until_all_expired().await;
    machine
        .wait_until_the_client_counts_the_token_expired(&rs.url)
        .await;
    let list = machine.toolgate(&["mcp", "list"], &[]).await;
    assert!(
        list.stdout.contains(
            "sign-in: refresh failed: the authorization server rejected the refresh token"
        ),
        "{list:?}"
    );
    assert!(
        line_of(&list.stdout, "remote ").contains("sign in needed"),
        "{list:?}"
    );
    assert_eq!(
        auth.state.refreshes(),
        before + 1,
        "one refresh, no retry loop: {:?}",
        auth.state.seen()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_asks_for_the_union_of_scopes_and_never_loops() {
    let auth = AuthServer::start(AsConfig::default()).await;
    let rs = ResourceServer::start(
        RsConfig {
            challenge_scope: Some("docs:read".into()),
            call_scopes: vec!["docs:read".into(), "docs:write".into()],
            ..RsConfig::default()
        },
        &auth,
    )
    .await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));
    let call = machine
        .toolgate(
            &["mcp", "call", "remote", "search", r#"{"query": "rules"}"#],
            &[],
        )
        .await;
    assert_eq!(call.code, 0, "{call:?}");
    let scopes: Vec<Option<String>> = auth
        .state
        .authorizations()
        .into_iter()
        .map(|a| match a {
            Seen::Authorize { scope, .. } => scope,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        scopes,
        [
            Some("docs:read".to_string()),
            Some("docs:read docs:write".to_string())
        ],
        "scope from the 401 challenge first, then the union for the 403"
    );

    // A server that refuses whatever the token holds: one sign-in, then a clear failure.
    let auth = AuthServer::start(AsConfig::default()).await;
    let rs = ResourceServer::start(
        RsConfig {
            challenge_scope: Some("docs:admin".into()),
            call_scopes: vec!["docs:admin".into()],
            always_forbid_calls: true,
            ..RsConfig::default()
        },
        &auth,
    )
    .await;
    machine.configure(&rs.url, serde_json::json!({}));
    let call = machine
        .toolgate(&["mcp", "call", "remote", "get_version", "{}"], &[])
        .await;
    assert_eq!(call.code, 1, "{call:?}");
    assert!(
        call.stdout.contains(
            "the server refuses the token although it holds the scopes it asks for (docs:admin)"
        ),
        "{call:?}"
    );
    assert_eq!(
        auth.state.authorizations().len(),
        1,
        "{:?}",
        auth.state.seen()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preregistered_client_and_client_metadata_document() {
    // A confidential client registered out of band; the server takes client_secret_post.
    let auth = AuthServer::start(AsConfig {
        dynamic_registration: false,
        auth_methods: vec!["client_secret_post"],
        preregistered: Some(("tg-client".into(), Some("s3cret".into()))),
        ..AsConfig::default()
    })
    .await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    let machine = Machine::new();
    machine.configure(
        &rs.url,
        serde_json::json!({"clientId": "tg-client", "clientSecret": "${TG_SECRET}"}),
    );
    let login = machine
        .toolgate(&["mcp", "login", "remote"], &[("TG_SECRET", "s3cret")])
        .await;
    assert_eq!(login.code, 0, "{login:?}");
    let seen = auth.state.seen();
    assert!(
        !seen.iter().any(|s| matches!(s, Seen::Register { .. })),
        "{seen:?}"
    );
    assert!(
        seen.contains(&Seen::CodeExchange {
            resource: Some(rs.url.clone()),
            client_auth: "client_secret_post".into()
        }),
        "{seen:?}"
    );
    // The secret is not written next to the tokens' owner-only file in clear elsewhere:
    // the config holds a variable, the token file is 0600.
    assert!(
        !std::fs::read_to_string(machine.path("servers.json"))
            .unwrap()
            .contains("s3cret")
    );

    // A server that supports client ID metadata documents gets the document URL as client
    // ID, and no registration.
    let auth = AuthServer::start(AsConfig {
        metadata_documents: true,
        ..AsConfig::default()
    })
    .await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    machine.configure(
        &rs.url,
        serde_json::json!({"clientMetadataUrl": "https://toolgate.example/oauth/client.json"}),
    );
    let login = machine.toolgate(&["mcp", "login", "remote"], &[]).await;
    assert_eq!(login.code, 0, "{login:?}");
    let seen = auth.state.seen();
    assert!(
        !seen.iter().any(|s| matches!(s, Seen::Register { .. })),
        "{seen:?}"
    );
    assert!(
        matches!(&auth.state.authorizations()[0], Seen::Authorize { client_id, .. }
            if client_id == "https://toolgate.example/oauth/client.json"),
        "{seen:?}"
    );
}

/// Signs in against an authorization server that misbehaves; returns the run.
async fn login_against(config: AsConfig) -> (Run, Machine, AuthServer) {
    let auth = AuthServer::start(config).await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));
    let run = machine.toolgate(&["mcp", "login", "remote"], &[]).await;
    drop(rs);
    (run, machine, auth)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_authorization_server_ends_in_a_readable_failure() {
    let cases: Vec<(Misbehaviour, AsConfig, &[&str])> = vec![
        (
            Misbehaviour::GarbageMetadata,
            AsConfig::default(),
            &[
                "cannot find out how to sign in",
                "none published usable metadata",
            ],
        ),
        (
            Misbehaviour::MetadataRedirectLoop,
            AsConfig::default(),
            &["cannot find out how to sign in", "redirects"],
        ),
        (
            Misbehaviour::RefuseRegistration,
            AsConfig::default(),
            &["refused to register toolgate", "registration is closed"],
        ),
        (
            Misbehaviour::TokenForOtherResource,
            AsConfig::default(),
            &["issued a token for another resource (https://elsewhere.example/mcp"],
        ),
        (
            Misbehaviour::ForgedState,
            AsConfig::default(),
            &["different `state`", "refused"],
        ),
        (
            Misbehaviour::CodeForOtherRedirect,
            AsConfig::default(),
            &["did not issue a token", "another redirect_uri"],
        ),
        (
            Misbehaviour::None,
            AsConfig {
                dynamic_registration: false,
                ..AsConfig::default()
            },
            &[
                "offers no way for toolgate to get a client ID",
                "\"clientId\"",
            ],
        ),
    ];
    let runs = futures::future::join_all(cases.into_iter().map(
        |(misbehaviour, config, expect)| async move {
            let config = AsConfig {
                misbehaviour,
                ..config
            };
            let (run, machine, auth) = login_against(config).await;
            (misbehaviour, expect, run, machine, auth)
        },
    ))
    .await;
    for (misbehaviour, expect, run, machine, auth) in runs {
        assert_eq!(run.code, 1, "{misbehaviour:?}: {run:?}");
        let error = line_of(&run.stdout, "error:");
        for part in expect {
            assert!(
                error.contains(part),
                "{misbehaviour:?}: {part:?} not in {run:?}"
            );
        }
        // It ended on the fault, not by waiting out the sign-in limit (20 s here); no
        // wall-clock bound, which a loaded machine would break.
        assert!(
            !run.stdout.contains("nobody completed the sign-in"),
            "{misbehaviour:?}: {run:?}"
        );
        // Whatever went wrong, no usable token was kept.
        let kept = std::fs::read_to_string(machine.token_file()).unwrap_or_default();
        for token in auth.state.issued_tokens() {
            assert!(!kept.contains(&token), "{misbehaviour:?} kept {token}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_nobody_completes_ends_after_the_limit_and_showed_the_url() {
    let auth = AuthServer::start(AsConfig::default()).await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));
    let run = machine
        .toolgate(
            &["mcp", "login", "remote", "--no-browser"],
            &[("TOOLGATE_SIGN_IN_TIMEOUT_SECS", "2")],
        )
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("nobody completed the sign-in in the browser within 2 s"),
        "{run:?}"
    );
    assert!(run.stderr.contains("/authorize?"), "{run:?}");
    // The message names the configured 2 s, not the 20 s the other runs get: the limit that
    // ended it is the one given (a hang is caught by the harness's own bound).
    assert!(
        auth.state.authorizations().is_empty(),
        "--no-browser opened nothing"
    );
}

/// The token file never holds a token for another server, and nothing else does.
fn assert_no_token_in(dir: &Path, tokens: &[String], except: &Path) {
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        if !entry.file_type().is_file() || entry.path() == except {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned();
        for token in tokens {
            assert!(
                !text.contains(token.as_str()),
                "{} contains a token",
                entry.path().display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_stay_out_of_logs_and_sessions() {
    let auth = AuthServer::start(AsConfig::default()).await;
    let rs = ResourceServer::start(RsConfig::default(), &auth).await;
    let machine = Machine::new();
    machine.configure(&rs.url, serde_json::json!({}));
    let env = [("RUST_LOG", "trace"), ("TOOLGATE_LOG", "trace")];
    let login = machine.toolgate(&["mcp", "login", "remote"], &env).await;
    assert_eq!(login.code, 0, "{login:?}");
    let call = machine
        .toolgate(&["mcp", "call", "remote", "get_version", "{}"], &env)
        .await;
    assert_eq!(call.code, 0, "{call:?}");
    let tokens = auth.state.issued_tokens();
    assert!(!tokens.is_empty());
    for token in &tokens {
        assert!(!login.stdout.contains(token.as_str()) && !login.stderr.contains(token.as_str()));
        assert!(!call.stdout.contains(token.as_str()) && !call.stderr.contains(token.as_str()));
    }
    assert_no_token_in(machine.dir.path(), &tokens, &machine.token_file());
}

// ---- the console's path: the agent, its inbox requests and its session log ----

mod console_path {
    use super::*;
    use crate::support::replay_model::call;
    use futures::stream::{self, BoxStream, StreamExt};
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use tokio::sync::mpsc;
    use toolgate::agent::{self, AgentConfig};
    use toolgate::mcp::{HubOptions, McpHub, ServerStatus, SignInMode};
    use toolgate::model::{ModelError, ModelProvider, ModelRequest, StopReason, StreamEvent};
    use toolgate::oauth::{AuthStatus, Opener, TokenFile};
    use toolgate::protocol::questions::HostRequest;
    use toolgate::protocol::{AgentEvent, Event, UiCommand};
    use toolgate::settings::{ConfigSource, ServerConfig, ServerTransport};

    /// Replays fixed replies, one per model call.
    struct Replay(Mutex<VecDeque<Vec<StreamEvent>>>);

    impl ModelProvider for Replay {
        fn label(&self) -> String {
            "replay".into()
        }
        fn stream(
            &self,
            _request: ModelRequest,
        ) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
            let reply = self.0.lock().unwrap().pop_front().unwrap_or_default();
            stream::iter(reply.into_iter().map(Ok)).boxed()
        }
    }

    fn say(text: &str) -> Vec<StreamEvent> {
        vec![
            StreamEvent::TextDelta(text.into()),
            StreamEvent::Stop(StopReason::EndTurn),
        ]
    }

    fn server(name: &str, transport: ServerTransport) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport,
            source: ConfigSource::Embedded,
            call_timeout_ms: 20_000,
            sandbox: Default::default(),
            pool: Default::default(),
            always_load: false,
        }
    }

    async fn next(events: &mut mpsc::Receiver<AgentEvent>) -> AgentEvent {
        tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("an agent event within 30 s")
            .expect("the agent is running")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn signing_in_is_an_inbox_request_that_holds_up_no_other_server() {
        let auth = AuthServer::start(AsConfig::default()).await;
        let rs = ResourceServer::start(
            RsConfig {
                scopes_supported: Some(vec!["docs:read".into()]),
                ..RsConfig::default()
            },
            &auth,
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let configs = vec![
            server(
                "remote",
                ServerTransport::Http {
                    url: rs.url.clone(),
                    headers: Default::default(),
                    oauth: Default::default(),
                },
            ),
            server(
                "docs",
                ServerTransport::Builtin {
                    server: "docs".into(),
                    args: vec![],
                },
            ),
        ];
        let (hub_tx, hub_rx) = mpsc::unbounded_channel();
        let token_file = dir.path().join("state/oauth/tokens.json");
        let hub = McpHub::with_options(
            configs,
            hub_tx,
            HubOptions {
                workspace: dir.path().to_path_buf(),
                builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
                sign_in: SignInMode::Ask,
                opener: Opener::Command(browser()),
                token_file: Some(TokenFile::at(token_file.clone())),
                sign_in_timeout: Duration::from_secs(20),
                ..HubOptions::default()
            },
        );
        let model = Replay(Mutex::new(VecDeque::from(vec![
            call("c1", "connect_mcp", serde_json::json!({"name": "remote"})),
            call("c2", "connect_mcp", serde_json::json!({"name": "docs"})),
            say("remote waits for your sign-in"),
            call("c3", "mcp__remote__get_version", serde_json::json!({})),
            say("done"),
        ])));
        let mut config = AgentConfig::new(
            Box::new(model),
            hub,
            hub_rx,
            toolgate::policy::Policy::default(),
            dir.path().to_path_buf(),
        );
        let sessions = dir.path().join("sessions");
        config.sessions_dir = Some(sessions.clone());
        let mut handle = agent::spawn(config);
        let mut transcript = Vec::new();

        handle
            .commands
            .send(UiCommand::Submit("connect both".into()))
            .await
            .unwrap();
        // The turn runs to its end while the sign-in question stays unanswered: the agent
        // is told remote waits for a sign-in, and docs connects meanwhile. The question
        // comes from the hub on its own schedule, so it may reach the inbox after the turn
        // ended: wait for both (a missing question is caught by `next`'s bound).
        let mut question = None;
        let mut docs_ready = false;
        let mut turn_finished = false;
        while !(turn_finished && question.is_some()) {
            let event = next(&mut handle.events).await;
            transcript.push(format!("{event:?}"));
            match event {
                AgentEvent::Request(HostRequest::SignIn(request)) => question = Some(request),
                AgentEvent::Fact(Event::ToolFinished {
                    call_id, output, ..
                }) if call_id == "c2" => {
                    docs_ready = output.starts_with("Connected to MCP server 'docs'");
                }
                AgentEvent::Fact(Event::ToolFinished {
                    call_id, output, ..
                }) if call_id == "c1" => {
                    assert!(output.contains("sign in needed"), "{output}");
                }
                AgentEvent::Fact(Event::TurnFinished { .. }) => turn_finished = true,
                _ => {}
            }
        }
        assert!(docs_ready, "docs connected while remote waited");
        let question = question.expect("a sign-in request reached the inbox");
        assert_eq!(question.payload.server, "remote");
        assert_eq!(question.payload.authorization_server, auth.url);
        assert_eq!(question.payload.scopes, ["docs:read"]);
        assert!(
            auth.state.authorizations().is_empty(),
            "nothing before the answer"
        );

        // The person agrees: the browser signs in, and remote connects by itself.
        let open = HostRequest::SignIn(question).into_open();
        assert_eq!(open.choices()[0].label, "Sign in in the browser");
        assert!(open.choose(0, None).delivered);
        let (mut ready, mut signed_in) = (false, false);
        while !(ready && signed_in) {
            let event = next(&mut handle.events).await;
            transcript.push(format!("{event:?}"));
            match event {
                AgentEvent::Fact(Event::ServerStatus {
                    server,
                    status: ServerStatus::Ready { .. },
                }) if server == "remote" => ready = true,
                AgentEvent::Fact(Event::ServerAuth {
                    server,
                    status:
                        AuthStatus::SignedIn {
                            expires_at: Some(_),
                        },
                }) if server == "remote" => signed_in = true,
                _ => {}
            }
        }
        assert_eq!(auth.state.authorizations().len(), 1);

        // Its tools work, behind the permission gate like any MCP tool.
        handle
            .commands
            .send(UiCommand::Submit("use it".into()))
            .await
            .unwrap();
        loop {
            let event = next(&mut handle.events).await;
            transcript.push(format!("{event:?}"));
            match event {
                AgentEvent::Request(HostRequest::ToolCall(request)) => {
                    assert!(request.answer(toolgate::policy::PersonAnswer::AllowOnce));
                }
                AgentEvent::Fact(Event::ToolFinished {
                    call_id, outcome, ..
                }) if call_id == "c3" => {
                    assert_eq!(outcome, toolgate::protocol::ToolOutcome::Ok);
                }
                AgentEvent::Fact(Event::TurnFinished { .. }) => break,
                _ => {}
            }
        }
        handle.commands.send(UiCommand::Shutdown).await.unwrap();
        while let Some(event) = handle.events.recv().await {
            transcript.push(format!("{event:?}"));
        }

        // Nothing the person or the session log sees holds a token.
        let tokens = auth.state.issued_tokens();
        assert!(!tokens.is_empty());
        let transcript = transcript.join("\n");
        for token in &tokens {
            assert!(
                !transcript.contains(token.as_str()),
                "an event carried a token"
            );
        }
        assert!(std::fs::read_dir(&sessions).unwrap().next().is_some());
        assert_no_token_in(dir.path(), &tokens, &token_file);
        let stored = std::fs::read_to_string(&token_file).unwrap();
        assert!(tokens.iter().any(|t| stored.contains(t.as_str())));
    }
}

// ---- what the console shows: the sign-in request and the /mcp line ----

mod console_view {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use std::time::{Duration, Instant};
    use toolgate::mcp::ServerStatus;
    use toolgate::oauth::AuthStatus;
    use toolgate::protocol::AgentEvent;
    // crossterm's `Event` is the terminal's here.
    use toolgate::protocol::Event as Fact;
    use toolgate::protocol::View;
    use toolgate::protocol::questions::{Origin, Request, SignIn, SignInAnswer};
    use toolgate::tui::{App, ConsoleInfo, Msg, ServerInfo, update, view};

    fn screen(app: &App) -> String {
        let mut terminal = Terminal::new(TestBackend::new(110, 32)).unwrap();
        terminal.draw(|f| view(app, f)).unwrap();
        let buf = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    fn key(app: &mut App, code: KeyCode) {
        let _ = update(
            app,
            Msg::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
        );
    }

    #[test]
    fn the_sign_in_request_and_the_mcp_overlay_say_where_and_what() {
        let servers = vec![ServerInfo {
            name: "linear".into(),
            command_line: "https://mcp.linear.app/mcp".into(),
            containment: toolgate::protocol::Containment::Remote,
            enabled: true,
        }];
        let info = ConsoleInfo {
            workspace: "/w".into(),
            servers: servers.clone(),
            no_color: true,
            managed: Vec::new(),
            notify: Default::default(),
        };
        let mut app = App::new(info, Instant::now());
        let agent = |app: &mut App, event| {
            let _ = update(app, Msg::Agent(event));
        };
        agent(
            &mut app,
            AgentEvent::View(View::SessionStarted {
                session_id: "s".into(),
                model_label: "test".into(),
                workspace: "/w".into(),
                servers,
                sandbox_problem: None,
            }),
        );
        let (request, mut answer) = Request::new(
            Origin::Server {
                server: "linear".into(),
            },
            SignIn {
                server: "linear".into(),
                url: "https://mcp.linear.app/mcp".into(),
                authorization_server: "https://auth.linear.app".into(),
                scopes: vec!["read".into(), "write".into(), "offline_access".into()],
                step_up: false,
            },
            Instant::now(),
            None,
        );
        agent(&mut app, AgentEvent::Request(request.into()));
        let text = screen(&app);
        assert!(text.contains("Sign in to an MCP server?"), "{text}");
        assert!(
            text.contains("authorization server: https://auth.linear.app"),
            "{text}"
        );
        assert!(text.contains("scopes: read write offline_access"), "{text}");
        assert!(text.contains("[s] Sign in in the browser"), "{text}");
        // Keys right after a request appears are ignored (guard window); then `s` answers.
        app.now += Duration::from_secs(1);
        key(&mut app, KeyCode::Char('s'));
        assert_eq!(
            answer.try_recv().unwrap().into_answer(),
            SignInAnswer::SignIn
        );

        agent(
            &mut app,
            AgentEvent::Fact(Fact::ServerStatus {
                server: "linear".into(),
                status: ServerStatus::Ready {
                    tools: 3,
                    protocol: "2025-11-25".into(),
                },
            }),
        );
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ServerAuth {
                server: "linear".into(),
                status: AuthStatus::RefreshFailed {
                    reason: "the authorization server rejected the refresh token".into(),
                },
            }),
        );
        for c in "/mcp".chars() {
            key(&mut app, KeyCode::Char(c));
        }
        key(&mut app, KeyCode::Enter);
        let text = screen(&app);
        assert!(
            text.contains(
                "sign-in: refresh failed: the authorization server rejected the refresh token"
            ),
            "{text}"
        );
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ServerAuth {
                server: "linear".into(),
                status: AuthStatus::SignedIn {
                    expires_at: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
                },
            }),
        );
        assert!(screen(&app).contains("sign-in: signed in (expires "));
    }
}
