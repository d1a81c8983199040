//! `config.toml` settings of the MCP host: `[mcp] log_level` (what toolgate asks servers
//! that declare `logging` for) and `[sampling] max_tokens` (the cap on one sampling
//! request). Same files and layering as `[sandbox]`: the user's file, then a trusted
//! project's `.toolgate/config.toml`; a later file's value wins.
//!
//! ```toml
//! [mcp]
//! log_level = "warning"   # debug|info|notice|warning|error|critical|alert|emergency|off
//! max_message_bytes = 134217728   # one stdio message; a bigger answer fails its call
//!
//! [sampling]
//! max_tokens = 4096       # a server asking for more is refused, naming this cap
//! ```

use super::Diagnostic;

pub use crate::protocol::LogLevel;

/// The level toolgate asks servers that declare `logging` for, unless config.toml says
/// otherwise (`[mcp] log_level`).
pub const DEFAULT_LOG_LEVEL: LogLevel = LogLevel::Info;

/// The largest message a stdio server may send (one JSON-RPC line), unless config.toml
/// sets `[mcp] max_message_bytes`. A bigger answer fails its call at once, naming both.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// The cap on one sampling request's `maxTokens` unless config.toml sets one.
pub const DEFAULT_SAMPLING_MAX_TOKENS: u32 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostSettings {
    /// None: `off`, no `logging/setLevel` is sent.
    pub log_level: Option<LogLevel>,
    pub sampling_max_tokens: u32,
    /// `[mcp] max_message_bytes`: read when a server starts.
    pub max_message_bytes: usize,
}

impl Default for HostSettings {
    fn default() -> Self {
        HostSettings {
            log_level: Some(DEFAULT_LOG_LEVEL),
            sampling_max_tokens: DEFAULT_SAMPLING_MAX_TOKENS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

pub fn apply_layer(settings: &mut HostSettings, text: &str, file: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    // Not valid TOML is reported by the sandbox settings already.
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return diagnostics;
    };
    let diag = |item: &toml_edit::Item, message: String| {
        Diagnostic::at(text, file, super::toml::offset(item), message)
    };
    if let Some(item) = doc.get("mcp").and_then(|t| t.get("log_level")) {
        let parsed = item.as_str().and_then(|s| match s {
            "off" => Some(None),
            other => LogLevel::parse(other).map(Some),
        });
        diagnostics.extend(super::toml::set(&mut settings.log_level, parsed, |kept| {
            diag(
                item,
                format!(
                    "expected mcp.log_level = {} or \"off\"; keeping {}",
                    LogLevel::NAMES,
                    kept.map_or("off", LogLevel::as_str)
                ),
            )
        }));
    }
    if let Some(item) = doc.get("mcp").and_then(|t| t.get("max_message_bytes")) {
        diagnostics.extend(super::toml::set_whole(
            &mut settings.max_message_bytes,
            item,
            |n| *n > 0,
            "mcp.max_message_bytes",
            "a positive whole number of bytes",
            |message| diag(item, message),
        ));
    }
    if let Some(item) = doc.get("sampling").and_then(|t| t.get("max_tokens")) {
        diagnostics.extend(super::toml::set_whole(
            &mut settings.sampling_max_tokens,
            item,
            |n| *n > 0,
            "sampling.max_tokens",
            "a positive whole number",
            |message| diag(item, message),
        ));
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_caps_layer_and_bad_values_are_named() {
        let mut settings = HostSettings::default();
        let text = "[mcp]\nlog_level = \"warning\"\nmax_message_bytes = 4096\n[sampling]\nmax_tokens = 100\n";
        assert!(apply_layer(&mut settings, text, "config.toml").is_empty());
        assert_eq!(settings.max_message_bytes, 4096);
        assert_eq!(settings.log_level, Some(LogLevel::Warning));
        assert_eq!(settings.sampling_max_tokens, 100);
        let bad = "[mcp]\nlog_level = \"loud\"\n[sampling]\nmax_tokens = -3\n";
        let shown = crate::settings::shown(&apply_layer(&mut settings, bad, "config.toml"));
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            shown[0].starts_with("config.toml:2:13: expected mcp.log_level"),
            "{shown:?}"
        );
        assert!(shown[1].contains("keeping 100"), "{shown:?}");
        assert!(apply_layer(&mut settings, "[mcp]\nlog_level = \"off\"\n", "c").is_empty());
        assert_eq!(settings.log_level, None);
    }

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
