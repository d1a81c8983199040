//! The model's thinking in the conversation (decision 0079): one dim line while it
//! streams ("✻ thinking… 42 words · Ctrl+O shows it"), the whole text when the person
//! expands (Ctrl+O, the key that expands tool results too).

use ratatui::text::Span;

use crate::theme::Theme;
use crate::wrap::LogicalLine;

pub fn render(text: &str, streaming: bool, expanded: bool, theme: &Theme) -> Vec<LogicalLine> {
    let words = text.split_whitespace().count();
    let state = if streaming { "thinking…" } else { "thought" };
    let hint = if expanded {
        "Ctrl+O hides it"
    } else {
        "Ctrl+O shows it"
    };
    let mut out = vec![LogicalLine {
        spans: vec![
            Span::styled("✻ ", theme.accent()),
            Span::styled(format!("{state} {words} words · {hint}"), theme.dim()),
        ],
        continuation_indent: 2,
        preformatted: false,
    }];
    if expanded {
        out.extend(text.split('\n').map(|line| LogicalLine {
            spans: vec![Span::raw("  "), Span::styled(line.to_string(), theme.dim())],
            continuation_indent: 2,
            preformatted: false,
        }));
    }
    out
}
