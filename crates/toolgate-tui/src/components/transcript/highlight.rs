//! Colours for fenced code blocks that name their language (decision 0079), with syntect's
//! packaged syntaxes and its `base16-ocean.dark` theme. The syntaxes are loaded on the first
//! such block, not at start-up, so the first frame does not pay for them. Without colour
//! (NO_COLOR) or for a language syntect does not know, the block stays in the code style.

use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

const THEME: &str = "base16-ocean.dark";

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn assets() -> Option<&'static Assets> {
    static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();
    ASSETS
        .get_or_init(|| {
            let theme = ThemeSet::load_defaults().themes.remove(THEME)?;
            Some(Assets {
                syntaxes: SyntaxSet::load_defaults_newlines(),
                theme,
            })
        })
        .as_ref()
}

/// One code block's highlighter: it carries the parser's state from line to line (a
/// string or comment that spans lines).
pub struct CodeHighlighter {
    lines: HighlightLines<'static>,
    syntaxes: &'static SyntaxSet,
}

impl CodeHighlighter {
    /// For a fence's info string (`rust`, `sh title="x"`, `py,ignore`); None when the
    /// language is unknown.
    pub fn for_fence(info: &str) -> Option<CodeHighlighter> {
        let token = info
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
            .next()
            .filter(|t| !t.is_empty())?;
        let assets = assets()?;
        let syntax = assets.syntaxes.find_syntax_by_token(token)?;
        Some(CodeHighlighter {
            lines: HighlightLines::new(syntax, &assets.theme),
            syntaxes: &assets.syntaxes,
        })
    }

    /// The spans of the next line of the block (without its line break); None if the
    /// parser failed (the line is then drawn plain).
    pub fn line(&mut self, line: &str) -> Option<Vec<Span<'static>>> {
        // The packaged syntaxes expect each line with its newline.
        let with_break = format!("{line}\n");
        let pieces = self.lines.highlight_line(&with_break, self.syntaxes).ok()?;
        Some(
            pieces
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    (!text.is_empty()).then(|| {
                        let c = style.foreground;
                        Span::styled(text.to_string(), Style::new().fg(Color::Rgb(c.r, c.g, c.b)))
                    })
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_language_gets_more_than_one_colour_and_an_unknown_none() {
        let mut rust = CodeHighlighter::for_fence("rust,ignore").unwrap();
        let spans = rust.line("fn main() { let x = \"hi\"; }").unwrap();
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "fn main() { let x = \"hi\"; }");
        let colours: std::collections::HashSet<_> = spans.iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "{spans:?}");
        assert!(CodeHighlighter::for_fence("no-such-language").is_none());
        assert!(CodeHighlighter::for_fence("").is_none());
    }
}
