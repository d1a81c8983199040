//! Markdown (as models write it) to styled logical lines: headings, lists, code blocks,
//! inline code, emphasis, quotes, rules. Input is already sanitized; unknown constructs
//! degrade to their text.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::theme::Theme;
use crate::wrap::LogicalLine;

struct ListState {
    next_number: Option<u64>,
}

struct Renderer<'t> {
    theme: &'t Theme,
    out: Vec<LogicalLine>,
    /// Lines were rendered before `out` started (kept blocks of a streamed message).
    prior_output: bool,
    current: Vec<Span<'static>>,
    current_indent: usize,
    styles: Vec<Style>,
    lists: Vec<ListState>,
    quote_depth: usize,
    in_code_block: bool,
    /// Colours for the open code block, when its fence names a language syntect knows.
    highlighter: Option<super::highlight::CodeHighlighter>,
    /// A blank line is due before the next block (paragraph spacing).
    pending_gap: bool,
}

const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH;

pub fn render(text: &str, theme: &Theme) -> Vec<LogicalLine> {
    let mut r = Renderer::new(theme, false, false);
    for event in Parser::new_ext(text, OPTIONS) {
        r.event(event);
    }
    r.flush();
    r.out
}

/// A message that is still arriving, rendered in two parts: the leading blocks that no later
/// text can change any more (rendered once and kept) and the rest, which [`Streamed::advance`]
/// renders again. A delta then costs the size of the last block, not of the message.
///
/// A block is kept once the next top-level block has started on a complete line: block
/// structure is decided line by line, so text appended after that line can neither extend
/// the earlier block nor turn it into something else (a setext underline or a lazy
/// continuation would have to come before that line). What stays global is link reference
/// definitions, which may follow the links they define; the transcript renders a finished
/// message that has any in one piece.
#[derive(Debug, Default)]
pub struct Streamed {
    /// Byte offset of the first line not yet kept (always a line start).
    cut: usize,
    /// Paragraph spacing due at `cut`.
    gap_at_cut: bool,
    stable: Vec<LogicalLine>,
}

impl Streamed {
    /// The lines of the kept blocks.
    pub fn stable(&self) -> &[LogicalLine] {
        &self.stable
    }

    /// Renders `text`, which extends the text of the previous call (or is the first one):
    /// blocks that became final move to [`Streamed::stable`], the lines of the rest are
    /// returned. Together they are what [`render`] gives for the same text.
    pub fn advance(&mut self, text: &str, theme: &Theme) -> Vec<LogicalLine> {
        let Some(tail) = text.get(self.cut..) else {
            // Not an extension of what was rendered (cannot happen with append-only text):
            // start over rather than guess.
            *self = Streamed::default();
            return self.advance(text, theme);
        };
        let mut r = Renderer::new(theme, self.gap_at_cut, !self.stable.is_empty());
        let mut depth = 0usize;
        let mut block_ended = false;
        // (offset in `tail`, lines rendered before it, spacing due there)
        let mut last_cut: Option<(usize, usize, bool)> = None;
        for (event, range) in Parser::new_ext(tail, OPTIONS).into_offset_iter() {
            let starts_block = depth == 0 && matches!(event, Event::Start(_) | Event::Rule);
            if starts_block && block_ended && r.idle() {
                let line_start = tail[..range.start].rfind('\n').map_or(0, |i| i + 1);
                let line_complete = tail[range.start..].contains('\n');
                if line_start > 0 && line_complete {
                    last_cut = Some((line_start, r.out.len(), r.pending_gap));
                }
            }
            match &event {
                Event::Start(_) => depth += 1,
                Event::End(_) => {
                    depth = depth.saturating_sub(1);
                    block_ended |= depth == 0;
                }
                Event::Rule if depth == 0 => block_ended = true,
                _ => {}
            }
            r.event(event);
        }
        r.flush();
        let mut out = r.out;
        match last_cut {
            Some((offset, kept, gap)) => {
                let rest = out.split_off(kept);
                self.stable.extend(out);
                self.cut += offset;
                self.gap_at_cut = gap;
                rest
            }
            None => out,
        }
    }
}

impl<'t> Renderer<'t> {
    /// `pending_gap` and `prior_output` carry the spacing state over from kept blocks.
    fn new(theme: &'t Theme, pending_gap: bool, prior_output: bool) -> Self {
        Renderer {
            theme,
            out: Vec::new(),
            prior_output,
            current: Vec::new(),
            current_indent: 0,
            styles: vec![Style::new()],
            lists: Vec::new(),
            quote_depth: 0,
            in_code_block: false,
            highlighter: None,
            pending_gap,
        }
    }

    /// Between top-level blocks with nothing carried into the next one.
    fn idle(&self) -> bool {
        self.current.is_empty()
            && self.lists.is_empty()
            && self.quote_depth == 0
            && !self.in_code_block
            && self.styles.len() == 1
    }

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
        if self.pending_gap && (self.prior_output || !self.out.is_empty()) && self.lists.is_empty()
        {
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
                match self.highlighter.as_mut().and_then(|h| h.line(line)) {
                    Some(coloured) => spans.extend(coloured),
                    None => spans.push(Span::styled(line.to_string(), self.theme.code())),
                }
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
                    // Colours only where colours are on (NO_COLOR keeps the code style).
                    if self.theme.color {
                        self.highlighter = super::highlight::CodeHighlighter::for_fence(&lang);
                    }
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
                self.highlighter = None;
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
        // Highlighted: the line comes in several spans after the indent.
        let code: String = out[1].spans[1..]
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(code, "fn main() {}");
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

    /// Everything a model writes, in the constructs that decide block boundaries: setext
    /// underlines, lazy continuations, loose lists, fences with blank lines, HTML blocks,
    /// quotes, rules that could be underlines.
    const SAMPLES: &[&str] = &[
        "# Title\n\nSome *text* here.\n\n- one\n- two\n  1. nested\n\nAfter the list.\n",
        "para one\nstill one\n===\n\npara two\n---\nthird\n\n***\n\nlast\n",
        "- a\n\n- b\n\n  more b\nlazy\n\nnot a list\n- but this is\n",
        "```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\nafter code\n\n```\nunclosed\n\nstill code",
        "> quote\nlazy line\n\n> > deeper\n\nplain\n    indented is not code here\n\n    but here it is\n\nend",
        "<div>\n\n<span>x</span>\n\n</div>\ntext after html\n\n<!-- c\n\n-->\npara",
        "1. first\n2. second\n\n3) other\n\n## h2\ntext\n### h3\n- [x] done\n- [ ] todo\n",
        "para\n```x`\nstill para?\n\n~~struck~~ and `code` and **bold _both_**\n",
    ];

    fn plain(lines: &[LogicalLine]) -> Vec<LogicalLine> {
        lines.to_vec()
    }

    /// Streamed in pieces of every small size, the kept blocks plus the rest equal a full
    /// render of the text so far — after every single piece.
    #[test]
    fn streaming_in_pieces_renders_like_the_whole_text() {
        let theme = Theme::new(true);
        for sample in SAMPLES {
            for step in [1usize, 2, 3, 5, 8, 13] {
                let mut streamed = Streamed::default();
                let chars: Vec<char> = sample.chars().collect();
                let mut text = String::new();
                for chunk in chars.chunks(step) {
                    text.extend(chunk);
                    let rest = streamed.advance(&text, &theme);
                    let mut got = plain(streamed.stable());
                    got.extend(rest);
                    assert_eq!(
                        got,
                        render(&text, &theme),
                        "sample {sample:?} in steps of {step}, at {text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_long_message_keeps_its_finished_blocks() {
        let theme = Theme::new(true);
        let mut streamed = Streamed::default();
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!(
                "Paragraph {i} with **bold** text.\n\n- item\n- item\n\n"
            ));
            streamed.advance(&text, &theme);
        }
        text.push_str("the last paragraph is still arriving");
        let rest = streamed.advance(&text, &theme);
        // Only the open paragraph and the list before it (whose end was not certain until
        // the paragraph's line is complete) are rendered again: gap, 2 items, gap, paragraph.
        assert_eq!(rest.len(), 5, "{rest:?}");
        assert!(streamed.stable().len() > 900, "{}", streamed.stable().len());
    }

    proptest::proptest! {
        /// Any split of a message into deltas renders like the whole message.
        #[test]
        fn any_split_renders_like_the_whole(
            sample in 0..SAMPLES.len(),
            cuts in proptest::collection::vec(0usize..200, 0..12),
        ) {
            let theme = Theme::new(false);
            let text = SAMPLES[sample];
            let mut points: Vec<usize> = cuts
                .into_iter()
                .map(|c| c % (text.len() + 1))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            points.push(text.len());
            points.sort_unstable();
            let mut streamed = Streamed::default();
            let mut rest = Vec::new();
            for p in points {
                rest = streamed.advance(&text[..p], &theme);
            }
            let mut got = plain(streamed.stable());
            got.extend(rest);
            proptest::prop_assert_eq!(got, render(text, &theme));
        }
    }
}
