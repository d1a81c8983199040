//! One widget per part of the screen. Each draws from state it borrows and decides nothing;
//! [`super::view::view`] only places them. Widgets implement ratatui's [`Widget`]; the inbox
//! modal draws over the whole frame, so it takes the frame instead of an area.
//!
//! [`Widget`]: ratatui::widgets::Widget

pub mod completion;
pub mod composer;
pub mod conversation;
pub mod inbox;
pub mod overlays;
pub mod pool_panel;
pub mod tool_detail;

pub use completion::{CompletionPopup, FormQuestion};
pub use composer::{Composer, StatusLine};
pub use conversation::Conversation;
pub use overlays::{HelpOverlay, McpOverlay, PermissionsOverlay};
pub use pool_panel::PoolPanel;
pub use tool_detail::{DetailState, ToolDetail};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use super::theme::Theme;
use super::wrap::LogicalLine;
use crate::mcp::ServerStatus;
use crate::policy::Decision;

/// The policy decision as a fixed-width badge.
fn badge(decision: &Decision, t: &Theme) -> Span<'static> {
    match decision {
        Decision::Allow => Span::styled("allow ", t.ok()),
        Decision::Ask { .. } => Span::styled("ask   ", t.warn()),
        Decision::Deny { .. } => Span::styled("deny  ", t.error()),
    }
}

fn status_label(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Idle => "○ not connected".into(),
        ServerStatus::Connecting => "◌ connecting…".into(),
        ServerStatus::Ready { .. } => "● ready".into(),
        ServerStatus::Failed { .. } => "✗ failed".into(),
        ServerStatus::Disconnected { .. } => "○ disconnected".into(),
    }
}

fn status_style(status: &ServerStatus, t: &Theme) -> Style {
    match status {
        ServerStatus::Ready { .. } => t.ok(),
        ServerStatus::Connecting => t.warn(),
        ServerStatus::Failed { .. } => t.error(),
        _ => t.dim(),
    }
}

/// Cuts `text` to `width` columns, marking the cut with an ellipsis.
fn truncate(text: &str, width: usize) -> String {
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

fn centered(area: Rect, width: u16, height: u16) -> Rect {
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
fn draw_lines(lines: &[Line<'_>], area: Rect, buf: &mut Buffer) {
    for (line, y) in lines.iter().zip(area.top()..area.bottom()) {
        buf.set_line(area.x, y, line, area.width);
    }
}

/// One styled line that wraps with a two-column hanging indent.
fn text(s: impl Into<String>, style: Style) -> LogicalLine {
    LogicalLine {
        spans: vec![Span::styled(s.into(), style)],
        continuation_indent: 2,
        preformatted: false,
    }
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
