//! Getting the person's attention when a question arrives while the terminal is in the
//! background: the bell and a desktop notification (OSC 9, or OSC 777 `notify;title;body`
//! for the terminals that read that form), as `[tui] notify` says. Focus comes from the
//! terminal's focus reports (enabled with the rest of the console's modes): until one says
//! the terminal lost focus, it is taken to have it, so nothing is written by guesswork.

use crate::protocol::NotifySetting;
use crate::sanitize::for_terminal;

use super::app::App;
use super::effect::Effect;

/// The most characters of a notification's title or body.
const MAX_CHARS: usize = 120;

/// The escape form of a desktop notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OscForm {
    /// `ESC ] 9 ; body BEL`: iTerm2, WezTerm, ghostty, kitty, Windows Terminal.
    Nine,
    /// `ESC ] 777 ; notify ; title ; body BEL`: VTE terminals (GNOME Terminal …), foot,
    /// urxvt.
    SevenSevenSeven,
}

/// What the runtime writes for a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notifier {
    bell: bool,
    osc: Option<OscForm>,
}

impl Notifier {
    /// From the setting and the terminal's environment (`TERM_PROGRAM`, `VTE_VERSION`,
    /// `TERM`), which picks the OSC form.
    pub fn new(setting: NotifySetting, env: impl Fn(&str) -> Option<String>) -> Notifier {
        let form = osc_form(&env);
        let (bell, osc) = match setting {
            NotifySetting::Auto => (true, Some(form)),
            NotifySetting::Bell => (true, None),
            NotifySetting::Osc => (false, Some(form)),
            NotifySetting::Off => (false, None),
        };
        Notifier { bell, osc }
    }

    /// The bytes to write: the bell, then the notification. Empty when switched off.
    pub fn bytes(&self, title: &str, body: &str) -> Vec<u8> {
        let mut out = String::new();
        if self.bell {
            out.push('\u{7}');
        }
        let (title, body) = (clean(title), clean(body));
        match self.osc {
            Some(OscForm::Nine) => out.push_str(&format!("\u{1b}]9;{title}: {body}\u{7}")),
            Some(OscForm::SevenSevenSeven) => {
                out.push_str(&format!("\u{1b}]777;notify;{title};{body}\u{7}"))
            }
            None => {}
        }
        out.into_bytes()
    }
}

fn osc_form(env: &impl Fn(&str) -> Option<String>) -> OscForm {
    let program = env("TERM_PROGRAM").unwrap_or_default().to_lowercase();
    let term = env("TERM").unwrap_or_default();
    let vte = env("VTE_VERSION").is_some_and(|v| !v.is_empty());
    if vte || program == "foot" || term.starts_with("foot") || term.starts_with("rxvt") {
        OscForm::SevenSevenSeven
    } else {
        OscForm::Nine
    }
}

/// One line of plain text that cannot end the sequence early or split its fields: no
/// escapes, no control characters, no `;`, bounded.
fn clean(text: &str) -> String {
    let flat = for_terminal(text).replace(['\n', ';'], " ");
    let mut out: String = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.chars().count() > MAX_CHARS {
        out = out.chars().take(MAX_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// A question just joined the inbox: while the terminal is unfocused, ask the runtime to
/// notify, naming what waits.
pub(super) fn question_arrived(app: &App, effects: &mut Vec<Effect>) {
    if app.focused {
        return;
    }
    let Some(entry) = app.inbox.entries().last() else {
        return;
    };
    effects.push(Effect::Notify {
        title: format!("toolgate: {}", entry.card.title),
        body: entry.card.asker.clone(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_form_follows_the_terminal_and_the_setting() {
        let iterm = Notifier::new(NotifySetting::Auto, env(&[("TERM_PROGRAM", "iTerm.app")]));
        assert_eq!(
            iterm.bytes("toolgate", "edit_file"),
            b"\x07\x1b]9;toolgate: edit_file\x07"
        );
        let gnome = Notifier::new(NotifySetting::Osc, env(&[("VTE_VERSION", "7600")]));
        assert_eq!(
            gnome.bytes("toolgate", "edit_file"),
            b"\x1b]777;notify;toolgate;edit_file\x07"
        );
        let bell = Notifier::new(NotifySetting::Bell, env(&[]));
        assert_eq!(bell.bytes("t", "b"), b"\x07");
        assert!(
            Notifier::new(NotifySetting::Off, env(&[]))
                .bytes("t", "b")
                .is_empty()
        );
    }

    #[test]
    fn text_from_a_tool_cannot_break_out_of_the_sequence() {
        let osc = Notifier::new(NotifySetting::Osc, env(&[("TERM", "rxvt-unicode")]));
        let bytes = osc.bytes("title;x", "a\x07b\x1b]0;owned\x07c;d\ne");
        assert_eq!(bytes, b"\x1b]777;notify;title x;abc d e\x07");
        let long = osc.bytes("t", &"x".repeat(500));
        assert!(long.len() < 200, "{}", long.len());
    }
}
