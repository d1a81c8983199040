//! Where a connection goes: a host (a DNS name or an IP literal) and a port, normalised
//! once so that rules, grants and records all compare the same text.

use std::fmt;
use std::net::IpAddr;

/// A destination host as the client named it. Names are lower-case ASCII without a
/// trailing dot; IPv6 literals are kept without brackets.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("empty host")]
    Empty,
    #[error("{0:?} is not a host name or an IP address")]
    Invalid(String),
}

impl Host {
    /// Parses a host as written in a request or a rule: `example.com`, `Example.COM.`,
    /// `127.0.0.2`, `::1` or `[::1]`.
    pub fn parse(text: &str) -> Result<Host, HostError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(HostError::Empty);
        }
        let bare = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(text);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
        let label_ok = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                && !label.starts_with('-')
                && !label.ends_with('-')
        };
        if name.len() > 253 || !name.split('.').all(label_ok) {
            return Err(HostError::Invalid(text.to_string()));
        }
        Ok(Host::Name(name))
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// A host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    pub host: Host,
    pub port: u16,
}

impl fmt::Display for Target {
    /// `example.com:443`, `[::1]:8080`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]:{}", self.port),
            host => write!(f, "{host}:{}", self.port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_normalised_once() {
        assert_eq!(
            Host::parse("Registry.NPMJS.org.").unwrap(),
            Host::Name("registry.npmjs.org".into())
        );
        assert_eq!(
            Host::parse("[::1]").unwrap(),
            Host::Ip("::1".parse().unwrap())
        );
        assert_eq!(
            Host::parse("127.0.0.2").unwrap(),
            Host::Ip("127.0.0.2".parse().unwrap())
        );
        assert!(Host::parse("bad host").is_err());
        assert!(Host::parse("").is_err());
        assert!(Host::parse("a..b").is_err());
        let v6 = Target {
            host: Host::parse("::1").unwrap(),
            port: 80,
        };
        assert_eq!(v6.to_string(), "[::1]:80");
    }
}
