//! `[tui]` of `config.toml`: how the console gets the person's attention when a question
//! arrives while its terminal is in the background. Same files and layering as `[mcp]`;
//! read when the console starts.
//!
//! ```toml
//! [tui]
//! notify = "auto"   # auto: bell + desktop notification | bell | osc | off
//! ```

use super::Diagnostic;

/// `[tui] notify`: what is written when a question waits and the terminal is unfocused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifySetting {
    /// The bell and a desktop notification in the form the terminal understands.
    #[default]
    Auto,
    /// The bell only.
    Bell,
    /// The desktop notification only (OSC 9, or OSC 777 where the terminal wants it).
    Osc,
    Off,
}

impl NotifySetting {
    const NAMES: &'static str = "\"auto\", \"bell\", \"osc\" or \"off\"";

    pub fn parse(text: &str) -> Option<NotifySetting> {
        Some(match text {
            "auto" => NotifySetting::Auto,
            "bell" => NotifySetting::Bell,
            "osc" => NotifySetting::Osc,
            "off" => NotifySetting::Off,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NotifySetting::Auto => "auto",
            NotifySetting::Bell => "bell",
            NotifySetting::Osc => "osc",
            NotifySetting::Off => "off",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TuiSettings {
    pub notify: NotifySetting,
}

pub fn apply_layer(settings: &mut TuiSettings, text: &str, file: &str) -> Vec<Diagnostic> {
    // Not valid TOML is reported by the sandbox settings already.
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return Vec::new();
    };
    let Some(item) = doc.get("tui").and_then(|t| t.get("notify")) else {
        return Vec::new();
    };
    let parsed = item.as_str().and_then(NotifySetting::parse);
    super::toml::set(&mut settings.notify, parsed, |kept| {
        Diagnostic::at(
            text,
            file,
            super::toml::offset(item),
            format!(
                "expected tui.notify = {}; keeping \"{}\"",
                NotifySetting::NAMES,
                kept.as_str()
            ),
        )
    })
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_layers_and_a_bad_value_is_named_and_ignored() {
        let mut settings = TuiSettings::default();
        assert_eq!(settings.notify, NotifySetting::Auto);
        assert!(apply_layer(&mut settings, "[tui]\nnotify = \"bell\"\n", "a.toml").is_empty());
        assert_eq!(settings.notify, NotifySetting::Bell);
        let shown = crate::settings::shown(&apply_layer(
            &mut settings,
            "[tui]\nnotify = \"loud\"\n",
            "b.toml",
        ));
        assert_eq!(
            shown,
            [
                "b.toml:2:10: expected tui.notify = \"auto\", \"bell\", \"osc\" or \"off\"; keeping \"bell\""
            ]
        );
        assert_eq!(settings.notify, NotifySetting::Bell);
    }
}
