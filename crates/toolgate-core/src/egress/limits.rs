//! The limits one proxied connection works under.

use std::time::Duration;

/// The limits one connection works under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Time to send a complete request head (or SOCKS5 handshake); a client that has not
    /// is dropped. The admission's own wait (a person answering) is not counted.
    pub head_timeout: Duration,
    /// Time to connect to the host once admitted (a 502 / SOCKS 0x04 after it).
    pub connect_timeout: Duration,
    /// Largest HTTP request head; a larger one is answered 431.
    pub max_head: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(30),
            max_head: 64 * 1024,
        }
    }
}
