//! Drawing pieces the components' widgets share: badges, server states, cutting and
//! centring, copying wrapped lines into a buffer, and the test helpers that render a widget
//! into text.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use crate::protocol::Decision;
use crate::protocol::{LogLevel, ServerStatus};
use crate::theme::Theme;
use crate::wrap::LogicalLine;

/// A popup's place just above the composer: `rows` tall (as far as the screen allows above
/// it) and `width` wide, from the composer's left edge.
pub fn above_composer(composer: Rect, screen: Rect, rows: u16, width: u16) -> Rect {
    let height = rows.min(composer.y.saturating_sub(screen.y));
    Rect {
        x: composer.x,
        y: composer.y.saturating_sub(height),
        width,
        height,
    }
}

/// Clears `area` and draws a focused popup frame with `title`; the area inside it.
pub fn popup_frame(area: Rect, buf: &mut Buffer, t: &Theme, title: &str) -> Rect {
    use ratatui::widgets::{Block, Borders, Clear, Widget};
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.focused_border())
        .title(Span::styled(title.to_string(), t.dim()));
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// The policy decision as a fixed-width badge.
pub fn badge(decision: &Decision, t: &Theme) -> Span<'static> {
    match decision {
        Decision::Allow => Span::styled("allow ", t.ok()),
        Decision::Ask { .. } => Span::styled("ask   ", t.warn()),
        Decision::Deny { .. } => Span::styled("deny  ", t.error()),
    }
}

pub fn status_label(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Idle => "○ not connected".into(),
        ServerStatus::Connecting => "◌ connecting…".into(),
        ServerStatus::Ready { .. } => "● ready".into(),
        ServerStatus::Failed { .. } => "✗ failed".into(),
        ServerStatus::Disconnected { .. } => "○ disconnected".into(),
    }
}

pub fn status_style(status: &ServerStatus, t: &Theme) -> Style {
    match status {
        ServerStatus::Ready { .. } => t.ok(),
        ServerStatus::Connecting => t.warn(),
        ServerStatus::Failed { .. } => t.error(),
        _ => t.dim(),
    }
}

/// Cuts `text` to `width` columns, marking the cut with an ellipsis.
pub fn truncate(text: &str, width: usize) -> String {
    let total: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Draws already wrapped lines top-down into `area`, cutting what does not fit. What a
/// `Paragraph` without wrapping draws, minus its per-frame restyling of the whole area and
/// its reflow machinery: these lines are wrapped once, when they change.
pub fn draw_lines(lines: &[Line<'_>], area: Rect, buf: &mut Buffer) {
    for (line, y) in lines.iter().zip(area.top()..area.bottom()) {
        buf.set_line(area.x, y, line, area.width);
    }
}

/// One styled line that wraps with a two-column hanging indent.
pub fn text(s: impl Into<String>, style: Style) -> LogicalLine {
    LogicalLine {
        spans: vec![Span::styled(s.into(), style)],
        continuation_indent: 2,
        preformatted: false,
    }
}

/// The row marker and style of an item in a list with a selection: the selected one is
/// pointed at and reversed, the others keep `unselected`.
pub fn selectable(selected: bool, unselected: Style, t: &Theme) -> (Span<'static>, Style) {
    if selected {
        (Span::raw("▶ "), t.selected())
    } else {
        (Span::raw("  "), unselected)
    }
}

/// The latest `shown` log messages of a server, one line each, indented by `indent`
/// (errors stand out).
pub fn log_tail(
    logs: &std::collections::VecDeque<(LogLevel, String)>,
    shown: usize,
    indent: usize,
    t: &Theme,
) -> Vec<LogicalLine> {
    let skip = logs.len().saturating_sub(shown);
    logs.iter()
        .skip(skip)
        .map(|(level, message)| {
            let style = if level.is_error() {
                t.error()
            } else {
                t.plain()
            };
            LogicalLine {
                spans: vec![Span::styled(
                    format!("{:indent$}[{level}] {message}", ""),
                    style,
                )],
                continuation_indent: indent + 2,
                preformatted: false,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    //! Rendering a widget into a bare buffer, and the buffer as the text a user reads.

    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::widgets::Widget;

    pub fn render(widget: impl Widget, width: u16, height: u16) -> Buffer {
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        widget.render(area, &mut buf);
        buf
    }

    /// Rows of the buffer, trailing spaces trimmed.
    pub fn text(buf: &Buffer) -> String {
        let mut out = String::new();
        for y in 0..buf.area.height {
            let row: String = (0..buf.area.width)
                .map(|x| buf[(buf.area.x + x, buf.area.y + y)].symbol())
                .collect();
            out.push_str(row.trim_end());
            out.push('\n');
        }
        out
    }

    /// Asserts that the screen shows every one of `needles`; a failure prints the screen.
    #[track_caller]
    pub fn assert_shows(screen: &str, needles: &[&str]) {
        for needle in needles {
            assert!(
                screen.contains(needle),
                "{needle:?} is not on screen:\n{screen}"
            );
        }
    }

    /// The row that contains `needle`, if any.
    pub fn row_of(buf: &Buffer, needle: &str) -> Option<u16> {
        (0..buf.area.height).find(|&y| {
            let row: String = (0..buf.area.width)
                .map(|x| buf[(buf.area.x + x, buf.area.y + y)].symbol())
                .collect();
            row.contains(needle)
        })
    }
}
