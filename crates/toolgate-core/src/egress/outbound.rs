//! The way out: ask the admission, then (and only then) connect to the host, and report
//! how the connection went exactly once, whatever ends it (the host, the client, an error
//! or the proxy being stopped).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;

use super::{Admission, Admit, Host, Target, Traffic, Via};

/// Calls [`Admission::closed`] when dropped, so an admitted connection is reported once
/// even when its task is cancelled half-way through the relay.
pub(super) struct Report<'a> {
    admission: &'a dyn Admission,
    target: &'a Target,
    connected: bool,
    pub(super) traffic: Traffic,
}

impl Drop for Report<'_> {
    fn drop(&mut self) {
        self.admission
            .closed(self.target, self.connected, self.traffic);
    }
}

/// Why the connection out failed; says which SOCKS reply and which 502 text fits.
#[derive(Debug, thiserror::Error)]
pub(super) enum ConnectError {
    #[error("cannot resolve {0}: {1}")]
    Resolve(String, io::Error),
    #[error("{0} has no address")]
    NoAddress(String),
    #[error("{0} refused the connection")]
    Refused(String),
    #[error("{0} is unreachable: {1}")]
    HostUnreachable(String, io::Error),
    #[error("the network of {0} is unreachable: {1}")]
    NetworkUnreachable(String, io::Error),
    #[error("connecting to {0} timed out")]
    TimedOut(String),
    #[error("cannot connect to {0}: {1}")]
    Other(String, io::Error),
}

impl ConnectError {
    fn from_io(target: &Target, error: io::Error) -> ConnectError {
        let name = target.to_string();
        match error.kind() {
            io::ErrorKind::ConnectionRefused => ConnectError::Refused(name),
            io::ErrorKind::HostUnreachable => ConnectError::HostUnreachable(name, error),
            io::ErrorKind::NetworkUnreachable => ConnectError::NetworkUnreachable(name, error),
            io::ErrorKind::TimedOut => ConnectError::TimedOut(name),
            _ => ConnectError::Other(name, error),
        }
    }

    /// The SOCKS5 reply code (RFC 1928 section 6).
    pub(super) fn socks_reply(&self) -> u8 {
        match self {
            ConnectError::NetworkUnreachable(..) => 0x03,
            ConnectError::Resolve(..)
            | ConnectError::NoAddress(_)
            | ConnectError::HostUnreachable(..)
            | ConnectError::TimedOut(_) => 0x04,
            ConnectError::Refused(_) => 0x05,
            ConnectError::Other(..) => 0x01,
        }
    }
}

/// What asking and connecting came to.
pub(super) enum Opened<'a> {
    /// The admission refused; nothing left the machine and nothing is reported.
    Denied(String),
    /// The client hung up while the admission waited (a person had not answered): the
    /// admission's future was dropped, which withdraws its question; nothing is reported.
    Gone,
    /// Admitted but the host could not be reached; reported (not connected) on drop.
    Failed(Report<'a>, ConnectError),
    /// Admitted and connected; reported with its traffic on drop.
    Connected(Report<'a>, TcpStream),
}

/// Asks `admission` about `target` (this may wait for a person) and connects only if it
/// allows. A rule on a name covers whatever that name resolves to here: the name the
/// client gave is what was admitted, and it is resolved once, after the admission. A
/// client that hangs up while it waits takes its question with it.
pub(super) async fn open<'a>(
    client: &TcpStream,
    admission: &'a dyn Admission,
    target: &'a Target,
    via: Via,
    connect_timeout: Duration,
) -> Opened<'a> {
    let admitted = tokio::select! {
        // An admission that is ready at once (a rule decided) wins over a client that
        // already half-closed: only a wait is cut short.
        biased;
        admitted = admission.admit(target, via) => admitted,
        () = hung_up(client) => return Opened::Gone,
    };
    if let Admit::Deny(reason) = admitted {
        return Opened::Denied(reason);
    }
    let mut report = Report {
        admission,
        target,
        connected: false,
        traffic: Traffic::default(),
    };
    let connecting = connect(target);
    let result = match tokio::time::timeout(connect_timeout, connecting).await {
        Ok(result) => result,
        Err(_) => Err(ConnectError::TimedOut(target.to_string())),
    };
    match result {
        Ok(stream) => {
            // Small requests and answers must not wait for Nagle's timer.
            let _ = stream.set_nodelay(true);
            report.connected = true;
            Opened::Connected(report, stream)
        }
        Err(error) => Opened::Failed(report, error),
    }
}

/// Resolves when the client's side ends (or fails) before it sends anything more. A client
/// that sends more (the rest of a body, a TLS hello ahead of the tunnel's answer) is still
/// there: then this never resolves, so the wait does not spin on readable data.
async fn hung_up(client: &TcpStream) {
    let mut byte = [0u8; 1];
    match client.peek(&mut byte).await {
        Ok(0) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

async fn connect(target: &Target) -> Result<TcpStream, ConnectError> {
    let addresses: Vec<SocketAddr> = match &target.host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, target.port)],
        Host::Name(name) => tokio::net::lookup_host((name.as_str(), target.port))
            .await
            .map_err(|e| ConnectError::Resolve(name.clone(), e))?
            .collect(),
    };
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(match last {
        Some(error) => ConnectError::from_io(target, error),
        None => ConnectError::NoAddress(target.to_string()),
    })
}
