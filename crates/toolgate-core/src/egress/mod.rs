//! The network gate's proxy: what a sandboxed process may reach (issue 43, decision 0099).
//!
//! A confined process with `network = "proxy"` lives in a network namespace of its own
//! that holds only loopback; the one thing listening there is a TCP listener the sandbox
//! made in that namespace and handed to toolgate (see `crate::sandbox`). toolgate serves
//! it here: HTTP absolute-form requests, `CONNECT` tunnels and SOCKS5, each connection
//! admitted or refused by an [`Admission`] before a byte leaves the machine.
//!
//! This room knows nothing of rules or questions: the gate (`crate::gate::network`)
//! implements [`Admission`] for one origin (a bash call, a server, a hook) and decides.
//!
//! [`serve`] runs the proxy on such a listener until its token is cancelled (decision
//! 0100): every connection on its own task, admitted before anything connects out,
//! reported once through [`Admission::closed`]. A name is admitted as the client gave it
//! and resolved by toolgate afterwards, so a rule on a name covers whatever it resolves to.

mod chunked;
mod host;
mod http;
mod http_head;
mod limits;
mod outbound;
mod proxy;
mod relay;
mod socks;
mod target;
#[cfg(test)]
mod tests;

pub use host::{ClientHosts, ProxyHost, ProxyRun, Reached, ReachedHosts};
pub use limits::Limits;
pub use proxy::{serve, serve_with};
pub use target::{Host, HostError, Target};

use std::future::Future;
use std::pin::Pin;

/// How the client asked for the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `GET http://host/path HTTP/1.1` (absolute form).
    Http,
    /// `CONNECT host:port HTTP/1.1`: a tunnel, usually TLS.
    Connect,
    /// SOCKS5 `CONNECT`.
    Socks5,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Http => "http",
            Via::Connect => "connect",
            Via::Socks5 => "socks5",
        }
    }
}

/// The answer for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    Allow,
    /// Refused; the reason goes back to the client (an HTTP 403 body, or the log for SOCKS).
    Deny(String),
}

/// How one connection went, reported when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Traffic {
    /// Bytes from the sandboxed client to the host.
    pub sent: u64,
    /// Bytes from the host back to the client.
    pub received: u64,
}

/// Decides the connections of one origin. Implemented by the gate; the proxy only asks.
pub trait Admission: Send + Sync + 'static {
    /// Whether `target` may be reached. May wait (a question to the person); the client's
    /// connection waits with it.
    fn admit(&self, target: &Target, via: Via) -> Pin<Box<dyn Future<Output = Admit> + Send + '_>>;

    /// An admitted connection ended (or failed to connect: `connected` false).
    fn closed(&self, target: &Target, connected: bool, traffic: Traffic);
}
