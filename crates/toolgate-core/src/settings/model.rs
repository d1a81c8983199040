//! `[model]` of `config.toml`: how long a model request is tried again when the API is
//! overloaded, rate limited, failing, unreachable, or cuts a reply short. Same files and
//! layering as `[mcp]`; read when a session starts.
//!
//! ```toml
//! [model]
//! retry_max_attempts = 10   # attempts per request, the first included (1: never retry)
//! retry_max_seconds = 60    # no retry starts later than this after the first attempt
//! context_window = 200000   # tokens the model takes (default: from the model's name)
//! auto_compact_percent = 80 # compact when a request would fill this share of the window
//! thinking = 4000           # extended thinking budget in tokens (Anthropic); 0: off
//! ```

use std::time::Duration;

use super::Diagnostic;

/// Attempts per model request unless config.toml says otherwise.
pub const DEFAULT_RETRY_MAX_ATTEMPTS: u32 = 10;
/// The time budget of one model request's retries unless config.toml says otherwise.
pub const DEFAULT_RETRY_MAX_SECONDS: u64 = 60;
/// The share of the window a request may fill before the conversation is compacted: room
/// for the reply (up to max_tokens) and for the estimate's error.
pub const DEFAULT_AUTO_COMPACT_PERCENT: u8 = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSettings {
    pub retry_max_attempts: u32,
    pub retry_max: Duration,
    /// `context_window`: overrides the window the model's name gives.
    pub context_window: Option<u64>,
    /// `auto_compact_percent` (10–100; 100 compacts only when the API refuses).
    pub auto_compact_percent: u8,
    /// `thinking`: extended thinking's budget in tokens; 0 (the default) leaves it off.
    pub thinking: u32,
}

impl Default for ModelSettings {
    fn default() -> Self {
        ModelSettings {
            retry_max_attempts: DEFAULT_RETRY_MAX_ATTEMPTS,
            retry_max: Duration::from_secs(DEFAULT_RETRY_MAX_SECONDS),
            context_window: None,
            auto_compact_percent: DEFAULT_AUTO_COMPACT_PERCENT,
            thinking: 0,
        }
    }
}

const KEYS: [&str; 5] = [
    "retry_max_attempts",
    "retry_max_seconds",
    "context_window",
    "auto_compact_percent",
    "thinking",
];

pub fn apply_layer(settings: &mut ModelSettings, text: &str, file: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    // Not valid TOML is reported by the sandbox settings already.
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return diagnostics;
    };
    let diag = |item: &toml_edit::Item, message: String| {
        Diagnostic::at(text, file, super::toml::offset(item), message)
    };
    let model = doc.get("model");
    if let Some(table) = model.and_then(toml_edit::Item::as_table_like) {
        for (key, item) in table.iter() {
            if !KEYS.contains(&key) {
                diagnostics.push(diag(
                    item,
                    format!(
                        "unknown key model.{key} (expected one of {}); ignored",
                        KEYS.join(", ")
                    ),
                ));
            }
        }
    }
    if let Some(item) = model.and_then(|t| t.get("retry_max_attempts")) {
        diagnostics.extend(super::toml::set_whole(
            &mut settings.retry_max_attempts,
            item,
            |n| *n > 0,
            "model.retry_max_attempts",
            "a positive whole number",
            |message| diag(item, message),
        ));
    }
    if let Some(item) = model.and_then(|t| t.get("retry_max_seconds")) {
        // A fraction is allowed (a test's short budget); an hour is the sane ceiling.
        let read = item
            .as_float()
            .or_else(|| item.as_integer().map(|n| n as f64))
            .filter(|s| s.is_finite() && (0.0..=3600.0).contains(s))
            .map(Duration::from_secs_f64);
        diagnostics.extend(super::toml::set(&mut settings.retry_max, read, |kept| {
            diag(
                item,
                format!(
                    "expected model.retry_max_seconds to be a number of seconds from 0 to 3600; keeping {}",
                    kept.as_secs_f64()
                ),
            )
        }));
    }
    if let Some(item) = model.and_then(|t| t.get("context_window")) {
        // Fewer than 1,000 tokens leaves no room for a system prompt and a reply.
        let read = super::toml::whole(item, |n: &u64| *n >= 1_000).map(Some);
        diagnostics.extend(super::toml::set(&mut settings.context_window, read, |kept| {
            diag(
                item,
                format!(
                    "expected model.context_window to be a number of tokens of at least 1000; keeping {}",
                    kept.map_or_else(|| "the model's own".to_string(), |n| n.to_string())
                ),
            )
        }));
    }
    if let Some(item) = model.and_then(|t| t.get("auto_compact_percent")) {
        diagnostics.extend(super::toml::set_whole(
            &mut settings.auto_compact_percent,
            item,
            |n| (10..=100).contains(n),
            "model.auto_compact_percent",
            "a whole number from 10 to 100",
            |message| diag(item, message),
        ));
    }
    if let Some(item) = model.and_then(|t| t.get("thinking")) {
        // The API's own bounds: at least 1024 tokens; 0 turns it off.
        diagnostics.extend(super::toml::set_whole(
            &mut settings.thinking,
            item,
            |n| *n == 0 || (1024..=1_000_000).contains(n),
            "model.thinking",
            "0 (off) or a number of tokens from 1024",
            |message| diag(item, message),
        ));
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_and_budget_layer_and_bad_values_are_named() {
        let mut settings = ModelSettings::default();
        assert_eq!(settings.retry_max_attempts, 10);
        assert_eq!(settings.retry_max, Duration::from_secs(60));
        let text = "[model]\nretry_max_attempts = 3\nretry_max_seconds = 0.5\n";
        assert!(apply_layer(&mut settings, text, "config.toml").is_empty());
        assert_eq!(settings.retry_max_attempts, 3);
        assert_eq!(settings.retry_max, Duration::from_millis(500));
        assert!(apply_layer(&mut settings, "[model]\nretry_max_seconds = 90\n", "c").is_empty());
        assert_eq!(settings.retry_max, Duration::from_secs(90));
        let bad = "[model]\nretry_max_attempts = 0\nretry_max_seconds = \"a minute\"\n";
        let shown = crate::settings::shown(&apply_layer(&mut settings, bad, "config.toml"));
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            shown[0].starts_with("config.toml:2:22: expected model.retry_max_attempts"),
            "{shown:?}"
        );
        assert!(shown[1].ends_with("keeping 90"), "{shown:?}");
        assert_eq!(settings.retry_max_attempts, 3);
        let typo = apply_layer(&mut settings, "[model]\nretry_max_secs = 5\n", "c");
        assert_eq!(typo.len(), 1);
        assert!(
            typo[0]
                .message
                .starts_with("unknown key model.retry_max_secs"),
            "{typo:?}"
        );
    }

    #[test]
    fn the_window_and_the_compaction_threshold_are_read_and_checked() {
        let mut settings = ModelSettings::default();
        assert_eq!(settings.context_window, None);
        assert_eq!(settings.auto_compact_percent, 80);
        let text = "[model]\ncontext_window = 60000\nauto_compact_percent = 70\n";
        assert!(apply_layer(&mut settings, text, "config.toml").is_empty());
        assert_eq!(settings.context_window, Some(60_000));
        assert_eq!(settings.auto_compact_percent, 70);
        let bad = "[model]\ncontext_window = 12\nauto_compact_percent = 101\n";
        let shown = crate::settings::shown(&apply_layer(&mut settings, bad, "config.toml"));
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(shown[0].ends_with("keeping 60000"), "{shown:?}");
        assert!(shown[1].ends_with("keeping 70"), "{shown:?}");
    }

    #[test]
    fn the_thinking_budget_is_read_and_checked() {
        let mut settings = ModelSettings::default();
        assert_eq!(settings.thinking, 0, "off unless asked for");
        assert!(apply_layer(&mut settings, "[model]\nthinking = 4000\n", "c").is_empty());
        assert_eq!(settings.thinking, 4000);
        let shown =
            crate::settings::shown(&apply_layer(&mut settings, "[model]\nthinking = 10\n", "c"));
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert!(shown[0].contains("model.thinking"), "{shown:?}");
        assert_eq!(settings.thinking, 4000);
    }
}
