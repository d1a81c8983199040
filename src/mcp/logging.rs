//! Server log messages (`notifications/message`) and the level toolgate asks servers for
//! (`logging/setLevel`), as toolgate's own types.

#![allow(deprecated)] // logging is deprecated by the newest spec but still what servers send

use rmcp::model::LoggingLevel;
use serde::{Deserialize, Serialize};

/// RFC 5424 severities, as MCP names them, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const NAMES: &'static str = "\"debug\", \"info\", \"notice\", \"warning\", \"error\", \"critical\", \"alert\" or \"emergency\"";

    pub fn parse(text: &str) -> Option<LogLevel> {
        Some(match text {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Error and worse: the pool panel marks the server.
    pub fn is_error(self) -> bool {
        self >= LogLevel::Error
    }

    pub(super) fn to_mcp(self) -> LoggingLevel {
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }

    pub(super) fn from_mcp(level: LoggingLevel) -> LogLevel {
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The level toolgate asks servers that declare `logging` for, unless config.toml says
/// otherwise (`[mcp] log_level`).
pub const DEFAULT_LOG_LEVEL: LogLevel = LogLevel::Info;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_by_severity() {
        for name in [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        ] {
            assert_eq!(LogLevel::parse(name).map(LogLevel::as_str), Some(name));
        }
        assert!(LogLevel::Error.is_error() && !LogLevel::Warning.is_error());
        assert_eq!(LogLevel::parse("loud"), None);
    }
}
