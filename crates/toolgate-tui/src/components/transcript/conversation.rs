//! The conversation: the transcript's visible lines (or a welcome text before the first
//! message) and, when the user scrolled up, a marker that more is below.
//!
//! The welcome teaches (issue 45): the scripted demo names what to type, since a newcomer
//! cannot guess what it understands; a real model's names the servers and rules in force.

use std::path::Path;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Paragraph, Widget};

use super::state::{Scroll, Transcript};
use crate::components::draw::draw_lines;
use crate::components::overlays::RuleLine;
use crate::theme::Theme;
use crate::wrap::{LogicalLine, wrap_lines};
use toolgate_protocol::ServerInfo;

pub struct Conversation<'a> {
    pub transcript: &'a Transcript,
    pub scroll: Scroll,
    /// Output arrived while the user was scrolled up.
    pub unseen_below: bool,
    pub theme: &'a Theme,
    /// For the welcome text.
    pub model_label: &'a str,
    pub workspace: &'a Path,
    /// The configured servers and the rules in force, for the welcome text.
    pub servers: &'a [ServerInfo],
    pub rules: &'a [RuleLine],
}

/// What the scripted demo understands, as the welcome suggests it: every message starts its
/// deploy walk (assets/scenarios/deploy_demo.json), and `/help` is the console's own.
/// Where a suggestion's explanation starts: two spaces, then 18 columns for what to type.
const SUGGESTION_COLUMN: usize = 20;

const DEMO_SUGGESTIONS: &[(&str, &str)] = &[
    (
        "deploy web",
        "connects the docs and deploy servers, then asks you before it deploys",
    ),
    (
        "what can you do?",
        "the same walk: watch the tool pool on the right grow",
    ),
    ("/help", "keys and commands"),
];

impl Conversation<'_> {
    fn welcome(&self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let model = if self.model_label.is_empty() {
            "starting…"
        } else {
            self.model_label
        };
        let mut welcome = vec![
            LogicalLine::plain(vec![
                Span::styled("toolgate", t.heading()),
                Span::styled(format!(" · {model}"), t.dim()),
            ]),
            LogicalLine::plain(vec![Span::styled(
                format!(
                    "workspace {}",
                    toolgate_base::sanitize::for_terminal(&self.workspace.display().to_string())
                ),
                t.dim(),
            )]),
            LogicalLine::blank(),
        ];
        if self.model_label == toolgate_protocol::SCRIPTED_MODEL_LABEL {
            welcome.push(LogicalLine::plain(vec![Span::raw(
                "This is the scripted demo (no API key needed). Try typing:",
            )]));
            for (typed, what) in DEMO_SUGGESTIONS {
                let mut line = LogicalLine::plain(vec![
                    Span::styled(format!("  {typed:<18}"), t.accent()),
                    Span::styled(*what, t.dim()),
                ]);
                // A narrow conversation wraps the explanation under itself, not under
                // the suggestion's column.
                line.continuation_indent = SUGGESTION_COLUMN;
                welcome.push(line);
            }
            welcome.push(LogicalLine::blank());
        }
        welcome.push(LogicalLine::plain(vec![Span::raw(
            "Ask the agent something. Tools it may use are listed on the right; \
             anything that is not allowed by a rule asks you first.",
        )]));
        if self.model_label != toolgate_protocol::SCRIPTED_MODEL_LABEL
            && !self.model_label.is_empty()
        {
            welcome.push(LogicalLine::blank());
            welcome.push(LogicalLine::plain(vec![Span::styled(
                self.in_force(),
                t.dim(),
            )]));
        }
        draw_lines(&wrap_lines(&welcome, area.width as usize), area, buf);
    }
}

impl Conversation<'_> {
    /// "Servers: docs, deploy · rules: 3 allow, 1 ask, 2 deny (/permissions)".
    fn in_force(&self) -> String {
        let servers: Vec<String> = self
            .servers
            .iter()
            .map(|s| toolgate_base::sanitize::for_terminal(&s.name))
            .collect();
        let servers = match servers.is_empty() {
            true => "no servers configured".to_string(),
            false => format!("Servers: {}", servers.join(", ")),
        };
        let count = |decision: &str| self.rules.iter().filter(|r| r.decision == decision).count();
        format!(
            "{servers} · rules: {} allow, {} ask, {} deny (/permissions lists them, /mcp the servers)",
            count("allow"),
            count("ask"),
            count("deny")
        )
    }
}

impl Widget for Conversation<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        if self.transcript.is_empty() {
            return self.welcome(area, buf);
        }
        let (lines, more_below) =
            self.transcript
                .visible(self.scroll, area.width, area.height as usize);
        draw_lines(&lines, area, buf);
        if self.scroll != Scroll::Follow && (self.unseen_below || more_below) {
            let label = if self.unseen_below {
                " ↓ new output below · Ctrl+End "
            } else {
                " ↓ more below · Ctrl+End "
            };
            let w = (label.chars().count() as u16).min(area.width);
            let marker = Rect::new(area.right() - w, area.bottom() - 1, w, 1);
            Paragraph::new(Span::styled(label, self.theme.selected())).render(marker, buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Modifier;

    use super::*;
    use crate::components::draw::testing::{assert_shows, render, row_of, text};
    use crate::components::transcript::state::{EntryKind, ToolCard, ToolState};
    use crate::protocol::ToolOutcome;

    fn widget<'a>(
        transcript: &'a Transcript,
        theme: &'a Theme,
        scroll: Scroll,
    ) -> Conversation<'a> {
        Conversation {
            transcript,
            scroll,
            unseen_below: false,
            theme,
            model_label: "scripted demo",
            workspace: Path::new("/home/dev/project"),
            servers: &[],
            rules: &[],
        }
    }

    #[test]
    fn welcome_before_the_first_message() {
        let theme = Theme::new(true);
        let transcript = Transcript::new(theme);
        let screen = text(&render(widget(&transcript, &theme, Scroll::Follow), 50, 8));
        assert!(screen.contains("toolgate · scripted demo"), "{screen}");
        insta::assert_snapshot!(screen);
    }

    #[test]
    fn messages_cards_and_the_streaming_cursor() {
        let theme = Theme::new(true);
        let mut transcript = Transcript::new(theme);
        transcript.push(EntryKind::User("what version is the docs server?".into()));
        transcript.push(EntryKind::Tool(ToolCard {
            call_id: "c1".into(),
            name: "mcp__docs__get_version".into(),
            server: Some("docs".into()),
            args_summary: String::new(),
            state: ToolState::Finished(ToolOutcome::Ok),
            output: "1.4.2".into(),
            decided: Some("allowed by rule mcp__docs__get_version".into()),
            images: Vec::new(),
        }));
        transcript.append_text("It is **1.4.2**.\n\n- released today\n- ");
        let buf = render(widget(&transcript, &theme, Scroll::Follow), 60, 12);
        let screen = text(&buf);
        assert_shows(
            &screen,
            &["› what version is the docs server?", "• released today"],
        );
        assert!(screen.contains("▍"), "streaming cursor missing:\n{screen}");
        let y = row_of(&buf, "It is 1.4.2.").expect("answer row");
        let bold = (0..60)
            .any(|x| buf[(x, y)].symbol() == "1" && buf[(x, y)].modifier.contains(Modifier::BOLD));
        assert!(bold, "**1.4.2** is not bold");
        insta::assert_snapshot!(screen);
    }

    #[test]
    fn scrolled_up_shows_the_more_below_marker() {
        let theme = Theme::new(true);
        let mut transcript = Transcript::new(theme);
        for i in 0..20 {
            transcript.push(EntryKind::Notice(format!("message {i}")));
        }
        let up = transcript.scroll_up(Scroll::Follow, 10, 40, 6);
        let mut conversation = widget(&transcript, &theme, up);
        conversation.unseen_below = true;
        let screen = text(&render(conversation, 40, 6));
        assert!(!screen.contains("message 19"), "{screen}");
        assert!(screen.contains("↓ new output below · Ctrl+End"), "{screen}");
        insta::assert_snapshot!(screen);
    }
}
