//! The status line under the composer: model, session, what the turn is doing, tokens,
//! and a hint or a short message on the right. It owns the turn's state ([`Turn`]) and
//! the spinner's pace.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::layout::Focus;
use crate::protocol::Usage;
use crate::theme::Theme;

/// Spinner frame length while a turn runs.
pub const SPINNER_FRAME: Duration = Duration::from_millis(100);
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Idle,
    Running { since: Instant, cancel_sent: bool },
}

impl Turn {
    /// A turn that starts now.
    pub fn start(now: Instant) -> Turn {
        Turn::Running {
            since: now,
            cancel_sent: false,
        }
    }

    pub fn is_running(&self) -> bool {
        matches!(self, Turn::Running { .. })
    }

    /// When the spinner shows its next frame; None while idle.
    pub fn next_frame(&self, now: Instant) -> Option<Instant> {
        match *self {
            Turn::Running { since, .. } => {
                let elapsed = now.saturating_duration_since(since);
                let frames = elapsed.as_millis() / SPINNER_FRAME.as_millis() + 1;
                Some(since + SPINNER_FRAME * frames as u32)
            }
            Turn::Idle => None,
        }
    }
}

/// A model retry being waited for: the console counts it down on the status line until
/// the next event from the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryCountdown {
    pub retry: crate::protocol::ModelRetry,
    /// When the wait ends.
    pub until: Instant,
}

impl RetryCountdown {
    pub fn new(retry: crate::protocol::ModelRetry, now: Instant) -> Self {
        let until = now + retry.wait();
        RetryCountdown { retry, until }
    }

    /// "overloaded, retrying in 12s (attempt 3)" at `now`.
    pub fn text(&self, now: Instant) -> String {
        self.retry
            .countdown(self.until.saturating_duration_since(now))
    }
}

pub struct StatusLine<'a> {
    pub model_label: &'a str,
    pub session_id: &'a str,
    pub turn: Turn,
    /// The model request the turn waits to send again, if it does.
    pub retry: Option<&'a RetryCountdown>,
    /// Questions waiting for an answer.
    pub waiting: usize,
    /// Messages and commands queued for the end of the turn.
    pub queued: usize,
    /// Why bash runs without the sandbox this session, if it does: always on screen.
    pub sandbox_problem: Option<&'a str>,
    /// The permission mode in force: always named, auto in the warning colour.
    pub mode: crate::protocol::PermissionMode,
    pub usage: &'a Usage,
    /// How full the model's window is, once the agent has said.
    pub context: Option<crate::protocol::ContextGauge>,
    pub flash: Option<&'a (String, Instant)>,
    pub focus: Focus,
    pub now: Instant,
    pub theme: &'a Theme,
}

impl StatusLine<'_> {
    /// A turn runs, no interrupt was asked for yet, and no question takes Esc.
    fn interruptible(&self) -> bool {
        self.waiting == 0
            && matches!(
                self.turn,
                Turn::Running {
                    cancel_sent: false,
                    ..
                }
            )
    }

    /// The keys that matter now, on the right.
    fn hint(&self) -> &'static str {
        match self.focus {
            Focus::Pool => "↑↓ tool · Tab back · Ctrl+P hide ",
            Focus::Composer if self.interruptible() && self.queued > 0 => {
                "↑ edit · Del drop · esc to interrupt "
            }
            Focus::Composer if self.interruptible() => "Enter queue · ? help · esc to interrupt ",
            Focus::Composer => "Enter send · Tab pool · ? help · Ctrl+C cancel ",
        }
    }
}

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

impl StatusLine<'_> {
    /// Everything left of the hint; `compact` (a narrow screen): the mode without the word
    /// "mode" and no session id, so the hint that stops a turn still fits.
    fn left(&self, compact: bool) -> Vec<Span<'static>> {
        let t = self.theme;
        let mut left = vec![Span::styled(
            format!(
                " {} ",
                if self.model_label.is_empty() {
                    "connecting…"
                } else {
                    self.model_label
                }
            ),
            t.bold(),
        )];
        left.push(Span::styled(
            if compact {
                format!("· {} ", self.mode)
            } else {
                format!("· {} mode ", self.mode)
            },
            match self.mode {
                crate::protocol::PermissionMode::Auto => t.warn(),
                crate::protocol::PermissionMode::Default => t.dim(),
                _ => t.accent(),
            },
        ));
        if !self.session_id.is_empty() && !compact {
            let short: String = self.session_id.chars().take(8).collect();
            left.push(Span::styled(format!("· {short} "), t.dim()));
        }
        let turn = match self.turn {
            _ if self.waiting > 0 => Span::styled(
                format!("· waiting for your answer ({}) ", self.waiting),
                t.warn(),
            ),
            Turn::Idle => Span::styled("· idle ", t.dim()),
            Turn::Running { since, cancel_sent } => {
                let elapsed = self.now.saturating_duration_since(since);
                let frame_no =
                    (elapsed.as_millis() / SPINNER_FRAME.as_millis()) as usize % SPINNER.len();
                match self.retry {
                    Some(retry) if !cancel_sent => Span::styled(
                        format!("· {} {} ", SPINNER[frame_no], retry.text(self.now)),
                        t.warn(),
                    ),
                    _ => {
                        let what = if cancel_sent { "cancelling" } else { "working" };
                        Span::styled(
                            format!(
                                "· {} {what} {:.1}s ",
                                SPINNER[frame_no],
                                elapsed.as_secs_f64()
                            ),
                            t.accent(),
                        )
                    }
                }
            }
        };
        left.push(turn);
        if self.queued > 0 {
            left.push(Span::styled(
                format!("· {} queued ", self.queued),
                t.accent(),
            ));
        }
        if self.sandbox_problem.is_some() {
            left.push(Span::styled("· ⚠ NO SANDBOX ", t.error()));
        }
        left.push(Span::styled(
            format!(
                "· ↑{} ↓{} tok ",
                tokens(self.usage.input_tokens),
                tokens(self.usage.output_tokens)
            ),
            t.dim(),
        ));
        if let Some(gauge) = self.context {
            // The share of the window the next request fills; the warning colour from
            // 90% of the point where the conversation is compacted.
            let style = if gauge.near_limit() {
                t.warn()
            } else {
                t.dim()
            };
            left.push(Span::styled(format!("· ctx {}% ", gauge.percent()), style));
        }
        let cache = (
            self.usage.cache_read_input_tokens,
            self.usage.cache_creation_input_tokens,
        );
        if cache != (0, 0) {
            left.push(Span::styled(
                format!(
                    "· cache {} read {} written ",
                    tokens(cache.0),
                    tokens(cache.1)
                ),
                t.dim(),
            ));
        }
        left
    }
}

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let mut left = self.left(false);
        let mut right = match self.flash {
            Some((text, until)) if *until > self.now => Span::styled(format!("{text} "), t.warn()),
            _ => Span::styled(self.hint(), t.dim()),
        };
        let mut left_width: usize = left.iter().map(|s| s.width()).sum();
        if left_width + right.width() >= area.width as usize {
            // Narrow screens keep the one hint that leads to the others, and while a turn
            // runs the way to stop it.
            if self.flash.is_none() {
                right = Span::styled(
                    if self.interruptible() {
                        "esc to interrupt "
                    } else {
                        "? help "
                    },
                    t.dim(),
                );
            }
            if left_width + right.width() >= area.width as usize {
                left = self.left(true);
                left_width = left.iter().map(|s| s.width()).sum();
            }
        }
        let gap = (area.width as usize).saturating_sub(left_width + right.width());
        if gap > 0 {
            left.push(Span::raw(" ".repeat(gap)));
            left.push(right);
        }
        Paragraph::new(Line::from(left)).render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::components::draw::testing::{assert_shows, render, text};

    fn status<'a>(theme: &'a Theme, usage: &'a Usage, now: Instant) -> StatusLine<'a> {
        StatusLine {
            model_label: "claude-sonnet-4-5 (Anthropic)",
            session_id: "5f3a9c1e-0000-4000-8000-000000000000",
            turn: Turn::Idle,
            retry: None,
            waiting: 0,
            queued: 0,
            sandbox_problem: None,
            mode: crate::protocol::PermissionMode::Default,
            usage,
            context: None,
            flash: None,
            focus: Focus::Composer,
            now,
            theme,
        }
    }

    #[test]
    fn status_line_states() {
        let theme = Theme::new(true);
        let usage = Usage {
            input_tokens: 12_345,
            output_tokens: 678,
            ..Default::default()
        };
        let now = Instant::now();
        // The mode takes room: at 120 columns the idle hint is the short one.
        let idle = text(&render(status(&theme, &usage, now), 140, 1));
        assert_shows(
            &idle,
            &[
                "(Anthropic) · default mode · 5f3a9c1e · idle · ↑12.3k ↓678 tok",
                "Enter send · Tab pool",
            ],
        );
        assert!(
            !idle.contains("cache"),
            "no cache figures before any: {idle}"
        );

        let cached = Usage {
            cache_read_input_tokens: 45_200,
            cache_creation_input_tokens: 3_100,
            ..usage
        };
        let cached = text(&render(status(&theme, &cached, now), 120, 1));
        assert!(
            cached.contains("↑12.3k ↓678 tok · cache 45.2k read 3100 written"),
            "{cached}"
        );

        let mut gauged = status(&theme, &usage, now);
        gauged.context = Some(crate::protocol::ContextGauge {
            used: 84_000,
            window: 200_000,
            compact_at: 160_000,
        });
        let gauged_text = text(&render(gauged, 120, 1));
        assert!(gauged_text.contains("↓678 tok · ctx 42%"), "{gauged_text}");
        let mut near = status(&theme, &usage, now);
        near.context = Some(crate::protocol::ContextGauge {
            used: 150_000,
            window: 200_000,
            compact_at: 160_000,
        });
        let near = render(near, 120, 1);
        let shown = text(&near);
        let byte = shown.find("ctx 75%").expect("the gauge");
        let at = shown[..byte].chars().count() as u16;
        assert_eq!(
            near[(at, 0)].fg,
            theme.warn().fg.unwrap_or_default(),
            "near the threshold the gauge warns"
        );

        let mut running = status(&theme, &usage, now);
        running.turn = Turn::Running {
            since: now - Duration::from_millis(1530),
            cancel_sent: false,
        };
        let running = text(&render(running, 120, 1));
        assert!(running.contains("⠴ working 1.5s"), "{running}");
        assert!(running.contains("esc to interrupt"), "{running}");

        let mut queued = status(&theme, &usage, now);
        queued.turn = Turn::Running {
            since: now,
            cancel_sent: false,
        };
        queued.queued = 2;
        let queued_wide = text(&render(queued, 160, 1));
        assert_shows(
            &queued_wide,
            &[
                "working 0.0s · 2 queued",
                "↑ edit · Del drop · esc to interrupt",
            ],
        );
        let mut queued = status(&theme, &usage, now);
        queued.turn = Turn::Running {
            since: now,
            cancel_sent: false,
        };
        let queued_narrow = text(&render(queued, 100, 1));
        assert!(
            queued_narrow.ends_with("esc to interrupt\n"),
            "{queued_narrow}"
        );

        let countdown = RetryCountdown::new(
            crate::protocol::ModelRetry {
                attempt: 3,
                max_attempts: 10,
                wait_ms: 12_000,
                reason: crate::protocol::RetryReason::Overloaded,
                detail: "HTTP 529: Overloaded".into(),
            },
            now - Duration::from_millis(400),
        );
        let mut retrying = status(&theme, &usage, now);
        retrying.turn = Turn::Running {
            since: now - Duration::from_millis(1530),
            cancel_sent: false,
        };
        retrying.retry = Some(&countdown);
        let retrying = text(&render(retrying, 120, 1));
        assert!(
            retrying.contains("overloaded, retrying in 12s (attempt 3)"),
            "{retrying}"
        );

        let flash = (
            "press Ctrl+C again to quit".to_string(),
            now + Duration::from_secs(1),
        );
        let mut waiting = status(&theme, &usage, now);
        waiting.waiting = 2;
        waiting.flash = Some(&flash);
        let waiting = text(&render(waiting, 120, 1));
        assert_shows(
            &waiting,
            &["waiting for your answer (2)", "press Ctrl+C again to quit"],
        );

        let mut unsandboxed = status(&theme, &usage, now);
        unsandboxed.sandbox_problem = Some("sandbox: unavailable (forced)");
        let unsandboxed = text(&render(unsandboxed, 120, 1));
        assert!(unsandboxed.contains("idle · ⚠ NO SANDBOX"), "{unsandboxed}");

        // The mode in force is always named; auto in the warning colour.
        let mut auto = status(&theme, &usage, now);
        auto.mode = crate::protocol::PermissionMode::Auto;
        let auto = render(auto, 120, 1);
        let shown = text(&auto);
        let byte = shown.find("auto mode").expect("the mode");
        let at = shown[..byte].chars().count() as u16;
        assert_eq!(auto[(at, 0)].fg, theme.warn().fg.unwrap_or_default());

        let narrow = text(&render(status(&theme, &usage, now), 80, 1));
        assert!(narrow.ends_with("? help\n"), "{narrow}");
        insta::assert_snapshot!(format!("{idle}{running}{waiting}{narrow}"));
    }
}
