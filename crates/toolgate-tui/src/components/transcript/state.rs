//! The conversation: entries (user, assistant Markdown, tool-call cards, notices), each with
//! its wrapped lines cached per width, and a viewport that touches only the entries it
//! shows, so a frame costs the same for 100 or 10,000 messages.

use std::cell::{Ref, RefCell};

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::markdown;
use crate::protocol::ToolOutcome;
use crate::theme::Theme;
use crate::wrap::{LogicalLine, wrap_lines};

/// Lines of a finished tool result shown while its card is collapsed.
const COLLAPSED_RESULT_LINES: usize = 3;
/// Even expanded, a result longer than this is cut (the model still got all of it).
const EXPANDED_RESULT_LINES: usize = 400;

#[derive(Debug, Clone, PartialEq)]
pub enum ToolState {
    Running {
        progress: Option<(f64, Option<f64>)>,
        message: Option<String>,
    },
    Finished(ToolOutcome),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    pub call_id: String,
    pub name: String,
    pub server: Option<String>,
    pub args_summary: String,
    pub state: ToolState,
    pub output: String,
    /// Who let the call run or stopped it ("allowed by rule Read(**)", "you answered:
    /// allow once"), so a call that ran without a question still says why.
    pub decided: Option<String>,
    /// Images the call returned (type and size); they went to the model as images.
    pub images: Vec<crate::protocol::ImageSummary>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    User(String),
    Assistant {
        text: String,
        streaming: bool,
    },
    /// The model's thinking: collapsed to a line unless tool results are expanded.
    Thinking {
        text: String,
        streaming: bool,
    },
    Tool(ToolCard),
    Notice(String),
    Error(String),
}

struct WrapCache {
    width: u16,
    expanded: bool,
    lines: Vec<Line<'static>>,
}

/// An assistant message rendered block by block ([`markdown::Streamed`]): the kept blocks are
/// parsed and wrapped once; a delta re-renders only the last, unfinished block.
#[derive(Default)]
struct StreamCache {
    md: markdown::Streamed,
    /// Length of the text (it only grows) and the cursor state the lines show.
    text_len: usize,
    streaming: bool,
    width: u16,
    lines: Vec<Line<'static>>,
    /// `md.stable()[..kept_logical]` are wrapped in `lines[..kept_lines]`.
    kept_logical: usize,
    kept_lines: usize,
}

impl StreamCache {
    fn is_fresh(&self, text: &str, streaming: bool, width: u16) -> bool {
        self.width == width && self.text_len == text.len() && self.streaming == streaming
    }

    fn refresh(&mut self, text: &str, streaming: bool, width: u16, theme: &Theme) {
        if text.len() < self.text_len {
            *self = StreamCache::default();
        }
        if self.width != width {
            self.width = width;
            self.lines.clear();
            self.kept_logical = 0;
            self.kept_lines = 0;
        }
        let mut rest = self.md.advance(text, theme);
        self.lines.truncate(self.kept_lines);
        let stable = self.md.stable();
        if let Some(new) = stable.get(self.kept_logical..) {
            self.lines.extend(wrap_lines(new, width as usize));
        }
        self.kept_logical = stable.len();
        self.kept_lines = self.lines.len();
        if streaming {
            push_cursor(&mut rest, theme);
        }
        rest.push(LogicalLine::blank());
        self.lines.extend(wrap_lines(&rest, width as usize));
        self.text_len = text.len();
        self.streaming = streaming;
    }
}

enum Cache {
    Empty,
    /// The whole entry wrapped at one width.
    Whole(WrapCache),
    Stream(StreamCache),
}

pub struct Entry {
    kind: EntryKind,
    cache: RefCell<Cache>,
}

impl Entry {
    fn new(kind: EntryKind) -> Self {
        Entry {
            kind,
            cache: RefCell::new(Cache::Empty),
        }
    }

    fn invalidate(&mut self) {
        *self.cache.get_mut() = Cache::Empty;
    }

    /// Brings the cache up to date for `width`; a pure function of the entry, so filling
    /// it while drawing changes nothing anyone can observe except the time it takes.
    fn refresh(&self, width: u16, expanded: bool, theme: &Theme) {
        let mut cache = self.cache.borrow_mut();
        if let EntryKind::Assistant { text, streaming } = &self.kind {
            match &mut *cache {
                Cache::Stream(s) if s.is_fresh(text, *streaming, width) => return,
                Cache::Whole(c) if c.width == width => return,
                Cache::Stream(s) => {
                    // Link reference definitions may follow the links they define, which
                    // block-by-block rendering cannot know; a finished message that has
                    // one is rendered in one piece (once).
                    if !*streaming && text.contains("]:") {
                        *cache = Cache::Empty;
                    } else {
                        s.refresh(text, *streaming, width, theme);
                        return;
                    }
                }
                Cache::Whole(_) | Cache::Empty if *streaming || !text.contains("]:") => {
                    let mut s = StreamCache::default();
                    s.refresh(text, *streaming, width, theme);
                    *cache = Cache::Stream(s);
                    return;
                }
                _ => {}
            }
        } else if matches!(&*cache, Cache::Whole(c) if c.width == width && c.expanded == expanded) {
            return;
        }
        let lines = wrap_lines(&render_entry(&self.kind, theme, expanded), width as usize);
        *cache = Cache::Whole(WrapCache {
            width,
            expanded,
            lines,
        });
    }
}

/// Top line of the viewport, or glued to the bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scroll {
    #[default]
    Follow,
    /// (entry index, line within that entry) of the first visible line.
    Anchored { entry: usize, line: usize },
}

pub struct Transcript {
    entries: Vec<Entry>,
    theme: Theme,
    pub expand_tools: bool,
}

impl Transcript {
    pub fn new(theme: Theme) -> Self {
        Transcript {
            entries: Vec::new(),
            theme,
            expand_tools: false,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> impl Iterator<Item = &EntryKind> {
        self.entries.iter().map(|e| &e.kind)
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn push(&mut self, kind: EntryKind) {
        self.close_stream();
        self.close_thinking();
        self.entries.push(Entry::new(kind));
    }

    /// Appends streamed thinking to the open thinking entry, opening one if needed.
    pub fn append_thinking(&mut self, delta: &str) {
        if let Some(last) = self.entries.last_mut()
            && let EntryKind::Thinking {
                text,
                streaming: true,
            } = &mut last.kind
        {
            text.push_str(delta);
            last.invalidate();
            return;
        }
        self.push(EntryKind::Thinking {
            text: delta.to_string(),
            streaming: true,
        });
    }

    /// The thinking entry being streamed is done (the answer or a tool call follows).
    fn close_thinking(&mut self) {
        if let Some(last) = self.entries.last_mut()
            && let EntryKind::Thinking { streaming, .. } = &mut last.kind
            && *streaming
        {
            *streaming = false;
            last.invalidate();
        }
    }

    /// Appends streamed text to the open assistant message, opening one if needed.
    pub fn append_text(&mut self, delta: &str) {
        self.close_thinking();
        if let Some(last) = self.entries.last_mut()
            && let EntryKind::Assistant {
                text,
                streaming: true,
            } = &mut last.kind
        {
            // The stream cache notices the longer text and renders only its last block.
            text.push_str(delta);
            return;
        }
        self.entries.push(Entry::new(EntryKind::Assistant {
            text: delta.to_string(),
            streaming: true,
        }));
    }

    /// Ends the streaming paragraph (the cursor mark disappears).
    pub fn close_stream(&mut self) {
        if let Some(last) = self.entries.last_mut()
            && let EntryKind::Assistant { streaming, .. } = &mut last.kind
            && *streaming
        {
            // The stream cache notices and drops the cursor.
            *streaming = false;
        }
    }

    /// The last user entry, if it is the last entry of all (to de-duplicate the echo).
    pub fn last_user_text(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::User(t) => Some(t.as_str()),
            _ => None,
        })
    }

    pub fn update_tool(&mut self, call_id: &str, f: impl FnOnce(&mut ToolCard)) -> bool {
        for entry in self.entries.iter_mut().rev() {
            if let EntryKind::Tool(card) = &mut entry.kind
                && card.call_id == call_id
            {
                f(card);
                entry.invalidate();
                return true;
            }
        }
        false
    }

    /// Marks every still-running card as cancelled (the turn ended without their result).
    pub fn cancel_running_tools(&mut self) {
        for entry in self.entries.iter_mut() {
            if let EntryKind::Tool(card) = &mut entry.kind
                && matches!(card.state, ToolState::Running { .. })
            {
                card.state = ToolState::Finished(ToolOutcome::Cancelled);
                entry.invalidate();
            }
        }
    }

    /// Wrapped lines of one entry at `width`, from the cache when possible.
    fn lines(&self, index: usize, width: u16) -> Option<Ref<'_, Vec<Line<'static>>>> {
        let entry = self.entries.get(index)?;
        entry.refresh(width, self.expand_tools, &self.theme);
        Some(Ref::map(entry.cache.borrow(), |c| match c {
            Cache::Whole(c) => &c.lines,
            Cache::Stream(s) => &s.lines,
            // Filled just above; an empty list keeps this total without a panic path.
            Cache::Empty => &EMPTY_LINES,
        }))
    }

    fn height(&self, index: usize, width: u16) -> usize {
        self.lines(index, width).map_or(0, |l| l.len())
    }

    /// The anchor that shows the last `height` lines.
    pub fn bottom_anchor(&self, width: u16, height: usize) -> (usize, usize) {
        let mut remaining = height;
        for i in (0..self.entries.len()).rev() {
            let h = self.height(i, width);
            if h >= remaining {
                return (i, h - remaining);
            }
            remaining -= h;
        }
        (0, 0)
    }

    fn resolve(&self, scroll: Scroll, width: u16, height: usize) -> (usize, usize) {
        match scroll {
            Scroll::Follow => self.bottom_anchor(width, height),
            Scroll::Anchored { entry, line } => {
                let bottom = self.bottom_anchor(width, height);
                if (entry, line) > bottom {
                    bottom
                } else {
                    (entry, line)
                }
            }
        }
    }

    /// The lines the viewport shows, and whether more lines follow below it.
    pub fn visible(&self, scroll: Scroll, width: u16, height: usize) -> (Vec<Line<'static>>, bool) {
        let (mut entry, mut line) = self.resolve(scroll, width, height);
        let mut out = Vec::with_capacity(height);
        while out.len() < height {
            let Some(lines) = self.lines(entry, width) else {
                break;
            };
            let take = (height - out.len()).min(lines.len().saturating_sub(line));
            out.extend(lines[line..line + take].iter().cloned());
            if line + take < lines.len() {
                return (out, true);
            }
            entry += 1;
            line = 0;
        }
        let more = entry < self.entries.len() && self.height(entry, width) > line;
        (out, more)
    }

    /// Moves the viewport `n` lines up.
    pub fn scroll_up(&self, scroll: Scroll, n: usize, width: u16, height: usize) -> Scroll {
        let (mut entry, mut line) = self.resolve(scroll, width, height);
        let mut n = n;
        while n > 0 {
            if line >= n {
                line -= n;
                break;
            }
            n -= line;
            if entry == 0 {
                line = 0;
                break;
            }
            entry -= 1;
            line = self.height(entry, width);
        }
        Scroll::Anchored { entry, line }
    }

    /// Moves the viewport `n` lines down; reaching the bottom resumes following.
    pub fn scroll_down(&self, scroll: Scroll, n: usize, width: u16, height: usize) -> Scroll {
        let Scroll::Anchored { .. } = scroll else {
            return Scroll::Follow;
        };
        let (mut entry, mut line) = self.resolve(scroll, width, height);
        let bottom = self.bottom_anchor(width, height);
        let mut n = n;
        while n > 0 && (entry, line) < bottom {
            let h = self.height(entry, width);
            let step = n.min(h.saturating_sub(line));
            line += step;
            n -= step;
            if line >= h {
                entry += 1;
                line = 0;
            }
        }
        if (entry, line) >= bottom {
            Scroll::Follow
        } else {
            Scroll::Anchored { entry, line }
        }
    }
}

static EMPTY_LINES: Vec<Line<'static>> = Vec::new();

fn render_entry(kind: &EntryKind, theme: &Theme, expanded: bool) -> Vec<LogicalLine> {
    let mut out = match kind {
        EntryKind::User(text) => prefixed(text, "› ", theme.user(), theme.bold()),
        EntryKind::Assistant { text, streaming } => {
            let mut lines = markdown::render(text, theme);
            if *streaming {
                push_cursor(&mut lines, theme);
            }
            lines
        }
        EntryKind::Tool(card) => render_card(card, theme, expanded),
        EntryKind::Thinking { text, streaming } => {
            super::thinking::render(text, *streaming, expanded, theme)
        }
        EntryKind::Notice(text) => prefixed(text, "· ", theme.dim(), theme.dim()),
        EntryKind::Error(text) => prefixed(text, "✗ ", theme.error(), theme.error()),
    };
    out.push(LogicalLine::blank());
    out
}

/// The mark at the end of a message that is still arriving.
fn push_cursor(lines: &mut Vec<LogicalLine>, theme: &Theme) {
    match lines.last_mut() {
        Some(last) if !last.preformatted => last.spans.push(Span::styled("▍", theme.dim())),
        _ => lines.push(LogicalLine::plain(vec![Span::styled("▍", theme.dim())])),
    }
}

fn prefixed(
    text: &str,
    marker: &str,
    marker_style: ratatui::style::Style,
    style: ratatui::style::Style,
) -> Vec<LogicalLine> {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| {
            let lead = if i == 0 {
                marker.to_string()
            } else {
                " ".repeat(marker.chars().count())
            };
            LogicalLine {
                spans: vec![
                    Span::styled(lead, marker_style),
                    Span::styled(line.to_string(), style),
                ],
                continuation_indent: marker.chars().count(),
                preformatted: false,
            }
        })
        .collect()
}

fn render_card(card: &ToolCard, theme: &Theme, expanded: bool) -> Vec<LogicalLine> {
    let (icon, icon_style) = match &card.state {
        ToolState::Running { .. } => ("◌", theme.warn()),
        ToolState::Finished(ToolOutcome::Ok) => ("●", theme.ok()),
        ToolState::Finished(ToolOutcome::Error) => ("●", theme.error()),
        ToolState::Finished(ToolOutcome::Denied) => ("⊘", theme.error()),
        ToolState::Finished(ToolOutcome::Cancelled) => ("⊘", theme.dim()),
    };
    let mut head = vec![
        Span::styled(format!("{icon} "), icon_style),
        Span::styled(card.name.clone(), theme.bold()),
    ];
    if let Some(server) = &card.server {
        head.push(Span::styled(format!(" ({server})"), theme.dim()));
    }
    if !card.args_summary.is_empty() {
        head.push(Span::raw(" "));
        head.push(Span::styled(card.args_summary.clone(), theme.dim()));
    }
    let mut out = vec![LogicalLine {
        spans: head,
        continuation_indent: 2,
        preformatted: false,
    }];
    let status = match &card.state {
        ToolState::Running { progress, message } => {
            let mut s = "running…".to_string();
            match progress {
                Some((p, Some(total))) if *total > 0.0 => {
                    s.push_str(&format!(" {:.0}%", (p / total * 100.0).clamp(0.0, 100.0)))
                }
                Some((p, _)) => s.push_str(&format!(" {p}")),
                None => {}
            }
            if let Some(m) = message {
                s.push_str(&format!(" {m}"));
            }
            Span::styled(s, theme.warn())
        }
        ToolState::Finished(ToolOutcome::Ok) => Span::styled("ok", theme.ok()),
        ToolState::Finished(ToolOutcome::Error) => Span::styled("error", theme.error()),
        ToolState::Finished(ToolOutcome::Denied) => Span::styled("denied", theme.error()),
        ToolState::Finished(ToolOutcome::Cancelled) => Span::styled("cancelled", theme.dim()),
    };
    let mut status_line = vec![Span::styled("  ⎿ ", theme.dim()), status];
    if let Some(decided) = &card.decided {
        status_line.push(Span::styled(format!(" · {decided}"), theme.dim()));
    }
    out.push(LogicalLine {
        spans: status_line,
        continuation_indent: 4,
        preformatted: false,
    });
    for image in &card.images {
        out.push(LogicalLine {
            spans: vec![
                Span::raw("    "),
                Span::styled(
                    format!("[image returned: {}]", image.describe()),
                    theme.dim(),
                ),
            ],
            continuation_indent: 4,
            preformatted: false,
        });
    }
    if !card.output.is_empty() {
        let lines: Vec<&str> = card.output.lines().collect();
        let limit = if expanded {
            EXPANDED_RESULT_LINES
        } else {
            COLLAPSED_RESULT_LINES
        };
        for line in lines.iter().take(limit) {
            out.push(LogicalLine {
                spans: vec![Span::raw("    "), Span::raw(line.to_string())],
                continuation_indent: 4,
                preformatted: true,
            });
        }
        if lines.len() > limit {
            let hint = if expanded {
                format!("    … {} more lines not shown", lines.len() - limit)
            } else {
                format!(
                    "    … {} more lines (ctrl+o to expand)",
                    lines.len() - limit
                )
            };
            out.push(LogicalLine::plain(vec![Span::styled(hint, theme.dim())]));
        }
    }
    out
}

/// One-line summary of tool arguments: `key="value" n=3`, long values cut.
pub fn summarize_args(input: &Value) -> String {
    const MAX_VALUE: usize = 40;
    const MAX_TOTAL: usize = 100;
    let cut = |s: String, max: usize| -> String {
        if s.chars().count() > max {
            let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
            t.push('…');
            t
        } else {
            s
        }
    };
    let text = match input {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => format!("{:?}", s.replace('\n', " ")),
                    other => other.to_string(),
                };
                format!("{k}={}", cut(v, MAX_VALUE))
            })
            .collect::<Vec<_>>()
            .join(" "),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    cut(crate::sanitize::for_terminal(&text), MAX_TOTAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(n: usize) -> Transcript {
        let mut t = Transcript::new(Theme::new(false));
        for i in 0..n {
            t.push(EntryKind::Notice(format!("line {i}")));
        }
        t
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn follow_shows_the_end() {
        let t = transcript(10);
        let (lines, more) = t.visible(Scroll::Follow, 20, 4);
        assert_eq!(text(&lines), ["· line 8", "", "· line 9", ""]);
        assert!(!more);
    }

    #[test]
    fn scrolling_up_and_back_down_resumes_follow() {
        let t = transcript(10);
        let up = t.scroll_up(Scroll::Follow, 3, 20, 4);
        let (lines, more) = t.visible(up, 20, 4);
        assert_eq!(text(&lines), ["", "· line 7", "", "· line 8"]);
        assert!(more);
        assert_eq!(t.scroll_down(up, 3, 20, 4), Scroll::Follow);
        let top = t.scroll_up(Scroll::Follow, 1000, 20, 4);
        assert_eq!(top, Scroll::Anchored { entry: 0, line: 0 });
    }

    #[test]
    fn short_transcript_starts_at_top() {
        let t = transcript(1);
        let (lines, _) = t.visible(Scroll::Follow, 20, 5);
        assert_eq!(text(&lines), ["· line 0", ""]);
    }

    #[test]
    fn args_summary_is_short_and_clean() {
        let v = serde_json::json!({"query": "a\u{1b}[2Jb", "n": 3});
        assert_eq!(summarize_args(&v), "query=\"a\\u{1b}[2Jb\" n=3");
    }
}
