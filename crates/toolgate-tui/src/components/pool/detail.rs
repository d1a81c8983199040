//! Details of the tool selected in the pool panel, over the conversation: names, policy,
//! description, what the server claims, and the input schema (long ones scroll).
//!
//! The text is built and wrapped by `update` ([`DetailState::refresh`]) when the selection,
//! the pool or the size changes, so paging knows its limits without the view reporting
//! them back, and a frame only copies the visible lines.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use super::state::PoolView;
use crate::components::draw::{draw_lines, log_tail};
use crate::protocol::Decision;
use crate::protocol::PoolEntry;
use crate::protocol::ToolOrigin;
use crate::theme::Theme;
use crate::wrap::{LogicalLine, wrap_lines};

/// The selected tool's details, wrapped for the detail panel at the current size.
#[derive(Debug, Clone, Default)]
pub struct DetailState {
    /// What the lines were made from: (pool generation, selected entry, inner width,
    /// inner height). Anything else leaves them as they are.
    key: Option<(u64, Option<usize>, u16, u16)>,
    logical: Vec<LogicalLine>,
    /// `logical` wrapped at `width`.
    lines: Vec<Line<'static>>,
    width: u16,
    /// Rows the panel shows at once (at least 1).
    page: usize,
    /// First line shown (long schemas scroll).
    pub scroll: usize,
}

/// The panel's border around the area it is given.
fn block(theme: &Theme) -> Block<'static> {
    Block::bordered()
        .title(Span::styled(" Tool · ↑↓ select · Tab back ", theme.bold()))
        .border_style(theme.focused_border())
}

impl DetailState {
    /// Rebuilds the details when the tool, the pool or the panel's size changed.
    pub fn refresh(&mut self, pool: &PoolView, area: Rect, theme: &Theme) {
        let inner = block(theme).inner(area);
        let selected = pool.selected_index();
        let key = (pool.generation(), selected, inner.width, inner.height);
        if self.key == Some(key) {
            return;
        }
        self.key = Some(key);
        self.logical = match selected.and_then(|i| Some((pool.entries().get(i)?, i))) {
            Some((entry, i)) => {
                let mut lines = detail_lines(entry, pool.schema(i), theme);
                if let Some(row) = entry.tool.server().and_then(|s| pool.server(s)) {
                    lines.extend(server_log_lines(row, theme));
                }
                lines
            }
            None => Vec::new(),
        };
        self.width = inner.width;
        self.lines = wrap_lines(&self.logical, inner.width as usize);
        self.page = (inner.height as usize).max(1);
    }

    /// The largest useful scroll offset.
    pub fn max_scroll(&self) -> usize {
        self.lines.len().saturating_sub(self.page)
    }

    /// Rows per page.
    pub fn page(&self) -> usize {
        self.page
    }

    pub fn is_empty(&self) -> bool {
        self.logical.is_empty()
    }

    /// PgUp / PgDn page the details (they cover the conversation while the pool has the
    /// focus); None: not one of them, else whether they moved.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<bool> {
        let max = self.max_scroll();
        let step = self.page().saturating_sub(1).max(1);
        let before = self.scroll;
        match key.code {
            KeyCode::PageUp => self.scroll = self.scroll.min(max).saturating_sub(step),
            KeyCode::PageDown => self.scroll = (self.scroll + step).min(max),
            _ => return None,
        }
        Some(self.scroll != before)
    }
}

/// Log lines shown under an MCP tool's details: the last few its server sent.
const DETAIL_LOG_LINES: usize = 5;

fn server_log_lines(row: &super::state::ServerRow, t: &Theme) -> Vec<LogicalLine> {
    if row.logs.is_empty() {
        return Vec::new();
    }
    let mut l = vec![
        LogicalLine::blank(),
        LogicalLine::plain(vec![Span::styled(
            format!(
                "server log ({} messages, latest last; /mcp shows more):",
                row.logs.len()
            ),
            t.dim(),
        )]),
    ];
    l.extend(log_tail(&row.logs, DETAIL_LOG_LINES, 2, t));
    l
}

/// The detail text of one tool, before wrapping.
pub fn detail_lines(entry: &PoolEntry, schema: &str, t: &Theme) -> Vec<LogicalLine> {
    let tool = &entry.tool;
    let mut l: Vec<LogicalLine> = Vec::new();
    let field = |label: &str, value: String, style: Style| LogicalLine {
        spans: vec![
            Span::styled(format!("{label}: "), t.dim()),
            Span::styled(value, style),
        ],
        continuation_indent: 2,
        preformatted: false,
    };
    l.push(LogicalLine::plain(vec![Span::styled(
        tool.name.clone(),
        t.heading(),
    )]));
    let origin = match &tool.origin {
        ToolOrigin::Builtin { connector: true } => "built-in (changes the pool)".to_string(),
        ToolOrigin::Builtin { connector: false } => "built-in".to_string(),
        ToolOrigin::Mcp { server, tool } => format!("MCP server '{server}', tool '{tool}'"),
    };
    l.push(field("raw name", origin, t.plain()));
    if tool.shortened {
        l.push(field(
            "note",
            "model-facing name shortened to 64 characters".into(),
            t.warn(),
        ));
    }
    let (decision, why) = match &entry.verdict.decision {
        Decision::Allow => ("allow", None),
        Decision::Ask { why } => ("ask", Some(why)),
        Decision::Deny { why } => ("deny", Some(why)),
    };
    l.push(field(
        "policy",
        format!(
            "{decision} — rule `{}` ({})",
            entry.verdict.rule, entry.verdict.source
        ),
        t.bold(),
    ));
    if let Some(why) = why {
        l.push(field("why", why.clone(), t.plain()));
    }
    l.push(LogicalLine::blank());
    l.push(field("description", tool.description.clone(), t.plain()));
    if tool.server().is_some() {
        let claims = if tool.claims.is_empty() {
            "none".to_string()
        } else {
            tool.claims.describe()
        };
        l.push(field(
            "server claims (not verified, never used to allow)",
            crate::sanitize::for_terminal(&claims),
            t.accent(),
        ));
        if tool.claims.task_required {
            l.push(field(
                "runs as",
                "an MCP task (created, polled, its status shown as progress; cancelled with the call)"
                    .into(),
                t.plain(),
            ));
        }
    }
    l.push(LogicalLine::blank());
    l.push(LogicalLine::plain(vec![Span::styled(
        "input schema:",
        t.dim(),
    )]));
    for line in schema.lines() {
        l.push(LogicalLine {
            spans: vec![Span::styled(format!("  {line}"), t.code())],
            continuation_indent: 4,
            preformatted: true,
        });
    }
    l
}

pub struct ToolDetail<'a> {
    pub state: &'a DetailState,
    /// First line shown (clamped to what the text allows).
    pub scroll: usize,
    pub theme: &'a Theme,
}

impl Widget for ToolDetail<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if self.state.is_empty() {
            return;
        }
        let t = self.theme;
        let mut block = block(t);
        let inner = block.inner(area);
        // Drawn at the size `update` saw, the lines are ready; at any other size (a resize
        // not yet reported) they are wrapped here, without keeping the result.
        let rewrapped;
        let lines: &[Line<'static>] = if inner.width == self.state.width {
            &self.state.lines
        } else {
            rewrapped = wrap_lines(&self.state.logical, inner.width as usize);
            &rewrapped
        };
        let height = (inner.height as usize).max(1);
        let max_scroll = lines.len().saturating_sub(height);
        let offset = self.scroll.min(max_scroll);
        let shown = height.min(lines.len() - offset);
        if max_scroll > 0 {
            let below = lines.len() - offset - shown;
            block = block.title_bottom(Span::styled(
                format!(
                    " lines {}–{} of {}{} · PgUp/PgDn ",
                    offset + 1,
                    offset + shown,
                    lines.len(),
                    if below > 0 { " ↓" } else { "" }
                ),
                t.dim(),
            ));
        }
        Clear.render(area, buf);
        block.render(area, buf);
        draw_lines(&lines[offset..offset + shown], inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use serde_json::json;

    use super::*;
    use crate::components::draw::testing::{assert_shows, render, text};
    use crate::protocol::{PoolTool, ToolClaims};
    use crate::protocol::{RuleSource, Verdict};

    #[test]
    fn a_task_tool_says_it_runs_as_a_task() {
        let mut tool = PoolTool::builtin("bash", "Research a topic", json!({"type": "object"}));
        tool.name = "mcp__everything__simulate-research-query".into();
        tool.origin = ToolOrigin::Mcp {
            server: "everything".into(),
            tool: "simulate-research-query".into(),
        };
        tool.claims.task_required = true;
        let entry = PoolEntry {
            tool,
            verdict: Verdict {
                decision: Decision::Allow,
                rule: "mcp__everything".into(),
                source: RuleSource::Default,
            },
        };
        let text: String = detail_lines(&entry, "{}", &Theme::new(true))
            .iter()
            .map(|l| {
                let line: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                line + "\n"
            })
            .collect();
        assert_shows(&text, &["taskSupport=required", "runs as: an MCP task"]);
    }

    fn pool_with_big_tool() -> PoolView {
        let properties: serde_json::Map<String, serde_json::Value> = (0..30)
            .map(|i| (format!("prop_{i:02}"), json!({"type": "string"})))
            .collect();
        let mut tool = PoolTool {
            name: "mcp__warehouse__query".into(),
            ..PoolTool::builtin(
                "bash",
                "Run a query against the warehouse",
                json!({"type": "object", "properties": properties}),
            )
        };
        tool.origin = ToolOrigin::Mcp {
            server: "warehouse".into(),
            tool: "query".into(),
        };
        tool.claims = ToolClaims {
            read_only: Some(true),
            ..ToolClaims::default()
        };
        let mut pool = PoolView::new(&["warehouse".into()]);
        pool.apply_snapshot(
            vec![PoolEntry {
                tool,
                verdict: Verdict {
                    decision: Decision::Ask {
                        why: "unlisted MCP tool".into(),
                    },
                    rule: "default: unlisted MCP tool".into(),
                    source: RuleSource::Default,
                },
            }],
            &[],
            &[],
            Instant::now(),
        );
        pool
    }

    #[test]
    fn details_page_within_limits_known_before_drawing() {
        let pool = pool_with_big_tool();
        let theme = Theme::new(true);
        let mut state = DetailState::default();
        let area = Rect::new(0, 0, 60, 16);
        state.refresh(&pool, area, &theme);
        // 14 rows inside the border; the text is longer, so it pages.
        assert_eq!(state.page(), 14);
        assert!(state.max_scroll() > 20, "{}", state.max_scroll());
        let top = text(&render(
            ToolDetail {
                state: &state,
                scroll: 0,
                theme: &theme,
            },
            60,
            16,
        ));
        assert_shows(
            &top,
            &[
                "policy: ask — rule `default: unlisted MCP tool`",
                "readOnlyHint=true",
            ],
        );
        insta::assert_snapshot!("tool_detail_top", top);
        // Any offset past the end shows the last page.
        let bottom = text(&render(
            ToolDetail {
                state: &state,
                scroll: usize::MAX,
                theme: &theme,
            },
            60,
            16,
        ));
        assert!(bottom.contains("prop_29"), "{bottom}");
        assert!(!bottom.contains("↓ · PgUp/PgDn"), "{bottom}");
        insta::assert_snapshot!("tool_detail_bottom", bottom);
    }

    #[test]
    fn drawn_at_another_width_it_rewraps() {
        let pool = pool_with_big_tool();
        let theme = Theme::new(true);
        let mut state = DetailState::default();
        state.refresh(&pool, Rect::new(0, 0, 100, 16), &theme);
        let narrow = text(&render(
            ToolDetail {
                state: &state,
                scroll: 0,
                theme: &theme,
            },
            30,
            16,
        ));
        assert!(narrow.contains("│raw name: MCP server"), "{narrow}");
        assert!(narrow.lines().all(|l| l.chars().count() <= 30), "{narrow}");
    }
}
