//! The tool pool panel: built-ins and each server with its state, the tools with their
//! policy badge, new tools highlighted and removed ones struck through for a while.
//!
//! The groups come precomputed from [`PoolView`]; a frame builds only the rows it shows, so
//! drawing a pool of 500 tools costs about what drawing 6 does.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use super::detail::DetailState;
use super::state::PoolView;
use crate::components::draw::{badge, draw_lines, status_label, status_style, truncate};
use crate::protocol::ServerStatus;
use crate::protocol::{Containment, DefinitionMark, ServerInfo};
use crate::theme::Theme;
use crate::wrap::{LogicalLine, wrap_lines};

pub struct PoolPanel<'a> {
    pub pool: &'a PoolView,
    pub theme: &'a Theme,
    /// The panel has the keyboard: its border lights up and the selection shows.
    pub focused: bool,
    /// For the new-tool highlight.
    pub now: Instant,
    /// The configured servers, for their containment: an unsandboxed one is marked.
    pub servers: &'a [ServerInfo],
}

/// One row of the panel, cheap to list; only visible rows become styled text.
enum Row {
    Gap,
    Head(usize),
    Reason(Line<'static>),
    /// (entry index, position in the display order)
    Tool(usize, usize),
    Removed(usize),
    /// A tool the model's requests leave out until `search_tools` loads it.
    Deferred(usize),
    /// A tool the server's filter keeps out (index into the view's excluded tools).
    Excluded(usize),
}

impl PoolPanel<'_> {
    fn rows(&self, width: usize) -> Vec<Row> {
        let t = self.theme;
        let mut rows = Vec::with_capacity(self.pool.entries().len() + 4 * self.pool.groups().len());
        let mut position = 0;
        for (g, group) in self.pool.groups().iter().enumerate() {
            if let Some(row) = group.server.and_then(|s| self.pool.servers().get(s)) {
                rows.push(Row::Gap);
                rows.push(Row::Head(g));
                let reason = match &row.status {
                    ServerStatus::Failed { reason, .. } => Some(reason.as_str()),
                    ServerStatus::Disconnected { reason } => reason.as_deref(),
                    _ => None,
                };
                if let Some(reason) = reason {
                    let wrapped = wrap_lines(
                        &[LogicalLine {
                            spans: vec![Span::styled(format!("  {reason}"), t.error())],
                            continuation_indent: 2,
                            preformatted: false,
                        }],
                        width,
                    );
                    rows.extend(wrapped.into_iter().take(3).map(Row::Reason));
                }
            } else {
                rows.push(Row::Head(g));
            }
            for &entry in &group.tools {
                rows.push(Row::Tool(entry, position));
                position += 1;
            }
            rows.extend(group.removed.iter().map(|&r| Row::Removed(r)));
            rows.extend(group.deferred.iter().map(|&d| Row::Deferred(d)));
            rows.extend(group.excluded.iter().map(|&r| Row::Excluded(r)));
        }
        rows
    }

    fn line(&self, row: Row, width: usize) -> Line<'static> {
        let t = self.theme;
        let pool = self.pool;
        match row {
            Row::Gap => Line::from(""),
            Row::Head(g) => {
                let Some(group) = pool.groups().get(g) else {
                    return Line::from("");
                };
                match group.server.and_then(|s| pool.servers().get(s)) {
                    None => Line::from(vec![
                        Span::styled("Built-in", t.bold()),
                        Span::styled(format!(" · {}", group.tools.len()), t.dim()),
                    ]),
                    Some(row) => {
                        let count = match &row.status {
                            ServerStatus::Ready { .. } if !group.deferred.is_empty() => format!(
                                " · {} loaded · {} deferred",
                                group.tools.len(),
                                group.deferred.len()
                            ),
                            ServerStatus::Ready { .. } => {
                                format!(" · {} tools", group.tools.len())
                            }
                            _ => String::new(),
                        };
                        let unsandboxed = self.servers.iter().any(|s| {
                            s.name == row.name && s.containment == Containment::Unsandboxed
                        });
                        let mark = match (unsandboxed, row.log_errors > 0) {
                            (true, true) => " ⚠ !log",
                            (true, false) => " ⚠",
                            (false, true) => " !log",
                            (false, false) => "",
                        };
                        let disabled = self
                            .servers
                            .iter()
                            .any(|s| s.name == row.name && !s.enabled);
                        let head = if disabled {
                            format!("{} ⊘ disabled", row.name)
                        } else {
                            format!("{} {}{}", row.name, status_label(&row.status), count)
                        };
                        let head = truncate(&head, width.saturating_sub(mark.chars().count()));
                        Line::from(vec![
                            Span::styled(head, t.bold().patch(status_style(&row.status, t))),
                            Span::styled(mark, t.error()),
                        ])
                    }
                }
            }
            Row::Reason(line) => line,
            Row::Tool(index, position) => {
                let Some(entry) = pool.entries().get(index) else {
                    return Line::from("");
                };
                let is_new = pool.is_new(&entry.tool.name, self.now);
                let mark = if entry.tool.shortened { "~" } else { "" };
                // A changed definition outranks the short-lived "new" highlight.
                let definition = definition_mark(pool, &entry.tool.name, t);
                let suffix = definition.map_or(0, |(text, _)| text.chars().count());
                let name_width = width.saturating_sub(7 + suffix);
                let mut name_style = if is_new { t.added() } else { t.plain() };
                if self.focused && position == pool.selected {
                    name_style = t.selected();
                }
                let mut spans = vec![
                    Span::raw(" "),
                    badge(&entry.verdict.decision, t),
                    Span::styled(
                        truncate(&format!("{mark}{}", entry.tool.name), name_width),
                        name_style,
                    ),
                ];
                if let Some((text, style)) = definition {
                    spans.push(Span::styled(text, style));
                } else if is_new && width > entry.tool.name.len() + 12 {
                    spans.push(Span::styled(" new", t.ok()));
                }
                Line::from(spans)
            }
            Row::Excluded(i) => {
                let Some(excluded) = pool.excluded(i) else {
                    return Line::from("");
                };
                let text = format!("{} · {}", excluded.tool, excluded.why);
                Line::from(vec![
                    Span::raw(" "),
                    Span::styled("off   ", t.dim()),
                    Span::styled(truncate(&text, width.saturating_sub(7)), t.dim()),
                ])
            }
            Row::Deferred(d) => {
                let name = pool.deferred().get(d).map_or("", |e| e.tool.name.as_str());
                // A deferred tool whose definition changed or that is new asks on its first
                // call like a loaded one, so it carries the same mark.
                let definition = definition_mark(pool, name, t);
                let suffix = definition.map_or(0, |(text, _)| text.chars().count());
                let mut spans = vec![
                    Span::raw(" "),
                    Span::styled("defer ", t.dim()),
                    Span::styled(truncate(name, width.saturating_sub(7 + suffix)), t.dim()),
                ];
                if let Some((text, style)) = definition {
                    spans.push(Span::styled(text, style));
                }
                Line::from(spans)
            }
            Row::Removed(r) => {
                let name = pool.removed_entry(r).map_or("", |e| e.tool.name.as_str());
                Line::from(vec![
                    Span::raw(" "),
                    Span::styled("      ", t.dim()),
                    Span::styled(truncate(name, width.saturating_sub(7)), t.removed()),
                ])
            }
        }
    }
}

impl Widget for PoolPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let total = self.pool.entries().len();
        let deferred = self.pool.deferred().len();
        let title = if deferred == 0 {
            format!(" Tool pool · {total} ")
        } else {
            format!(" Tool pool · {total} loaded · {deferred} deferred ")
        };
        let block = Block::bordered()
            .title(Span::styled(title, t.bold()))
            .border_style(t.border_for(self.focused));
        let inner = block.inner(area);
        Clear.render(area, buf);
        block.render(area, buf);
        let width = inner.width as usize;
        let height = inner.height as usize;
        let rows = self.rows(width);
        // Keep the selected tool on screen: scroll just far enough to show it last.
        let selected_row = self.focused.then(|| {
            rows.iter().position(
                |r| matches!(r, Row::Tool(_, position) if *position == self.pool.selected),
            )
        });
        let offset = selected_row
            .flatten()
            .map_or(0, |s| s.saturating_sub(height.saturating_sub(1)));
        let visible: Vec<Line<'static>> = rows
            .into_iter()
            .skip(offset)
            .take(height)
            .map(|row| self.line(row, width))
            .collect();
        draw_lines(&visible, inner, buf);
    }
}

/// What a key did in the focused panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKey {
    /// The selection moved (true) or not (false).
    Moved(bool),
    /// Tab, Shift+Tab or Esc: back to the composer.
    Leave,
    /// Typing goes to the composer, so a user never loses keystrokes.
    Type(char),
}

/// Keys while the panel has the focus: arrows (or j/k) select a tool, its details from
/// the top.
pub fn on_key(pool: &mut PoolView, detail: &mut DetailState, key: KeyEvent) -> PoolKey {
    let before = (pool.selected, detail.scroll);
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => {
            pool.move_selection(-1);
            detail.scroll = 0;
        }
        KeyCode::Down | KeyCode::Char('j') => {
            pool.move_selection(1);
            detail.scroll = 0;
        }
        KeyCode::Tab | KeyCode::Esc | KeyCode::BackTab => return PoolKey::Leave,
        KeyCode::Char(c) => return PoolKey::Type(c),
        _ => {}
    }
    PoolKey::Moved((pool.selected, detail.scroll) != before)
}

/// The mark after a tool's name when its definition changed since it was allowed, or it
/// appeared mid-session: either way its next call asks.
fn definition_mark(
    pool: &PoolView,
    name: &str,
    t: &Theme,
) -> Option<(&'static str, ratatui::style::Style)> {
    match pool.mark(name)? {
        DefinitionMark::Changed { .. } => Some((" changed", t.error())),
        DefinitionMark::New => Some((" new tool", t.ok())),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use ratatui::style::{Color, Modifier};

    use super::*;
    use crate::components::draw::testing::{assert_shows, render, row_of, text};
    use crate::components::pool::state::CHANGE_HIGHLIGHT;
    use crate::components::pool::state::fixtures;
    use crate::protocol::Decision;
    use crate::protocol::{PoolEntry, ToolMark};

    fn entry(server: Option<&str>, name: &str, decision: Decision) -> PoolEntry {
        let full = server.map_or(name.to_string(), |s| format!("mcp__{s}__{name}"));
        fixtures::entry(&full, server.map(|s| (s, name)), decision)
    }

    /// The decision of a tool that asks first.
    fn ask() -> Decision {
        Decision::Ask { why: "w".into() }
    }

    /// The panel drawn unfocused at `now` and the given size, without configured-server
    /// facts: the buffer and its text.
    fn unfocused(pool: &PoolView, now: Instant, width: u16, height: u16) -> (Buffer, String) {
        let theme = Theme::new(true);
        let panel = PoolPanel {
            pool,
            theme: &theme,
            focused: false,
            now,
            servers: &[],
        };
        let buf = render(panel, width, height);
        let screen = text(&buf);
        (buf, screen)
    }

    fn pool(now: Instant) -> PoolView {
        let mut pool = PoolView::new(&["docs".into(), "deploy".into(), "fs".into()]);
        let builtins = || {
            ["bash", "read_file", "glob"]
                .map(|n| entry(None, n, Decision::Allow))
                .to_vec()
        };
        pool.apply_snapshot(builtins(), &[], &[], now);
        let mut next = builtins();
        next.push(entry(Some("docs"), "search", Decision::Allow));
        next.push(entry(Some("deploy"), "trigger", ask()));
        pool.apply_snapshot(next, &["mcp__deploy__trigger".into()], &[], now);
        pool.set_status(
            "docs",
            ServerStatus::Ready {
                tools: 1,
                protocol: "2025-11-25".into(),
            },
        );
        pool.set_status(
            "fs",
            ServerStatus::Failed {
                reason: "process exited with status 1 before the handshake".into(),
                stderr_tail: vec![],
            },
        );
        pool
    }

    #[test]
    fn groups_badges_new_and_failed_servers() {
        let now = Instant::now();
        let pool = pool(now);
        let (buf, screen) = unfocused(&pool, now, 38, 18);
        assert_shows(
            &screen,
            &[
                "Tool pool · 5",
                "ask   mcp__deploy__trigger new",
                "fs ✗ failed",
            ],
        );
        let y = row_of(&buf, "mcp__deploy__trigger").expect("trigger row");
        assert!(
            (0..38).any(|x| buf[(x, y)].bg == Color::Green),
            "new tool not highlighted"
        );
        insta::assert_snapshot!(screen);

        // The highlight runs out with time alone.
        let (_, later) = unfocused(&pool, now + CHANGE_HIGHLIGHT, 38, 18);
        assert!(!later.contains(" new"));
    }

    #[test]
    fn deferred_tools_are_listed_apart_from_the_loaded_ones() {
        let now = Instant::now();
        let mut pool = PoolView::new(&["github".into()]);
        let mut loaded: Vec<PoolEntry> = ["bash", "search_tools"]
            .map(|n| entry(None, n, Decision::Allow))
            .to_vec();
        loaded.push(entry(Some("github"), "create_issue", ask()));
        pool.apply_snapshot(loaded, &[], &[], now);
        pool.set_status(
            "github",
            ServerStatus::Ready {
                tools: 4,
                protocol: "2025-11-25".into(),
            },
        );
        pool.set_deferred(
            ["list_issues", "merge_pull_request", "get_file_contents"]
                .map(|n| entry(Some("github"), n, ask()))
                .to_vec(),
        );
        let (buf, screen) = unfocused(&pool, now, 44, 12);
        assert_shows(
            &screen,
            &[
                "Tool pool · 3 loaded · 3 deferred",
                "github ● ready · 1 loaded · 3 deferred",
            ],
        );
        let y = row_of(&buf, "mcp__github__list_issues").expect("deferred tool listed");
        assert!(
            screen
                .lines()
                .nth(y as usize)
                .unwrap_or("")
                .contains("defer ")
        );
        // Deferred tools are not selectable: the arrows move over the loaded ones only.
        assert_eq!(pool.display_order().count(), 3);
        insta::assert_snapshot!(screen);

        // Loading one moves it up: the next snapshot has it, the deferred list not.
        pool.set_deferred(Vec::new());
        let (_, screen) = unfocused(&pool, now, 44, 12);
        assert!(screen.contains(" Tool pool · 3 "), "{screen}");
        assert!(!screen.contains("defer"), "{screen}");
    }

    /// A deferred tool whose definition changed, or that is new, carries the mark a loaded
    /// one would: its first call asks whether or not a search loaded it first.
    #[test]
    fn deferred_tools_carry_definition_marks() {
        let now = Instant::now();
        let mut pool = PoolView::new(&["github".into()]);
        pool.apply_snapshot(vec![entry(None, "bash", Decision::Allow)], &[], &[], now);
        pool.set_deferred(
            ["list_issues", "merge_pull_request"]
                .map(|n| entry(Some("github"), n, ask()))
                .to_vec(),
        );
        pool.set_marks(
            vec![
                ToolMark {
                    tool: "mcp__github__merge_pull_request".into(),
                    mark: DefinitionMark::Changed {
                        pinned_by: "rule mcp__github__*".into(),
                    },
                },
                ToolMark {
                    tool: "mcp__github__list_issues".into(),
                    mark: DefinitionMark::New,
                },
            ],
            Vec::new(),
        );
        let (_, screen) = unfocused(&pool, now, 60, 10);
        assert_shows(
            &screen,
            &[
                "defer mcp__github__merge_pull_request changed",
                "defer mcp__github__list_issues new tool",
            ],
        );
    }

    #[test]
    fn focused_selection_scrolls_into_view() {
        let now = Instant::now();
        let mut pool = pool(now);
        pool.move_selection(4);
        let theme = Theme::new(true);
        let panel = PoolPanel {
            pool: &pool,
            theme: &theme,
            focused: true,
            now,
            servers: &[],
        };
        let buf = render(panel, 38, 8);
        let screen = text(&buf);
        let y = row_of(&buf, "mcp__deploy__trigger").expect("selected tool on screen");
        assert_eq!(y, 6, "the selection is the last visible row:\n{screen}");
        let reversed = (0..38).any(|x| buf[(x, y)].modifier.contains(Modifier::REVERSED));
        assert!(reversed, "selection not shown:\n{screen}");
        insta::assert_snapshot!(screen);
    }

    #[test]
    fn changed_new_and_filtered_tools_are_marked() {
        use crate::protocol::ExcludedTool;
        let now = Instant::now();
        let mut pool = pool(now);
        let mut next: Vec<PoolEntry> = pool.entries().to_vec();
        // The agent's badge for a changed definition is Ask, whatever the rule says.
        for e in next
            .iter_mut()
            .filter(|e| e.tool.name == "mcp__docs__search")
        {
            e.verdict.decision = Decision::Ask {
                why: "its definition changed since it was allowed".into(),
            };
        }
        next.push(entry(Some("docs"), "fresh", ask()));
        pool.apply_snapshot(next, &[], &[], now);
        pool.set_marks(
            vec![
                ToolMark {
                    tool: "mcp__docs__search".into(),
                    mark: DefinitionMark::Changed {
                        pinned_by: "rule mcp__docs__*".into(),
                    },
                },
                ToolMark {
                    tool: "mcp__docs__fresh".into(),
                    mark: DefinitionMark::New,
                },
            ],
            vec![ExcludedTool {
                server: "docs".into(),
                tool: "delete_index".into(),
                why: "excludeTools \"delete_*\"".into(),
            }],
        );
        let theme = Theme::new(true);
        let servers = [ServerInfo {
            name: "fs".into(),
            command_line: "toolgate serve fs".into(),
            containment: Containment::Confined {
                profile: "p".into(),
            },
            enabled: false,
        }];
        let panel = PoolPanel {
            pool: &pool,
            theme: &theme,
            focused: false,
            now: now + CHANGE_HIGHLIGHT,
            servers: &servers,
        };
        let buf = render(panel, 50, 20);
        let screen = text(&buf);
        assert_shows(
            &screen,
            &[
                "mcp__docs__search changed",
                "mcp__docs__fresh new tool",
                "off   delete_index · excludeTools \"delete_*\"",
                "fs ⊘ disabled",
            ],
        );
        let y = row_of(&buf, "delete_index").expect("excluded row");
        let x = (0..50)
            .find(|&x| buf[(x, y)].symbol() == "d")
            .expect("name drawn");
        assert!(
            buf[(x, y)].modifier.contains(Modifier::DIM) || buf[(x, y)].fg == Color::DarkGray,
            "excluded tool not greyed: {:?}",
            buf[(x, y)]
        );
        insta::assert_snapshot!(screen);
    }
}
