//! Styles in one place, so NO_COLOR can turn every colour off while keeping emphasis
//! (bold, reversed, crossed out) that carries meaning without colour.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    pub fn new(color: bool) -> Self {
        Theme { color }
    }

    /// Honors <https://no-color.org>: any non-empty `NO_COLOR` disables colour.
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme::new(!no_color)
    }

    fn fg(&self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    pub fn plain(&self) -> Style {
        Style::new()
    }
    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }
    pub fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub fn heading(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn code(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn user(&self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::BOLD)
    }
    pub fn ok(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn accent(&self) -> Style {
        self.fg(Color::Magenta)
    }
    /// Tools that just joined the pool.
    pub fn added(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Green)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    pub fn removed(&self) -> Style {
        self.dim().add_modifier(Modifier::CROSSED_OUT)
    }
    /// A diff's added line (green; bold without colour, so `+` is not the only sign).
    pub fn diff_added(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Green)
        } else {
            self.bold()
        }
    }
    /// A diff's removed line (red; dim without colour).
    pub fn diff_removed(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Red)
        } else {
            self.dim()
        }
    }
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub fn border(&self) -> Style {
        self.dim()
    }

    /// The border of a part that may have the keyboard.
    pub fn border_for(&self, focused: bool) -> Style {
        if focused {
            self.focused_border()
        } else {
            self.border()
        }
    }

    pub fn focused_border(&self) -> Style {
        self.fg(Color::Cyan)
    }
}
