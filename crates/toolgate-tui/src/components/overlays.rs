//! Full-screen overlays over everything else: the key help, `/mcp` (servers) and
//! `/permissions` (rules in force and session grants): which one is open, its keys, and
//! its widgets. The session grants the permissions overlay lists are kept here too.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Clear, Widget};

use super::commands::{COMMANDS, PROMPT_PREFIX};
use super::completion::query::Catalogs;
use super::draw::{centered, draw_lines, log_tail, selectable, status_label, status_style, text};
use super::pool::state::{PoolView, ServerRow};
use crate::effect::Effect;
use crate::protocol::Decision;
use crate::protocol::ServerInfo;
use crate::protocol::ServerStatus;
use crate::protocol::{Containment, UiCommand};
use crate::theme::Theme;
use crate::wrap::{LogicalLine, wrap_lines};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    Mcp { selected: usize },
    Permissions { selected: usize },
}

impl Overlay {
    /// A key while an overlay is open: it moves the selection, closes the overlay, or
    /// sends a command (with a short message for the status line, if any). True when the
    /// screen may have changed.
    pub fn on_key(
        &mut self,
        key: KeyEvent,
        servers: &[ServerRow],
        grants: &mut Vec<GrantLine>,
        effects: &mut Vec<Effect>,
    ) -> (bool, Option<String>) {
        let before = *self;
        let sent = effects.len();
        let mut flash = None;
        let count = match self {
            Overlay::Mcp { .. } => servers.len(),
            Overlay::Permissions { .. } => grants.len(),
            _ => 0,
        };
        let step = |selected: &mut usize, delta: isize| {
            if count > 0 {
                *selected = (*selected as isize + delta).clamp(0, count as isize - 1) as usize;
            }
        };
        match (&mut *self, key.code) {
            (_, KeyCode::Esc | KeyCode::Char('q')) => *self = Overlay::None,
            (Overlay::Help, _) => *self = Overlay::None,
            (Overlay::Mcp { selected } | Overlay::Permissions { selected }, KeyCode::Up) => {
                step(selected, -1)
            }
            (Overlay::Mcp { selected } | Overlay::Permissions { selected }, KeyCode::Down) => {
                step(selected, 1)
            }
            (Overlay::Mcp { selected }, KeyCode::Char('r')) => {
                if let Some(row) = servers.get(*selected) {
                    let name = row.name.clone();
                    if matches!(row.status, ServerStatus::Ready { .. }) {
                        effects.push(Effect::SendCommand(UiCommand::Disconnect(name.clone())));
                    }
                    flash = Some(format!("reconnecting {name}…"));
                    effects.push(Effect::SendCommand(UiCommand::Connect(name)));
                }
            }
            (Overlay::Mcp { selected }, KeyCode::Char('d')) => {
                if let Some(row) = servers.get(*selected) {
                    effects.push(Effect::SendCommand(UiCommand::Disconnect(row.name.clone())));
                }
            }
            (
                Overlay::Permissions { selected },
                KeyCode::Char('x') | KeyCode::Delete | KeyCode::Backspace,
            ) if *selected < grants.len() => {
                let tool = grants.remove(*selected).name;
                *selected = (*selected).min(grants.len().saturating_sub(1));
                flash = Some(format!("revoked the session grant for {tool}"));
                effects.push(Effect::SendCommand(UiCommand::RevokeGrant(tool)));
            }
            _ => {}
        }
        // A key either moves the selection, closes the overlay, or sends a command (then
        // with a message); anything else leaves the screen as it was.
        (*self != before || effects.len() != sent, flash)
    }
}

/// The grants `/permissions` lists, as the gate last reported them (`View::GrantsChanged`).
pub use crate::protocol::GrantLine;

/// A rule as `/permissions` lists it: one line per distinct (decision, rule, source).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLine {
    pub decision: String,
    pub rule: String,
    pub source: String,
    pub tools: Vec<String>,
}

/// Rules in force, from the verdicts of the current pool (with their sources).
pub fn rule_lines(pool: &PoolView) -> Vec<RuleLine> {
    let mut out: Vec<RuleLine> = Vec::new();
    for entry in pool.entries() {
        let v = &entry.verdict;
        let decision = match v.decision {
            Decision::Allow => "allow",
            Decision::Ask { .. } => "ask",
            Decision::Deny { .. } => "deny",
        }
        .to_string();
        let source = v.source.to_string();
        match out
            .iter_mut()
            .find(|r| r.decision == decision && r.rule == v.rule && r.source == source)
        {
            Some(line) => line.tools.push(entry.tool.name.clone()),
            None => out.push(RuleLine {
                decision,
                rule: v.rule.clone(),
                source,
                tools: vec![entry.tool.name.clone()],
            }),
        }
    }
    out
}

/// The keys the help lists before the commands.
const KEYS: &[(&str, &str)] = &[
    ("Enter", "send; while a turn runs, queue it for the end"),
    // ↑ takes back what is queued when the composer is empty, else walks the history.
    (
        "↑ Del queue, ↑↓ Ctrl+R",
        "edit / drop queued · earlier prompts · search",
    ),
    (
        "Shift/Alt+Enter, Ctrl+G",
        "new line · edit the message in $EDITOR",
    ),
    ("Esc, Ctrl+C", "interrupt the turn (what was done stays)"),
    ("Ctrl+D, Ctrl+C twice", "quit"),
    (
        "Tab, Ctrl+P",
        "focus the tool pool (↑↓ inspect) · hide / show it",
    ),
    ("PgUp PgDn, wheel", "scroll the conversation / tool details"),
    ("Ctrl+Home Ctrl+End", "top / follow the bottom"),
    (
        "Ctrl+O, Shift+Tab",
        "expand tool results and thinking · next mode",
    ),
];

/// The frame every overlay shares: centred, at most 100 columns, titled.
fn overlay_frame(theme: &Theme, title: &str, lines: &[LogicalLine], area: Rect, buf: &mut Buffer) {
    let rect = centered(
        area,
        area.width.saturating_sub(4).min(100),
        area.height.saturating_sub(2),
    );
    let block = Block::bordered()
        .title(Span::styled(format!(" {title} "), theme.bold()))
        .border_style(theme.focused_border());
    let inner = block.inner(rect);
    Clear.render(rect, buf);
    block.render(rect, buf);
    draw_lines(&wrap_lines(lines, inner.width as usize), inner, buf);
}

pub struct HelpOverlay<'a> {
    pub theme: &'a Theme,
    /// The command files, listed after the built-in commands.
    pub commands: &'a [crate::protocol::FileCommand],
}

impl Widget for HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        // Keys, then the command table and the command files, then the inbox's keys.
        let files = self.commands.iter().map(|c| {
            let shown = crate::sanitize::for_terminal;
            (shown(&format!("/{}", c.name)), shown(&c.summary()))
        });
        let rows = KEYS
            .iter()
            .copied()
            .chain(COMMANDS.iter().map(|c| (c.usage, c.help)))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(files)
            .chain([(
                "inbox".to_string(),
                "keys shown on each request · l list all · Esc safe".to_string(),
            )]);
        // 80×24 holds every row with no blank line before the last.
        let lines: Vec<LogicalLine> = rows
            .map(|(k, v)| LogicalLine {
                spans: vec![Span::styled(format!("{k:<24}"), t.bold()), Span::raw(v)],
                continuation_indent: 24,
                preformatted: false,
            })
            .chain([text("any key closes", t.dim())])
            .collect();
        overlay_frame(t, "Keys and commands", &lines, area, buf);
    }
}

pub struct McpOverlay<'a> {
    pub pool: &'a PoolView,
    /// Command lines of the configured servers.
    pub servers: &'a [ServerInfo],
    /// What each connected server offers besides tools (resources, prompts).
    pub catalogs: &'a Catalogs,
    pub selected: usize,
    pub theme: &'a Theme,
}

/// "resources: 3 (+1 template) · prompts: 2", or None when the server offers neither.
fn catalog_line(catalog: &crate::protocol::Catalog) -> Option<String> {
    let mut parts = Vec::new();
    if catalog.has_resources {
        let templates = match catalog.templates.len() {
            0 => String::new(),
            1 => " (+1 template)".to_string(),
            n => format!(" (+{n} templates)"),
        };
        parts.push(format!(
            "resources: {}{templates} (@{}:…)",
            catalog.resources.len(),
            catalog.server
        ));
    }
    if catalog.has_prompts {
        parts.push(format!(
            "prompts: {} (/{PROMPT_PREFIX}{}__…)",
            catalog.prompts.len(),
            catalog.server
        ));
    }
    (!parts.is_empty()).then(|| format!("    {}", parts.join(" · ")))
}

impl Widget for McpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let selected = self.selected;
        let mut lines = Vec::new();
        if self.pool.servers().is_empty() {
            lines.push(text("No MCP servers are configured (.mcp.json).", t.dim()));
        }
        for (i, row) in self.pool.servers().iter().enumerate() {
            let (marker, head_style) = selectable(i == selected, t.bold(), t);
            lines.push(LogicalLine::plain(vec![
                marker,
                Span::styled(row.name.clone(), head_style),
                Span::raw(" "),
                Span::styled(status_label(&row.status), status_style(&row.status, t)),
            ]));
            if let Some(info) = self.servers.iter().find(|s| s.name == row.name) {
                lines.push(text(
                    format!(
                        "    command: {}",
                        crate::sanitize::for_terminal(&info.command_line)
                    ),
                    t.dim(),
                ));
                let style = match info.containment {
                    Containment::Unsandboxed => t.warn(),
                    _ => t.dim(),
                };
                lines.push(text(
                    format!(
                        "    {}",
                        crate::sanitize::for_terminal(&info.containment.label())
                    ),
                    style,
                ));
            }
            if let ServerStatus::Ready { protocol, .. } = &row.status
                && !protocol.is_empty()
            {
                lines.push(text(format!("    protocol: {protocol}"), t.dim()));
            }
            if let Some(auth) = &row.auth {
                lines.push(text(format!("    sign-in: {auth}"), t.dim()));
            }
            let tools: Vec<&str> = self
                .pool
                .tools_of(&row.name)
                .map(|e| e.tool.name.as_str())
                .collect();
            if !tools.is_empty() {
                lines.push(text(format!("    tools: {}", tools.join(", ")), t.plain()));
            }
            if let Some(line) = self.catalogs.get(&row.name).and_then(|c| catalog_line(c)) {
                lines.push(text(line, t.plain()));
            }
            if let Some(err) = &row.last_error {
                lines.push(text(format!("    last error: {err}"), t.error()));
            }
            if let Some(instructions) = &row.instructions {
                lines.push(text("    instructions (the server's own words):", t.dim()));
                let shown = if i == selected { 12 } else { 2 };
                for l in instructions.lines().take(shown) {
                    lines.push(LogicalLine {
                        spans: vec![Span::styled(format!("      {l}"), t.accent())],
                        continuation_indent: 6,
                        preformatted: false,
                    });
                }
            }
            if !row.logs.is_empty() {
                let errors = if row.log_errors > 0 {
                    format!(", {} at error level or worse", row.log_errors)
                } else {
                    String::new()
                };
                let style = if row.log_errors > 0 {
                    t.error()
                } else {
                    t.dim()
                };
                lines.push(text(
                    format!("    log: {} messages{errors}", row.logs.len()),
                    style,
                ));
                let shown = if i == selected { 10 } else { 1 };
                lines.extend(log_tail(&row.logs, shown, 6, t));
            }
            if i == selected && !row.stderr_tail.is_empty() {
                lines.push(text("    stderr (last lines):", t.dim()));
                for l in &row.stderr_tail {
                    lines.push(LogicalLine {
                        spans: vec![Span::styled(format!("      {l}"), t.dim())],
                        continuation_indent: 6,
                        preformatted: true,
                    });
                }
            }
        }
        lines.push(LogicalLine::blank());
        lines.push(text(
            "↑↓ select · r reconnect · d disconnect · Esc close",
            t.dim(),
        ));
        overlay_frame(t, "MCP servers", &lines, area, buf);
    }
}

pub struct PermissionsOverlay<'a> {
    /// Rules in force, from the current pool's verdicts.
    pub rules: &'a [RuleLine],
    /// The managed policy's lines (`policy::managed_summary`); empty without one.
    pub managed: &'a [String],
    pub session_grants: &'a [GrantLine],
    pub selected: usize,
    pub theme: &'a Theme,
}

impl Widget for PermissionsOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let selected = self.selected;
        let mut lines = Vec::new();
        if let Some((title, rest)) = self.managed.split_first() {
            lines.push(text(title, t.bold()));
            lines.extend(rest.iter().map(|line| text(line, t.plain())));
            lines.push(LogicalLine::blank());
        }
        lines.push(text("Rules deciding the current pool", t.bold()));
        for r in self.rules {
            lines.push(LogicalLine {
                spans: vec![
                    Span::styled(format!("  {:<6}", r.decision), t.bold()),
                    Span::raw(r.rule.clone()),
                    Span::styled(format!("  ({})", r.source), t.dim()),
                    Span::styled(format!("  → {}", r.tools.join(", ")), t.dim()),
                ],
                continuation_indent: 8,
                preformatted: false,
            });
        }
        lines.push(LogicalLine::blank());
        lines.push(text("Session grants (this session only)", t.bold()));
        if self.session_grants.is_empty() {
            lines.push(text("  none", t.dim()));
        }
        for (i, g) in self.session_grants.iter().enumerate() {
            let (marker, style) = selectable(i == selected, t.plain(), t);
            lines.push(LogicalLine::plain(vec![
                marker,
                Span::styled(g.describe(), style),
            ]));
        }
        lines.push(LogicalLine::blank());
        lines.push(text("↑↓ select · x revoke the grant · Esc close", t.dim()));
        overlay_frame(t, "Permissions", &lines, area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::draw::testing::{assert_shows, render, text};

    #[test]
    fn help_lists_the_keys() {
        let theme = Theme::new(true);
        let screen = text(&render(
            HelpOverlay {
                theme: &theme,
                commands: &[],
            },
            80,
            24,
        ));
        assert_shows(
            &screen,
            &[
                "Esc, Ctrl+C",
                "edit / drop queued",
                "Ctrl+R",
                "any key closes",
            ],
        );
        insta::assert_snapshot!(screen);
    }

    #[test]
    fn mcp_shows_command_status_and_the_selected_servers_stderr() {
        let theme = Theme::new(true);
        let mut pool = PoolView::new(&["docs".into(), "fs".into()]);
        pool.set_status(
            "docs",
            ServerStatus::Ready {
                tools: 0,
                protocol: "2025-11-25".into(),
            },
        );
        pool.set_status(
            "fs",
            ServerStatus::Failed {
                reason: "process exited with status 1".into(),
                stderr_tail: vec!["error: root /nope does not exist".into()],
            },
        );
        let servers: Vec<ServerInfo> = ["docs", "fs"]
            .iter()
            .map(|n| ServerInfo {
                name: n.to_string(),
                command_line: format!("toolgate serve {n}"),
                containment: Containment::Confined {
                    profile: "read-only, no network".into(),
                },
                enabled: true,
            })
            .collect();
        let catalogs = std::collections::BTreeMap::new();
        let overlay = |selected| McpOverlay {
            pool: &pool,
            servers: &servers,
            catalogs: &catalogs,
            selected,
            theme: &theme,
        };
        let first = text(&render(overlay(0), 70, 16));
        assert_shows(
            &first,
            &["protocol: 2025-11-25", "sandboxed: read-only, no network"],
        );
        assert!(!first.contains("root /nope"), "{first}");
        let second = text(&render(overlay(1), 70, 16));
        assert_shows(
            &second,
            &["▶ fs ✗ failed", "error: root /nope does not exist"],
        );
        insta::assert_snapshot!(second);
    }

    #[test]
    fn permissions_lists_rules_and_grants() {
        let theme = Theme::new(true);
        let rules = vec![RuleLine {
            decision: "allow".into(),
            rule: "mcp__docs__search".into(),
            source: "default".into(),
            tools: vec!["mcp__docs__search".into()],
        }];
        let grants = vec![
            GrantLine::session("mcp__deploy__trigger"),
            GrantLine::session("bash"),
        ];
        let screen = text(&render(
            PermissionsOverlay {
                rules: &rules,
                managed: &[],
                session_grants: &grants,
                selected: 1,
                theme: &theme,
            },
            80,
            14,
        ));
        assert_shows(
            &screen,
            &[
                "allow mcp__docs__search  (default)  → mcp__docs__search",
                "▶ allow bash",
            ],
        );
        insta::assert_snapshot!(screen);
    }

    #[test]
    fn permissions_show_the_managed_policy_first() {
        let theme = Theme::new(true);
        let managed = [
            "Managed policy: /etc/toolgate/managed.toml".to_string(),
            "  deny mcp__deploy__trigger".to_string(),
            "  overrides:".to_string(),
            "    allow mcp__deploy__trigger (user config /u/c.toml): denied by managed rule mcp__deploy__trigger".to_string(),
        ];
        let screen = text(&render(
            PermissionsOverlay {
                rules: &[],
                managed: &managed,
                session_grants: &[],
                selected: 0,
                theme: &theme,
            },
            120,
            16,
        ));
        assert_shows(
            &screen,
            &[
                "Managed policy: /etc/toolgate/managed.toml",
                "deny mcp__deploy__trigger",
                "allow mcp__deploy__trigger (user config /u/c.toml): denied by managed rule",
                "Rules deciding the current pool",
            ],
        );
    }

    #[test]
    fn the_mcp_list_counts_what_a_server_offers_besides_tools() {
        use crate::protocol::catalog::{PromptEntry, ResourceEntry};
        let resource = |uri: &str| ResourceEntry {
            uri: uri.into(),
            name: uri.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        };
        let catalog = crate::protocol::Catalog {
            server: "docs".into(),
            has_resources: true,
            has_prompts: true,
            resources: vec![resource("docs://a"), resource("docs://b")],
            prompts: vec![PromptEntry {
                name: "explain".into(),
                title: None,
                description: None,
                arguments: vec![],
            }],
            ..Default::default()
        };
        assert_eq!(
            catalog_line(&catalog).as_deref(),
            Some("    resources: 2 (@docs:…) · prompts: 1 (/mcp__docs__…)")
        );
        let tools_only = crate::protocol::Catalog {
            server: "fs".into(),
            ..Default::default()
        };
        assert_eq!(catalog_line(&tools_only), None);
    }
}
