//! Markdown (as models write it) to styled logical lines: headings, lists, code blocks,
//! inline code, emphasis, quotes, rules. Input is already sanitized; unknown constructs
//! degrade to their text.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::theme::Theme;
use super::wrap::LogicalLine;

struct ListState {
    next_number: Option<u64>,
}

struct Renderer<'t> {
    theme: &'t Theme,
    out: Vec<LogicalLine>,
    current: Vec<Span<'static>>,
    current_indent: usize,
    styles: Vec<Style>,
    lists: Vec<ListState>,
    quote_depth: usize,
    in_code_block: bool,
    /// A blank line is due before the next block (paragraph spacing).
    pending_gap: bool,
}

pub fn render(text: &str, theme: &Theme) -> Vec<LogicalLine> {
    let mut r = Renderer {
        theme,
        out: Vec::new(),
        current: Vec::new(),
        current_indent: 0,
        styles: vec![Style::new()],
        lists: Vec::new(),
        quote_depth: 0,
        in_code_block: false,
        pending_gap: false,
    };
    let parser = Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH);
    for event in parser {
        r.event(event);
    }
    r.flush();
    r.out
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn prefix(&self) -> String {
        let mut p = "│ ".repeat(self.quote_depth);
        p.push_str(&"  ".repeat(self.lists.len().saturating_sub(1)));
        p
    }

    fn start_block(&mut self) {
        self.flush();
        if self.pending_gap && !self.out.is_empty() && self.lists.is_empty() {
            self.out.push(LogicalLine::blank());
        }
        self.pending_gap = false;
    }

    fn ensure_line_started(&mut self) {
        if self.current.is_empty() {
            let prefix = self.prefix();
            self.current_indent = prefix.chars().count();
            if !prefix.is_empty() {
                self.current.push(Span::styled(prefix, self.theme.dim()));
            }
        }
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            let spans = std::mem::take(&mut self.current);
            self.out.push(LogicalLine {
                spans,
                continuation_indent: self.current_indent,
                preformatted: false,
            });
        }
    }

    fn text(&mut self, text: &str) {
        if self.in_code_block {
            for line in text.lines() {
                let mut spans = Vec::new();
                let prefix = self.prefix();
                if !prefix.is_empty() {
                    spans.push(Span::styled(prefix, self.theme.dim()));
                }
                spans.push(Span::styled("  ", self.theme.dim()));
                spans.push(Span::styled(line.to_string(), self.theme.code()));
                self.out.push(LogicalLine {
                    spans,
                    continuation_indent: 2,
                    preformatted: true,
                });
            }
            return;
        }
        self.ensure_line_started();
        let style = self.style();
        self.current.push(Span::styled(text.to_string(), style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                self.ensure_line_started();
                self.current
                    .push(Span::styled(t.to_string(), self.theme.code()));
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => self.text(t.trim_end_matches('\n')),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                self.flush();
            }
            Event::Rule => {
                self.start_block();
                self.out.push(LogicalLine::plain(vec![Span::styled(
                    "───",
                    self.theme.dim(),
                )]));
                self.pending_gap = true;
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let marks = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                self.push_style(|_| self.theme.heading());
                self.text(marks);
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                self.in_code_block = true;
                if let CodeBlockKind::Fenced(lang) = kind
                    && !lang.is_empty()
                {
                    let prefix = self.prefix();
                    self.out.push(LogicalLine::plain(vec![
                        Span::raw(prefix),
                        Span::styled(format!("  {lang}"), self.theme.dim()),
                    ]));
                }
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    self.flush();
                }
                self.lists.push(ListState { next_number: start });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(ListState {
                        next_number: Some(n),
                    }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.ensure_line_started();
                self.current_indent += marker.chars().count();
                self.current.push(Span::styled(marker, self.theme.accent()));
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { .. } => self.push_style(|s| s.add_modifier(Modifier::UNDERLINED)),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.pending_gap = true;
            }
            TagEnd::Heading(_) => {
                self.pop_style();
                self.flush();
                self.pending_gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.pending_gap = true;
            }
            TagEnd::CodeBlock => {
                self.in_code_block = false;
                self.pending_gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.pending_gap = true;
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link => {
                self.pop_style()
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(md: &str) -> Vec<String> {
        render(md, &Theme::new(true))
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn headings_paragraphs_and_lists() {
        assert_eq!(
            lines("# Title\n\nSome *text* here.\n\n- one\n- two\n  1. nested\n"),
            [
                "# Title",
                "",
                "Some text here.",
                "",
                "• one",
                "• two",
                "  1. nested"
            ]
        );
    }

    #[test]
    fn code_block_is_preformatted() {
        let out = render("```rust\nfn main() {}\n```\n", &Theme::new(true));
        assert_eq!(out.len(), 2);
        assert!(out[1].preformatted);
        assert_eq!(out[1].spans[1].content, "fn main() {}");
    }

    #[test]
    fn emphasis_and_inline_code_are_styled() {
        let out = render("a **b** `c` _d_", &Theme::new(true));
        let spans = &out[0].spans;
        let find = |t: &str| spans.iter().find(|s| s.content == t).map(|s| s.style);
        assert!(find("b").is_some_and(|s| s.add_modifier.contains(Modifier::BOLD)));
        assert_eq!(find("c"), Some(Theme::new(true).code()));
        assert!(find("d").is_some_and(|s| s.add_modifier.contains(Modifier::ITALIC)));
    }
}
