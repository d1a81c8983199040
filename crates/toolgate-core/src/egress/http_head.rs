//! Reading an HTTP/1.x request head on the proxy's listener and deciding what it asks
//! for: a `CONNECT` tunnel or one absolute-form request to forward, rewritten for the
//! host (origin form, no hop-by-hop or `Proxy-*` fields, `Connection: close`).

use std::io;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use super::{Host, Target};

/// Header fields in one head; more is treated as a head too large (431).
const MAX_HEADERS: usize = 128;

/// What the client asked for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Request {
    /// `CONNECT host:port`.
    Connect(Target),
    /// An absolute-form request; `head` is the head to send to the host.
    Forward {
        target: Target,
        head: Vec<u8>,
        body: Body,
    },
}

/// How the request's body is delimited, so that exactly one request reaches the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Body {
    None,
    Length(u64),
    Chunked,
}

/// An answer the proxy gives itself instead of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    BadRequest(String),
    HeadTooLarge,
    Timeout,
    Denied(String),
    BadGateway(String),
}

impl Refusal {
    fn bad(reason: impl Into<String>) -> Refusal {
        Refusal::BadRequest(reason.into())
    }

    /// The whole response: status, a header saying toolgate answered (and whether it
    /// refused by rule), and the reason as one line of text.
    pub(super) fn response(&self) -> Vec<u8> {
        let (status, kind, reason) = match self {
            Refusal::BadRequest(reason) => ("400 Bad Request", "error", reason.as_str()),
            Refusal::HeadTooLarge => (
                "431 Request Header Fields Too Large",
                "error",
                "the request head is too large",
            ),
            Refusal::Timeout => (
                "408 Request Timeout",
                "error",
                "no complete request in time",
            ),
            Refusal::Denied(reason) => ("403 Forbidden", "denied", reason.as_str()),
            Refusal::BadGateway(reason) => ("502 Bad Gateway", "error", reason.as_str()),
        };
        let one_line: String = reason
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let body = format!("toolgate: {one_line}\n");
        format!(
            "HTTP/1.1 {status}\r\nX-Toolgate: {kind}\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }
}

/// Why no head could be read.
#[derive(Debug)]
pub(super) enum HeadError {
    /// The client closed having sent nothing.
    Empty,
    /// The client stopped sending half-way.
    Truncated,
    Refused(Refusal),
    Io(io::Error),
}

/// Reads until a complete head; returns the bytes read and the head's length (what
/// follows it is the start of a body or of a tunnel's traffic).
pub(super) async fn read_head(
    client: &mut TcpStream,
    max: usize,
) -> Result<(Vec<u8>, usize), HeadError> {
    let mut buffer = Vec::with_capacity(4096);
    loop {
        if !buffer.is_empty() {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            match httparse::Request::new(&mut headers).parse(&buffer) {
                Ok(httparse::Status::Complete(length)) => return Ok((buffer, length)),
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => {
                    return Err(HeadError::Refused(Refusal::HeadTooLarge));
                }
                Err(error) => {
                    return Err(HeadError::Refused(Refusal::bad(format!(
                        "malformed request: {error}"
                    ))));
                }
            }
        }
        if buffer.len() >= max {
            return Err(HeadError::Refused(Refusal::HeadTooLarge));
        }
        let start = buffer.len();
        buffer.resize(start + (max - start).min(16 * 1024), 0);
        let n = client
            .read(&mut buffer[start..])
            .await
            .map_err(HeadError::Io)?;
        buffer.truncate(start + n);
        if n == 0 {
            return Err(if start == 0 {
                HeadError::Empty
            } else {
                HeadError::Truncated
            });
        }
    }
}

/// Reads a complete head (as returned by [`read_head`]).
pub(super) fn parse_request(head: &[u8]) -> Result<Request, Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(Refusal::bad("incomplete request head")),
        Err(error) => return Err(Refusal::bad(format!("malformed request: {error}"))),
    }
    let (Some(method), Some(path), Some(version)) = (request.method, request.path, request.version)
    else {
        return Err(Refusal::bad("incomplete request line"));
    };
    if method == "CONNECT" {
        return parse_authority(path, None).map(Request::Connect);
    }
    let (authority, origin_form) = split_absolute(path)?;
    let target = parse_authority(authority, Some(80))?;
    let body = framing(request.headers)?;
    let head = rewrite(method, &origin_form, version, authority, request.headers);
    Ok(Request::Forward { target, head, body })
}

/// `http://host[:port]/path?query` into the authority and `/path?query`.
fn split_absolute(target: &str) -> Result<(&str, String), Refusal> {
    let Some((scheme, rest)) = target.split_once("://") else {
        return Err(if target.starts_with('/') {
            Refusal::bad(format!(
                "{target} is not a proxy request: send http://host{target} or use CONNECT"
            ))
        } else {
            Refusal::bad(format!("{target} is not an http:// URL"))
        });
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(Refusal::bad(format!(
            "only http:// requests are forwarded (use CONNECT for {scheme})"
        )));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let tail = tail.split('#').next().unwrap_or("");
    let origin_form = match tail.as_bytes().first() {
        Some(b'/') => tail.to_string(),
        _ => format!("/{tail}"),
    };
    if authority.contains('@') {
        return Err(Refusal::bad("user information in a URL is not forwarded"));
    }
    Ok((authority, origin_form))
}

/// `host:port`, `[v6]:port`, or without the port when there is a default.
pub(super) fn parse_authority(
    authority: &str,
    default_port: Option<u16>,
) -> Result<Target, Refusal> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(Refusal::bad(format!("{authority}: unclosed [")));
        };
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(Refusal::bad(format!("{authority}: bad host"))),
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(Refusal::bad("missing host"));
    }
    let port = match (port, default_port) {
        (Some(text), _) => parse_port(text)
            .ok_or_else(|| Refusal::bad(format!("{authority}: bad port {text:?}")))?,
        (None, Some(port)) => port,
        (None, None) => return Err(Refusal::bad(format!("{authority}: missing port"))),
    };
    let host = Host::parse(host).map_err(|e| Refusal::bad(e.to_string()))?;
    Ok(Target { host, port })
}

fn parse_port(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u16>().ok().filter(|port| *port != 0)
}

fn framing(headers: &[httparse::Header<'_>]) -> Result<Body, Refusal> {
    let mut codings: Vec<String> = Vec::new();
    let mut length: Option<u64> = None;
    for header in headers {
        let value = std::str::from_utf8(header.value)
            .map_err(|_| Refusal::bad(format!("{} is not text", header.name)))?;
        if header.name.eq_ignore_ascii_case("transfer-encoding") {
            codings.extend(value.split(',').map(|c| c.trim().to_ascii_lowercase()));
        } else if header.name.eq_ignore_ascii_case("content-length") {
            for item in value.split(',') {
                let item = item.trim();
                let parsed = item
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| item.parse::<u64>().ok())
                    .flatten()
                    .ok_or_else(|| Refusal::bad(format!("bad Content-Length {value:?}")))?;
                if length.is_some_and(|known| known != parsed) {
                    return Err(Refusal::bad("conflicting Content-Length values"));
                }
                length = Some(parsed);
            }
        }
    }
    // Both at once is how requests are smuggled past a proxy: refuse rather than guess.
    match (codings.is_empty(), length) {
        (false, Some(_)) => Err(Refusal::bad(
            "both Content-Length and Transfer-Encoding are set",
        )),
        (false, None) if codings.last().map(String::as_str) == Some("chunked") => Ok(Body::Chunked),
        (false, None) => Err(Refusal::bad(
            "a Transfer-Encoding that does not end in chunked",
        )),
        (true, Some(length)) => Ok(Body::Length(length)),
        (true, None) => Ok(Body::None),
    }
}

/// Fields that concern only the client's connection to the proxy.
const HOP_BY_HOP: &[&str] = &["connection", "keep-alive", "te", "upgrade", "host"];

fn rewrite(
    method: &str,
    origin_form: &str,
    version: u8,
    authority: &str,
    headers: &[httparse::Header<'_>],
) -> Vec<u8> {
    let listed: Vec<String> = headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("connection"))
        .filter_map(|h| std::str::from_utf8(h.value).ok())
        .flat_map(|v| v.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .collect();
    let mut head = Vec::with_capacity(512);
    // The Host field names the admitted authority, whatever the client wrote there, so a
    // virtual host behind an admitted address cannot be reached under another name.
    head.extend_from_slice(
        format!("{method} {origin_form} HTTP/1.{version}\r\nHost: {authority}\r\n").as_bytes(),
    );
    for header in headers {
        let name = header.name.to_ascii_lowercase();
        // The body's framing is what this proxy forwards by: never drop it, even when the
        // Connection field lists it.
        let framing = name == "content-length" || name == "transfer-encoding";
        if !framing
            && (HOP_BY_HOP.contains(&name.as_str())
                || name.starts_with("proxy-")
                || listed.contains(&name))
        {
            continue;
        }
        head.extend_from_slice(header.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(header.value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    head
}
