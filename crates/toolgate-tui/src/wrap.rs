//! Wrapping styled lines to a width. The conversation caches the result per message and
//! width, so this runs once per message per resize, not once per frame.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A line before wrapping: its spans plus how continuation lines are indented (list items
/// keep their text column) and whether it may break between words or only anywhere
/// (code blocks keep their spacing).
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalLine {
    pub spans: Vec<Span<'static>>,
    pub continuation_indent: usize,
    pub preformatted: bool,
}

impl LogicalLine {
    pub fn plain(spans: Vec<Span<'static>>) -> Self {
        LogicalLine {
            spans,
            continuation_indent: 0,
            preformatted: false,
        }
    }

    pub fn blank() -> Self {
        LogicalLine::plain(Vec::new())
    }
}

/// Wraps every logical line to `width` columns (at least 1).
pub fn wrap_lines(lines: &[LogicalLine], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        wrap_one(line, width, &mut out);
    }
    out
}

/// One styled character; wrapping works on these so styles survive a break mid-span.
struct Cell {
    ch: char,
    width: usize,
    span: usize,
}

fn wrap_one(line: &LogicalLine, width: usize, out: &mut Vec<Line<'static>>) {
    let cells: Vec<Cell> = line
        .spans
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.content.chars().map(move |ch| Cell {
                ch,
                width: ch.width().unwrap_or(0),
                span: i,
            })
        })
        .collect();
    if cells.is_empty() {
        out.push(Line::default());
        return;
    }
    // Continuation indent never eats the whole width.
    let indent = line.continuation_indent.min(width.saturating_sub(1) / 2);
    let mut start = 0;
    let mut first = true;
    while start < cells.len() {
        let avail = if first { width } else { width - indent };
        // On the first row the list marker must stay with its text.
        let min_break = if first { start + indent } else { start };
        let (end, next) = break_point(&cells, start, min_break, avail, line.preformatted);
        let mut spans = Vec::new();
        if !first && indent > 0 {
            spans.push(Span::raw(" ".repeat(indent)));
        }
        push_cells(&cells[start..end], &line.spans, &mut spans);
        out.push(Line::from(spans));
        start = next;
        first = false;
    }
}

/// Returns (end of this row, start of the next row) in cell indices.
fn break_point(
    cells: &[Cell],
    start: usize,
    min_break: usize,
    avail: usize,
    preformatted: bool,
) -> (usize, usize) {
    let mut used = 0;
    let mut i = start;
    while i < cells.len() {
        if used + cells[i].width > avail {
            break;
        }
        used += cells[i].width;
        i += 1;
    }
    if i >= cells.len() {
        return (cells.len(), cells.len());
    }
    if i == start {
        // A character wider than the row: place it anyway so wrapping always advances.
        return (start + 1, start + 1);
    }
    if !preformatted {
        // Break after the last space in the row, and skip the spaces that start the next one.
        if let Some(space) = (start..i).rev().find(|&j| cells[j].ch == ' ')
            && space > min_break
        {
            return (space, after_spaces(cells, space + 1));
        }
        if cells[i].ch == ' ' {
            return (i, after_spaces(cells, i));
        }
    }
    (i, i)
}

/// The first cell at or after `from` that is not a space.
fn after_spaces(cells: &[Cell], from: usize) -> usize {
    (from..cells.len())
        .find(|&j| cells[j].ch != ' ')
        .unwrap_or(cells.len())
}

fn push_cells(cells: &[Cell], spans: &[Span<'static>], out: &mut Vec<Span<'static>>) {
    let mut current: Option<(usize, String)> = None;
    for c in cells {
        match &mut current {
            Some((span, text)) if *span == c.span => text.push(c.ch),
            _ => {
                if let Some((span, text)) = current.take() {
                    out.push(Span::styled(text, spans[span].style));
                }
                current = Some((c.span, c.ch.to_string()));
            }
        }
    }
    if let Some((span, text)) = current {
        out.push(Span::styled(text, spans[span].style));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_at_word_boundaries() {
        let l = LogicalLine::plain(vec![Span::raw("the quick brown fox jumps")]);
        assert_eq!(
            texts(&wrap_lines(&[l], 10)),
            ["the quick", "brown fox", "jumps"]
        );
    }

    fn line(text: &'static str, continuation_indent: usize, preformatted: bool) -> LogicalLine {
        LogicalLine {
            spans: vec![Span::raw(text)],
            continuation_indent,
            preformatted,
        }
    }

    #[test]
    fn breaks_long_words_and_keeps_indent() {
        let l = line("- abcdefghijkl", 2, false);
        assert_eq!(texts(&wrap_lines(&[l], 8)), ["- abcdef", "  ghijkl"]);
    }

    #[test]
    fn preformatted_keeps_spaces() {
        let l = line("a  b  c  d", 0, true);
        assert_eq!(texts(&wrap_lines(&[l], 4)), ["a  b", "  c ", " d"]);
    }

    #[test]
    fn wide_characters_count_double() {
        let l = LogicalLine::plain(vec![Span::raw("世界世界")]);
        assert_eq!(texts(&wrap_lines(&[l], 5)), ["世界", "世界"]);
    }
}
