//! The redirect target of a sign-in: a one-shot HTTP listener on 127.0.0.1 (RFC 8252
//! §7.3) that takes the authorization response from the browser. It answers only
//! `/callback`, and only with the `state` this sign-in sent: anything else is refused.

use reqwest::Url;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path registered as redirect URI.
pub const CALLBACK_PATH: &str = "/callback";
/// A request head larger than this is not a browser coming back from a sign-in.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const READ_LIMIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    #[error("cannot listen for the sign-in redirect on {addr}: {reason}")]
    Bind { addr: String, reason: String },
    #[error(
        "the sign-in redirect carried a different `state` than this sign-in sent; refused (a stale browser tab, or someone else's authorization response)"
    )]
    StateMismatch,
    #[error("the authorization server refused the sign-in: {0}")]
    Denied(String),
    #[error("the sign-in redirect carried no authorization code")]
    NoCode,
    #[error("the sign-in listener failed: {0}")]
    Io(String),
}

/// What the browser brought back.
#[derive(Clone, PartialEq, Eq)]
pub struct Callback {
    pub code: String,
    pub state: String,
    /// RFC 9207 `iss`, checked by rmcp against the authorization server's issuer.
    pub issuer: Option<String>,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callback")
            .field("code", &"[redacted]")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

pub struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Loopback {
    /// Listens on 127.0.0.1: on `port` when the client was registered with a fixed one,
    /// else on a free port.
    pub async fn bind(port: Option<u16>) -> Result<Loopback, CallbackError> {
        let addr = format!("127.0.0.1:{}", port.unwrap_or(0));
        let listener = TcpListener::bind(&addr)
            .await
            .map_err(|e| CallbackError::Bind {
                addr: addr.clone(),
                reason: e.to_string(),
            })?;
        let local = listener.local_addr().map_err(|e| CallbackError::Bind {
            addr,
            reason: e.to_string(),
        })?;
        // A fixed port is one somebody registered, and registrations made for Claude Code
        // (whose `oauth.callbackPort` this is) name `localhost`; a free port is ours alone,
        // and RFC 8252 recommends the IP literal there.
        let host = if port.is_some() {
            "localhost"
        } else {
            "127.0.0.1"
        };
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://{host}:{}{CALLBACK_PATH}", local.port()),
        })
    }

    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the browser's redirect carrying `expected_state`. Other paths (a
    /// favicon) get a 404 and the wait goes on; a callback that does not fit ends it.
    pub async fn wait(self, expected_state: &str) -> Result<Callback, CallbackError> {
        loop {
            let (stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| CallbackError::Io(e.to_string()))?;
            let Some(outcome) = serve_one(stream, expected_state).await else {
                continue;
            };
            return outcome;
        }
    }
}

/// One connection: None when it was not the callback (the wait goes on).
async fn serve_one(
    mut stream: TcpStream,
    expected_state: &str,
) -> Option<Result<Callback, CallbackError>> {
    let head = match tokio::time::timeout(READ_LIMIT, read_head(&mut stream)).await {
        Ok(Some(head)) => head,
        _ => return None,
    };
    let Some(target) = request_target(&head) else {
        respond(&mut stream, 400, "This is toolgate's sign-in listener.").await;
        return None;
    };
    let Ok(url) = Url::parse(&format!("http://127.0.0.1{target}")) else {
        respond(&mut stream, 400, "This is toolgate's sign-in listener.").await;
        return None;
    };
    if url.path() != CALLBACK_PATH {
        respond(&mut stream, 404, "Not found.").await;
        return None;
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let outcome = if param("state").as_deref() != Some(expected_state) {
        Err(CallbackError::StateMismatch)
    } else if let Some(error) = param("error") {
        let description = param("error_description")
            .map(|d| format!(" ({})", crate::sanitize::for_terminal(&d)))
            .unwrap_or_default();
        Err(CallbackError::Denied(format!(
            "{}{description}",
            crate::sanitize::for_terminal(&error)
        )))
    } else {
        match param("code") {
            Some(code) if !code.is_empty() => Ok(Callback {
                code,
                state: expected_state.to_string(),
                issuer: param("iss"),
            }),
            _ => Err(CallbackError::NoCode),
        }
    };
    match &outcome {
        Ok(_) => {
            respond(
                &mut stream,
                200,
                "Signed in. You can close this tab and return to toolgate.",
            )
            .await
        }
        Err(e) => respond(&mut stream, 400, &format!("Sign-in failed: {e}")).await,
    }
    Some(outcome)
}

async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8(head).ok()
}

/// The target of `GET /callback?… HTTP/1.1`.
fn request_target(head: &str) -> Option<&str> {
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    let method = parts.next()?;
    let target = parts.next()?;
    (method == "GET" && target.starts_with('/')).then_some(target)
}

async fn respond(stream: &mut TcpStream, status: u16, message: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>toolgate</title></head>\
         <body><p>{}</p></body></html>",
        html_escape(message)
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(uri: &str, path: &str) -> (u16, String) {
        let authority = uri
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .replace("localhost", "127.0.0.1");
        let mut stream = TcpStream::connect(authority).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let status = answer[9..12].parse().unwrap();
        (status, answer)
    }

    #[tokio::test]
    async fn takes_the_callback_with_its_state_and_ignores_other_paths() {
        let loopback = Loopback::bind(None).await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        assert!(
            uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"),
            "{uri}"
        );
        let waiting = tokio::spawn(async move { loopback.wait("s-1").await });
        let (status, _) = get(&uri, "/favicon.ico").await;
        assert_eq!(status, 404);
        let (status, page) = get(&uri, "/callback?code=c%2B1&state=s-1&iss=https%3A%2F%2Fas").await;
        assert_eq!(status, 200);
        assert!(page.contains("Signed in"), "{page}");
        let callback = waiting.await.unwrap().unwrap();
        assert_eq!(callback.code, "c+1");
        assert_eq!(callback.issuer.as_deref(), Some("https://as"));
        assert!(
            !format!("{callback:?}").contains("c+1"),
            "codes stay out of logs"
        );
    }

    #[tokio::test]
    async fn refuses_a_foreign_state_and_reports_a_denial() {
        let loopback = Loopback::bind(None).await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let waiting = tokio::spawn(async move { loopback.wait("mine").await });
        let (status, page) = get(&uri, "/callback?code=c&state=theirs").await;
        assert_eq!(status, 400);
        assert!(page.contains("different `state`"), "{page}");
        assert_eq!(waiting.await.unwrap(), Err(CallbackError::StateMismatch));

        let loopback = Loopback::bind(None).await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let waiting = tokio::spawn(async move { loopback.wait("s").await });
        get(
            &uri,
            "/callback?error=access_denied&error_description=no%20thanks&state=s",
        )
        .await;
        assert_eq!(
            waiting.await.unwrap(),
            Err(CallbackError::Denied("access_denied (no thanks)".into()))
        );
    }

    #[tokio::test]
    async fn a_fixed_port_is_named_localhost_as_registered() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let loopback = Loopback::bind(Some(port)).await.unwrap();
        assert_eq!(
            loopback.redirect_uri(),
            format!("http://localhost:{port}/callback")
        );
        let taken = Loopback::bind(Some(port)).await.err().unwrap();
        assert!(taken.to_string().contains("cannot listen"), "{taken}");
    }
}
