//! SOCKS5 (RFC 1928) for clients that speak only that: no authentication, `CONNECT`
//! only, IPv4, IPv6 and domain-name destinations. A refusal by rule is reply 0x02
//! ("connection not allowed by ruleset"); the reason stays in toolgate's log.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::Limits;
use super::outbound::{Opened, open};
use super::relay;
use super::{Admission, Host, Target, Via};

const VERSION: u8 = 0x05;
const NO_AUTHENTICATION: u8 = 0x00;
const NO_ACCEPTABLE_METHOD: u8 = 0xFF;
const CONNECT: u8 = 0x01;

/// Reply codes (RFC 1928 section 6) this proxy gives itself.
const GENERAL_FAILURE: u8 = 0x01;
const NOT_ALLOWED: u8 = 0x02;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 0x08;

#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("SOCKS version {0} instead of 5")]
    Version(u8),
    #[error("the client offers no method without authentication")]
    NoAcceptableMethod,
    #[error("SOCKS command {0} is not supported (CONNECT only)")]
    Command(u8),
    #[error("SOCKS address type {0} is not supported")]
    AddressType(u8),
    #[error("bad destination: {0}")]
    Destination(String),
}

impl HandshakeError {
    /// The reply a client still waiting for one gets.
    fn reply(&self) -> Option<u8> {
        match self {
            HandshakeError::Io(_)
            | HandshakeError::Version(_)
            | HandshakeError::NoAcceptableMethod => None,
            HandshakeError::Command(_) => Some(COMMAND_NOT_SUPPORTED),
            HandshakeError::AddressType(_) => Some(ADDRESS_TYPE_NOT_SUPPORTED),
            HandshakeError::Destination(_) => Some(GENERAL_FAILURE),
        }
    }
}

pub(super) async fn serve(mut client: TcpStream, admission: &dyn Admission, limits: &Limits) {
    let target = match tokio::time::timeout(limits.head_timeout, handshake(&mut client)).await {
        Ok(Ok(target)) => target,
        Ok(Err(error)) => {
            tracing::debug!(%error, "egress SOCKS5 handshake refused");
            if let Some(code) = error.reply() {
                let _ = client.write_all(&reply(code, None)).await;
            }
            return;
        }
        Err(_) => return,
    };
    match open(
        &client,
        admission,
        &target,
        Via::Socks5,
        limits.connect_timeout,
    )
    .await
    {
        Opened::Gone => tracing::debug!(%target, "egress SOCKS5 client left while asked"),
        Opened::Denied(reason) => {
            tracing::debug!(%target, %reason, "egress SOCKS5 connection denied");
            let _ = client.write_all(&reply(NOT_ALLOWED, None)).await;
        }
        Opened::Failed(report, error) => {
            tracing::debug!(%target, %error, "egress SOCKS5 connection failed");
            let _ = client.write_all(&reply(error.socks_reply(), None)).await;
            drop(report);
        }
        Opened::Connected(mut report, mut host) => {
            let bound = host.local_addr().ok();
            if client.write_all(&reply(0x00, bound)).await.is_ok() {
                let moved = relay::tunnel(&mut client, &mut host, &[], &mut report.traffic);
                if let Err(error) = moved.await {
                    tracing::debug!(%target, %error, "egress SOCKS5 tunnel ended with an error");
                }
            }
        }
    }
}

/// Method negotiation and the request; answers the negotiation itself.
async fn handshake(client: &mut TcpStream) -> Result<Target, HandshakeError> {
    let [version, methods] = read_array::<2>(client).await?;
    if version != VERSION {
        return Err(HandshakeError::Version(version));
    }
    let mut offered = vec![0u8; usize::from(methods)];
    client.read_exact(&mut offered).await?;
    if !offered.contains(&NO_AUTHENTICATION) {
        client.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return Err(HandshakeError::NoAcceptableMethod);
    }
    client.write_all(&[VERSION, NO_AUTHENTICATION]).await?;

    let [version, command, _reserved, address_type] = read_array::<4>(client).await?;
    if version != VERSION {
        return Err(HandshakeError::Version(version));
    }
    let host = match address_type {
        0x01 => Host::Ip(IpAddr::V4(Ipv4Addr::from(read_array::<4>(client).await?))),
        0x04 => Host::Ip(IpAddr::V6(Ipv6Addr::from(read_array::<16>(client).await?))),
        0x03 => {
            let [length] = read_array::<1>(client).await?;
            let mut name = vec![0u8; usize::from(length)];
            client.read_exact(&mut name).await?;
            let name = String::from_utf8(name)
                .map_err(|_| HandshakeError::Destination("a name that is not text".into()))?;
            Host::parse(&name).map_err(|e| HandshakeError::Destination(e.to_string()))?
        }
        other => return Err(HandshakeError::AddressType(other)),
    };
    let port = u16::from_be_bytes(read_array::<2>(client).await?);
    // The command is checked after the whole request is read, so the reply is not
    // followed by request bytes nobody reads (a reset instead of the reply).
    if command != CONNECT {
        return Err(HandshakeError::Command(command));
    }
    if port == 0 {
        return Err(HandshakeError::Destination("port 0".into()));
    }
    Ok(Target { host, port })
}

async fn read_array<const N: usize>(client: &mut TcpStream) -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    client.read_exact(&mut bytes).await?;
    Ok(bytes)
}

/// A reply; the bound address is the proxy's side of the connection out, when there is one.
fn reply(code: u8, bound: Option<SocketAddr>) -> Vec<u8> {
    let bound = bound.unwrap_or(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0));
    let mut bytes = vec![VERSION, code, 0x00];
    match bound.ip() {
        IpAddr::V4(ip) => {
            bytes.push(0x01);
            bytes.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            bytes.push(0x04);
            bytes.extend_from_slice(&ip.octets());
        }
    }
    bytes.extend_from_slice(&bound.port().to_be_bytes());
    bytes
}
