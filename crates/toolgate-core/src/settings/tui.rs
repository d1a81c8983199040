//! `[tui]` of `config.toml`: how the console gets the person's attention when a question
//! arrives while its terminal is in the background. Same files and layering as `[mcp]`;
//! read when the console starts.
//!
//! ```toml
//! [tui]
//! notify = "auto"   # auto: bell + desktop notification | bell | osc | off
//! ```

use super::Diagnostic;

pub use crate::protocol::NotifySetting;

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
