//! The console's view drawn on ratatui's TestBackend, read as text: what a person sees.

use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use toolgate::tui::{App, Msg, update, view};

/// The terminal reports its size, as the runtime does at start and on every change.
pub fn resize(app: &mut App, width: u16, height: u16) {
    let _ = update(app, Msg::Terminal(Event::Resize(width, height)));
}

/// Draws the app on a terminal of this size, which first reports the size like a real one.
pub fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    resize(app, width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|f| view(app, f)).expect("draw");
    terminal
}

/// The screen as text, trailing spaces trimmed (what a user reads).
pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    screen_of(&render(app, width, height))
}

pub fn screen_of(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The foreground colours of the cells showing `needle` (its first occurrence on screen).
pub fn colours_of(
    terminal: &Terminal<TestBackend>,
    needle: &str,
) -> std::collections::HashSet<ratatui::style::Color> {
    let buf = terminal.backend().buffer();
    let text = screen_of(terminal);
    let (row, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{text}"));
    // Columns, not bytes: the rows hold box-drawing characters.
    let start = line[..line.find(needle).unwrap_or(0)].chars().count() as u16;
    (start..start + needle.chars().count() as u16)
        .map(|x| buf[(x, row as u16)].fg)
        .collect()
}
