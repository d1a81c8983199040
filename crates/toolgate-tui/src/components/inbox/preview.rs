//! The details part of the modal: a question's preview (the coloured unified diff of a file
//! change, a bash command highlighted as shell, or the one-line reason no diff is shown), or
//! the raw arguments, toggled with [`RAW_KEY`]. The preview itself was built on the agent's
//! side; this only cleans and draws it.

use ratatui::style::Style;
use ratatui::text::Span;

use super::state::{Entry, RAW_KEY};
use crate::components::draw::text;
use crate::components::transcript::highlight::CodeHighlighter;
use crate::components::transcript::markdown;
use crate::protocol::questions::{DiffKind, DiffLine, Preview};
use crate::theme::Theme;
use crate::wrap::LogicalLine;

/// The heading and lines of the details the modal shows for `entry` (a plan's are
/// markdown).
pub fn details(entry: &Entry, t: &Theme) -> (String, Vec<LogicalLine>) {
    let raw = || {
        let title = match entry.preview {
            Some(_) => format!(
                "{} ({RAW_KEY}: back to the preview):",
                entry.card.details_title
            ),
            None => format!("{}:", entry.card.details_title),
        };
        if entry.markdown {
            return (title, markdown::render(&entry.card.details, t));
        }
        (
            title,
            code_lines(&entry.card.details, |l| plain(l, t.code())),
        )
    };
    let Some(preview) = entry.preview.as_ref().filter(|_| !entry.raw) else {
        return raw();
    };
    let json = format!("{RAW_KEY}: arguments as JSON");
    match preview {
        Preview::Diff(diff) => {
            let what = if diff.new_file { "new file" } else { "diff" };
            let title = format!("{what} {} ({}) · {json}:", diff.path, diff.stat());
            let mut lines: Vec<LogicalLine> = diff.lines.iter().map(|l| diff_line(l, t)).collect();
            if diff.lines.is_empty() {
                lines.push(text("  (no change to the file's content)", t.dim()));
            }
            if diff.more > 0 {
                lines.push(text(format!("  … {} more lines", diff.more), t.dim()));
            }
            (title, lines)
        }
        Preview::NoDiff { path, reason } => {
            let title = match path {
                Some(path) => format!("diff {path} · {json}:"),
                None => format!("diff · {json}:"),
            };
            (title, vec![text(format!("  no diff: {reason}"), t.warn())])
        }
        Preview::Shell { command } => {
            let mut highlighter = t
                .color
                .then(|| CodeHighlighter::for_fence("bash"))
                .flatten();
            let lines = code_lines(command, |l| {
                match highlighter.as_mut().and_then(|h| h.line(l)) {
                    Some(spans) => spans,
                    None => plain(l, t.code()),
                }
            });
            (format!("command · {json}:"), lines)
        }
    }
}

/// One line for the inbox list: "diff src/a.rs +3 -1", "new file notes.md +12", the
/// command's first line.
pub fn summary(preview: &Preview) -> Option<String> {
    match preview {
        Preview::Diff(diff) if diff.new_file => {
            Some(format!("new file {} +{}", diff.path, diff.added))
        }
        Preview::Diff(diff) => Some(format!("diff {} {}", diff.path, diff.stat())),
        Preview::NoDiff { path, .. } => path.as_ref().map(|p| format!("{p} (no diff)")),
        Preview::Shell { command } => command.lines().next().map(|l| format!("$ {l}")),
    }
}

fn plain(line: &str, style: Style) -> Vec<Span<'static>> {
    vec![Span::styled(line.to_string(), style)]
}

/// Preformatted lines indented by two, each styled by `spans`.
fn code_lines(body: &str, mut spans: impl FnMut(&str) -> Vec<Span<'static>>) -> Vec<LogicalLine> {
    body.lines()
        .map(|l| {
            let mut line = vec![Span::raw("  ")];
            line.extend(spans(l));
            LogicalLine {
                spans: line,
                continuation_indent: 2,
                preformatted: true,
            }
        })
        .collect()
}

fn diff_line(line: &DiffLine, t: &Theme) -> LogicalLine {
    let (sign, style) = match line.kind {
        DiffKind::Hunk => ("", t.accent()),
        DiffKind::Context => (" ", t.plain()),
        DiffKind::Removed => ("-", t.diff_removed()),
        DiffKind::Added => ("+", t.diff_added()),
    };
    LogicalLine {
        spans: vec![Span::styled(format!("  {sign}{}", line.text), style)],
        continuation_indent: 3,
        preformatted: true,
    }
}
