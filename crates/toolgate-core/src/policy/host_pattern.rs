//! The hosts a `Network(…)` rule (or a server's `"network"` list) covers: a name, an
//! address literal, `*.DOMAIN`, or `*`, with or without a port. Pure; what decides a
//! connection with it is `network.rs`.

use std::fmt;

use crate::egress::{Host, Target};

/// The hosts a `Network(…)` rule covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: HostMatch,
    /// None: every port.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    /// `*`: every host.
    Any,
    Exact(Host),
    /// `*.example.com`: every name below example.com (not example.com itself).
    Below(String),
}

impl HostPattern {
    /// Parses the inside of `Network(…)` (also a server entry's host list): `example.com`,
    /// `example.com:8443`, `*.example.com`, `127.0.0.2`, `[::1]:80`, `*`.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("expected a host, host:port or *.domain".into());
        }
        if text == "*" {
            return Ok(HostPattern {
                host: HostMatch::Any,
                port: None,
            });
        }
        let (host, port) = split_port(text)?;
        let host = if let Some(domain) = host.strip_prefix("*.") {
            match Host::parse(domain) {
                Ok(Host::Name(name)) => HostMatch::Below(name),
                Ok(Host::Ip(_)) => return Err(format!("'*.' needs a domain name, not {domain}")),
                _ => return Err(format!("{domain:?} is not a domain name")),
            }
        } else if host.contains('*') {
            return Err("'*' is only allowed as '*' or a leading '*.'".into());
        } else {
            HostMatch::Exact(Host::parse(host).map_err(|e| e.to_string())?)
        };
        Ok(HostPattern { host, port })
    }

    /// The pattern that covers exactly `host` on every port (what "always" writes).
    pub fn for_host(host: &Host) -> HostPattern {
        HostPattern {
            host: HostMatch::Exact(host.clone()),
            port: None,
        }
    }

    pub fn matches(&self, target: &Target) -> bool {
        if self.port.is_some_and(|port| port != target.port) {
            return false;
        }
        match (&self.host, &target.host) {
            (HostMatch::Any, _) => true,
            (HostMatch::Exact(host), other) => host == other,
            (HostMatch::Below(domain), Host::Name(name)) => name
                .strip_suffix(domain.as_str())
                .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
            (HostMatch::Below(_), Host::Ip(_)) => false,
        }
    }
}

/// `host` and `:port`, minding IPv6 literals (`[::1]:80`; a bare `::1` has no port).
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("{p:?} is not a port (1-65535)"))
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or("expected ']' after an IPv6 address")?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((host, Some(port(p)?))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("unexpected {after:?} after ']'")),
        };
    }
    match text.rsplit_once(':') {
        // More than one colon: an IPv6 literal without brackets, so no port.
        Some((host, _)) if host.contains(':') => Ok((text, None)),
        Some((host, p)) => Ok((host, Some(port(p)?))),
        None => Ok((text, None)),
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostMatch::Any => f.write_str("*")?,
            HostMatch::Exact(Host::Ip(std::net::IpAddr::V6(ip))) if self.port.is_some() => {
                write!(f, "[{ip}]")?
            }
            HostMatch::Exact(host) => write!(f, "{host}")?,
            HostMatch::Below(domain) => write!(f, "*.{domain}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str) -> Target {
        let (host, port) = text.rsplit_once(':').unwrap();
        Target {
            host: Host::parse(host).unwrap(),
            port: port.parse().unwrap(),
        }
    }

    fn covers(pattern: &str, t: &str) -> bool {
        HostPattern::parse(pattern).unwrap().matches(&target(t))
    }

    #[test]
    fn patterns_cover_names_ports_domains_and_literals() {
        assert!(covers("registry.npmjs.org", "Registry.npmjs.org:443"));
        assert!(covers("registry.npmjs.org", "registry.npmjs.org:80"));
        assert!(!covers("registry.npmjs.org:443", "registry.npmjs.org:80"));
        assert!(covers("*.npmjs.org", "registry.npmjs.org:443"));
        assert!(!covers("*.npmjs.org", "npmjs.org:443"));
        assert!(!covers("*.npmjs.org", "evilnpmjs.org:443"));
        assert!(covers("127.0.0.2", "127.0.0.2:8080"));
        assert!(!covers("127.0.0.2", "127.0.0.3:8080"));
        assert!(covers("[::1]:80", "[::1]:80"));
        assert!(covers("*", "example.com:1"));
        for bad in [
            "",
            "a b",
            "*.",
            "ex*.com",
            "host:0",
            "host:99999",
            "*.127.0.0.1",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?} parsed");
        }
        assert_eq!(
            HostPattern::parse("Example.COM:8443").unwrap().to_string(),
            "example.com:8443"
        );
    }
}
