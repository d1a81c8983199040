//! `[tui] notify`, the one console setting the console reads itself (the core's settings
//! parse it from config.toml).

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
    pub const NAMES: &'static str = "\"auto\", \"bell\", \"osc\" or \"off\"";

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
