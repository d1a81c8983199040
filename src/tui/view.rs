//! `view(&App, &mut Frame)`: draws the state, decides nothing. The only thing it records is
//! where the conversation went, so scrolling can count in its lines.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::app::{App, Focus, Overlay, Turn, describe_source};
use super::inbox_view::InboxModal;
use super::theme::Theme;
use super::transcript::Scroll;
use super::wrap::{LogicalLine, wrap_lines};
use crate::mcp::ServerStatus;
use crate::policy::Decision;
use crate::pool::ToolOrigin;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Where each part of the screen goes for a given size.
pub struct Areas {
    pub conversation: Rect,
    pub pool: Option<Rect>,
    pub composer: Rect,
    pub status: Rect,
}

/// Panel width: roomy on wide screens, narrower below 100 columns, gone below 60 (Tab
/// still opens it, over the conversation).
fn pool_width(app: &App, width: u16) -> u16 {
    if app.pool_collapsed {
        0
    } else if width >= 100 {
        38
    } else if width >= 60 {
        30
    } else {
        0
    }
}

pub fn areas(app: &App, area: Rect) -> Areas {
    let composer_lines = app.composer.lines().len().clamp(1, 6) as u16;
    let [main, composer, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(composer_lines + 2),
        Constraint::Length(1),
    ])
    .areas(area);
    let panel = pool_width(app, main.width);
    if panel == 0 {
        let pool = (app.focus == Focus::Pool).then_some(main);
        return Areas {
            conversation: main,
            pool,
            composer,
            status,
        };
    }
    let [conversation, pool] =
        Layout::horizontal([Constraint::Min(10), Constraint::Length(panel)]).areas(main);
    Areas {
        conversation,
        pool: Some(pool),
        composer,
        status,
    }
}

pub fn view(app: &App, frame: &mut Frame) {
    let a = areas(app, frame.area());
    app.conversation_area.set(a.conversation);
    draw_conversation(app, frame, a.conversation);
    if let Some(pool) = a.pool {
        draw_pool(app, frame, pool);
    }
    if app.focus == Focus::Pool {
        draw_tool_detail(app, frame, a.conversation);
    }
    draw_composer(app, frame, a.composer);
    draw_status(app, frame, a.status);
    match app.overlay {
        Overlay::None => {}
        Overlay::Help => draw_help(app, frame),
        Overlay::Mcp { selected } => draw_mcp(app, frame, selected),
        Overlay::Permissions { selected } => draw_permissions(app, frame, selected),
    }
    InboxModal {
        inbox: &app.inbox,
        theme: &app.theme,
        now: app.now,
    }
    .draw(frame);
}

fn draw_conversation(app: &App, frame: &mut Frame, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let t = &app.theme;
    if app.transcript.is_empty() {
        let model = if app.model_label.is_empty() {
            "starting…".to_string()
        } else {
            app.model_label.clone()
        };
        let welcome = vec![
            LogicalLine::plain(vec![
                Span::styled("toolgate", t.heading()),
                Span::styled(format!(" · {model}"), t.dim()),
            ]),
            LogicalLine::plain(vec![Span::styled(
                format!(
                    "workspace {}",
                    crate::sanitize::for_terminal(&app.info.workspace.display().to_string())
                ),
                t.dim(),
            )]),
            LogicalLine::blank(),
            LogicalLine::plain(vec![Span::raw(
                "Ask the agent something. Tools it may use are listed on the right; \
                 anything that is not allowed by a rule asks you first.",
            )]),
        ];
        let lines = wrap_lines(&welcome, area.width as usize);
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let (lines, more_below) = app
        .transcript
        .visible(app.scroll, area.width, area.height as usize);
    frame.render_widget(Paragraph::new(lines), area);
    if app.scroll != Scroll::Follow && (app.unseen_below || more_below) {
        let label = if app.unseen_below {
            " ↓ new output below · Ctrl+End "
        } else {
            " ↓ more below · Ctrl+End "
        };
        let w = (label.chars().count() as u16).min(area.width);
        let marker = Rect::new(area.right() - w, area.bottom() - 1, w, 1);
        frame.render_widget(Paragraph::new(Span::styled(label, t.selected())), marker);
    }
}

fn badge(decision: &Decision, t: &Theme) -> Span<'static> {
    match decision {
        Decision::Allow => Span::styled("allow ", t.ok()),
        Decision::Ask { .. } => Span::styled("ask   ", t.warn()),
        Decision::Deny { .. } => Span::styled("deny  ", t.error()),
    }
}

fn status_label(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Idle => "○ not connected".into(),
        ServerStatus::Connecting => "◌ connecting…".into(),
        ServerStatus::Ready { .. } => "● ready".into(),
        ServerStatus::Failed { .. } => "✗ failed".into(),
        ServerStatus::Disconnected { .. } => "○ disconnected".into(),
    }
}

fn status_style(status: &ServerStatus, t: &Theme) -> Style {
    match status {
        ServerStatus::Ready { .. } => t.ok(),
        ServerStatus::Connecting => t.warn(),
        ServerStatus::Failed { .. } => t.error(),
        _ => t.dim(),
    }
}

fn truncate(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::new();
    let mut used = 0;
    let total: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return text.to_string();
    }
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

fn draw_pool(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Pool;
    let total = app.pool.entries().len();
    let block = Block::bordered()
        .title(Span::styled(format!(" Tool pool · {total} "), t.bold()))
        .border_style(if focused {
            t.focused_border()
        } else {
            t.border()
        });
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut selected_line = None;
    let mut index = 0;
    for group in app.pool.groups() {
        match group.server {
            None => lines.push(Line::from(vec![
                Span::styled("Built-in", t.bold()),
                Span::styled(format!(" · {}", group.tools.len()), t.dim()),
            ])),
            Some(row) => {
                lines.push(Line::from(""));
                let count = match &row.status {
                    ServerStatus::Ready { .. } => format!(" · {} tools", group.tools.len()),
                    _ => String::new(),
                };
                let head = format!("{} {}{}", row.name, status_label(&row.status), count);
                lines.push(Line::from(Span::styled(
                    truncate(&head, width),
                    t.bold().patch(status_style(&row.status, t)),
                )));
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
                    lines.extend(wrapped.into_iter().take(3));
                }
            }
        }
        for entry in &group.tools {
            let is_new = app.pool.is_new(&entry.tool.name, app.now);
            let mark = if entry.tool.shortened { "~" } else { "" };
            let name_width = width.saturating_sub(7);
            let mut name_style = if is_new { t.added() } else { t.plain() };
            if focused && index == app.pool.selected {
                name_style = t.selected();
                selected_line = Some(lines.len());
            }
            let mut spans = vec![
                Span::raw(" "),
                badge(&entry.verdict.decision, t),
                Span::styled(
                    truncate(&format!("{mark}{}", entry.tool.name), name_width),
                    name_style,
                ),
            ];
            if is_new && width > entry.tool.name.len() + 12 {
                spans.push(Span::styled(" new", t.ok()));
            }
            lines.push(Line::from(spans));
            index += 1;
        }
        for entry in &group.removed {
            lines.push(Line::from(vec![
                Span::raw(" "),
                Span::styled("      ", t.dim()),
                Span::styled(
                    truncate(&entry.tool.name, width.saturating_sub(7)),
                    t.removed(),
                ),
            ]));
        }
    }
    let height = inner.height as usize;
    let offset = selected_line.map_or(0, |s| s.saturating_sub(height.saturating_sub(1)));
    let visible: Vec<Line<'static>> = lines.into_iter().skip(offset).take(height).collect();
    frame.render_widget(Paragraph::new(visible), inner);
}

fn draw_tool_detail(app: &App, frame: &mut Frame, area: Rect) {
    let Some(entry) = app.pool.selected_entry() else {
        return;
    };
    let t = &app.theme;
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
        ToolOrigin::Builtin(kind) if kind.is_connector() => {
            "built-in (changes the pool)".to_string()
        }
        ToolOrigin::Builtin(_) => "built-in".to_string(),
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
            entry.verdict.rule,
            describe_source(&entry.verdict.source)
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
    }
    l.push(LogicalLine::blank());
    l.push(LogicalLine::plain(vec![Span::styled(
        "input schema:",
        t.dim(),
    )]));
    let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
    for line in crate::sanitize::for_terminal(&schema).lines() {
        l.push(LogicalLine {
            spans: vec![Span::styled(format!("  {line}"), t.code())],
            continuation_indent: 4,
            preformatted: true,
        });
    }
    let mut block = Block::bordered()
        .title(Span::styled(" Tool · ↑↓ select · Tab back ", t.bold()))
        .border_style(t.focused_border());
    let inner = block.inner(area);
    let lines = wrap_lines(&l, inner.width as usize);
    let height = (inner.height as usize).max(1);
    let max_scroll = lines.len().saturating_sub(height);
    app.detail_limits.set((max_scroll, height));
    let offset = app.detail_scroll.min(max_scroll);
    if max_scroll > 0 {
        let below = lines.len() - offset - height.min(lines.len() - offset);
        block = block.title_bottom(Span::styled(
            format!(
                " lines {}–{} of {}{} · PgUp/PgDn ",
                offset + 1,
                offset + height.min(lines.len() - offset),
                lines.len(),
                if below > 0 { " ↓" } else { "" }
            ),
            t.dim(),
        ));
    }
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let visible: Vec<Line<'static>> = lines.into_iter().skip(offset).take(height).collect();
    frame.render_widget(Paragraph::new(visible), inner);
}

fn draw_composer(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Composer && app.inbox.is_empty();
    let block = Block::default()
        .borders(Borders::TOP | Borders::BOTTOM)
        .border_style(if focused {
            t.focused_border()
        } else {
            t.border()
        });
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&app.composer, inner);
}

fn draw_status(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut left = vec![Span::styled(
        format!(
            " {} ",
            if app.model_label.is_empty() {
                "connecting…"
            } else {
                &app.model_label
            }
        ),
        t.bold(),
    )];
    if !app.session_id.is_empty() {
        let short: String = app.session_id.chars().take(8).collect();
        left.push(Span::styled(format!("· {short} "), t.dim()));
    }
    let turn = match app.turn {
        _ if !app.inbox.is_empty() => Span::styled(
            format!("· waiting for your answer ({}) ", app.inbox.len()),
            t.warn(),
        ),
        Turn::Idle => Span::styled("· idle ", t.dim()),
        Turn::Running { since, cancel_sent } => {
            let elapsed = app.now.saturating_duration_since(since);
            let frame_no = (elapsed.as_millis() / 100) as usize % SPINNER.len();
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
    };
    left.push(turn);
    left.push(Span::styled(
        format!(
            "· ↑{} ↓{} tok ",
            tokens(app.usage.input_tokens),
            tokens(app.usage.output_tokens)
        ),
        t.dim(),
    ));
    let right = match &app.flash {
        Some((text, until)) if *until > app.now => Span::styled(format!("{text} "), t.warn()),
        _ => Span::styled(
            match app.focus {
                Focus::Pool => "↑↓ tool · Tab back · Ctrl+P hide ",
                Focus::Composer => "Enter send · Tab pool · ? help · Ctrl+C cancel ",
            },
            t.dim(),
        ),
    };
    let left_width: usize = left.iter().map(|s| s.width()).sum();
    let mut right = right;
    if left_width + right.width() >= area.width as usize && app.flash.is_none() {
        // Narrow screens keep the one hint that leads to the others.
        right = Span::styled("? help ", t.dim());
    }
    let gap = (area.width as usize).saturating_sub(left_width + right.width());
    if gap > 0 {
        left.push(Span::raw(" ".repeat(gap)));
        left.push(right);
    }
    frame.render_widget(Paragraph::new(Line::from(left)), area);
}

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn overlay_frame(app: &App, frame: &mut Frame, title: &str, lines: Vec<LogicalLine>) {
    let t = &app.theme;
    let area = frame.area();
    let rect = centered(
        area,
        area.width.saturating_sub(4).min(100),
        area.height.saturating_sub(2),
    );
    let block = Block::bordered()
        .title(Span::styled(format!(" {title} "), t.bold()))
        .border_style(t.focused_border());
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let wrapped = wrap_lines(&lines, inner.width as usize);
    frame.render_widget(Paragraph::new(wrapped), inner);
}

fn text(s: impl Into<String>, style: Style) -> LogicalLine {
    LogicalLine {
        spans: vec![Span::styled(s.into(), style)],
        continuation_indent: 2,
        preformatted: false,
    }
}

fn draw_help(app: &App, frame: &mut Frame) {
    let t = &app.theme;
    let rows = [
        ("Enter", "send the message"),
        ("Shift+Enter, Alt+Enter", "new line"),
        ("Ctrl+C", "cancel the running turn; twice when idle quits"),
        ("Ctrl+D", "quit"),
        (
            "Tab",
            "focus the tool pool (↑↓ select a tool to inspect it)",
        ),
        ("Ctrl+P", "hide / show the tool pool"),
        ("PgUp PgDn, wheel", "scroll the conversation / tool details"),
        ("Ctrl+Home Ctrl+End", "top / follow the bottom"),
        ("Ctrl+O", "expand / collapse tool results"),
        ("/connect NAME", "start an MCP server and add its tools"),
        ("/disconnect NAME", "stop a server and remove its tools"),
        ("/mcp", "servers: status, command, tools, errors, reconnect"),
        ("/permissions", "rules in force, session grants, revoke"),
        ("/clear", "forget the conversation (connections stay)"),
        ("/help, /quit", "this help, leave"),
        (
            "dialog y a s n d",
            "allow once, this session, always, deny, deny with note",
        ),
    ];
    let lines = rows
        .iter()
        .map(|(k, v)| LogicalLine {
            spans: vec![
                Span::styled(format!("{k:<24}"), t.bold()),
                Span::raw(v.to_string()),
            ],
            continuation_indent: 24,
            preformatted: false,
        })
        .chain([LogicalLine::blank(), text("any key closes", t.dim())])
        .collect();
    overlay_frame(app, frame, "Keys and commands", lines);
}

fn draw_mcp(app: &App, frame: &mut Frame, selected: usize) {
    let t = &app.theme;
    let mut lines = Vec::new();
    if app.pool.servers().is_empty() {
        lines.push(text("No MCP servers are configured (.mcp.json).", t.dim()));
    }
    for (i, row) in app.pool.servers().iter().enumerate() {
        let marker = if i == selected { "▶ " } else { "  " };
        let head_style = if i == selected {
            t.selected()
        } else {
            t.bold()
        };
        lines.push(LogicalLine::plain(vec![
            Span::raw(marker),
            Span::styled(row.name.clone(), head_style),
            Span::raw(" "),
            Span::styled(status_label(&row.status), status_style(&row.status, t)),
        ]));
        if let Some(info) = app.info.servers.iter().find(|s| s.name == row.name) {
            lines.push(text(
                format!(
                    "    command: {}",
                    crate::sanitize::for_terminal(&info.command_line)
                ),
                t.dim(),
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
        let tools: Vec<&str> = app
            .pool
            .tools_of(&row.name)
            .map(|e| e.tool.name.as_str())
            .collect();
        if !tools.is_empty() {
            lines.push(text(format!("    tools: {}", tools.join(", ")), t.plain()));
        }
        if let Some(err) = &row.last_error {
            lines.push(text(format!("    last error: {err}"), t.error()));
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
    overlay_frame(app, frame, "MCP servers", lines);
}

fn draw_permissions(app: &App, frame: &mut Frame, selected: usize) {
    let t = &app.theme;
    let mut lines = vec![text("Rules deciding the current pool", t.bold())];
    for r in app.rule_lines() {
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
    if app.session_grants.is_empty() {
        lines.push(text("  none", t.dim()));
    }
    for (i, g) in app.session_grants.iter().enumerate() {
        let style = if i == selected {
            t.selected()
        } else {
            t.plain()
        };
        lines.push(LogicalLine::plain(vec![
            Span::raw(if i == selected { "▶ " } else { "  " }),
            Span::styled(format!("allow {g}"), style),
        ]));
    }
    lines.push(LogicalLine::blank());
    lines.push(text("↑↓ select · x revoke the grant · Esc close", t.dim()));
    overlay_frame(app, frame, "Permissions", lines);
}
