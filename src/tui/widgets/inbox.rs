//! The modal for the question at the head of the queue (moved here unchanged from the old
//! single view module; the typed host-request inbox replaces its state and will reshape it).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::Span;
use ratatui::widgets::{Block, Clear, Paragraph};

use super::{centered, text};
use crate::agent::events::PermissionKind;
use crate::pool::ToolOrigin;
use crate::tui::app::{App, describe_source};
use crate::tui::permission::Pending;
use crate::tui::wrap::{LogicalLine, wrap_lines};

pub fn draw_inbox_modal(app: &App, frame: &mut Frame, pending: &Pending) {
    let t = &app.theme;
    let q = &pending.question;
    let area = frame.area();
    let width = area.width.saturating_sub(4).min(80);
    let inner_width = width.saturating_sub(2) as usize;
    let position = if app.permissions.len() > 1 {
        format!(" · 1 of {}", app.permissions.len())
    } else {
        String::new()
    };
    let title = match q.kind {
        PermissionKind::ToolCall => format!(" Permission required{position} "),
        PermissionKind::WorkspaceTrust => format!(" Trust this workspace?{position} "),
        PermissionKind::ProjectServer => format!(" Start a project server?{position} "),
    };
    let mut head: Vec<LogicalLine> = Vec::new();
    match q.kind {
        PermissionKind::ToolCall => {
            head.push(LogicalLine::plain(vec![
                Span::raw("The agent wants to call "),
                Span::styled(q.tool.name.clone(), t.heading()),
            ]));
            let origin = match &q.tool.origin {
                ToolOrigin::Mcp { server, tool } => {
                    format!("MCP server '{server}' (tool '{tool}')")
                }
                _ => "built-in".to_string(),
            };
            head.push(text(format!("server: {origin}"), t.plain()));
        }
        PermissionKind::WorkspaceTrust => {
            head.push(LogicalLine::plain(vec![
                Span::raw("This folder has its own configuration: "),
                Span::styled(q.tool.name.clone(), t.heading()),
            ]));
            if !q.tool.description.is_empty() {
                head.push(text(q.tool.description.clone(), t.plain()));
            }
            head.push(text(
                "Trusting it lets its .mcp.json and .toolgate/config.toml take effect.",
                t.dim(),
            ));
        }
        PermissionKind::ProjectServer => {
            head.push(LogicalLine::plain(vec![
                Span::raw("The project defines the MCP server "),
                Span::styled(q.tool.name.clone(), t.heading()),
            ]));
            if !q.tool.description.is_empty() {
                head.push(text(q.tool.description.clone(), t.plain()));
            }
        }
    }
    head.push(text(format!("why: {}", q.why), t.warn()));
    if q.kind == PermissionKind::ToolCall {
        head.push(text(
            format!(
                "rule: {} ({})",
                q.verdict.rule,
                describe_source(&q.verdict.source)
            ),
            t.dim(),
        ));
        let claims = if q.tool.claims.is_empty() {
            "none".to_string()
        } else {
            crate::sanitize::for_terminal(&q.tool.claims.describe())
        };
        head.push(text(
            format!("server claims (not verified): {claims}"),
            t.accent(),
        ));
    }
    head.push(text(
        if q.kind == PermissionKind::ToolCall {
            "arguments:"
        } else {
            "details:"
        },
        t.dim(),
    ));
    let args: Vec<LogicalLine> = q
        .arguments
        .lines()
        .map(|l| LogicalLine {
            spans: vec![Span::styled(format!("  {l}"), t.code())],
            continuation_indent: 2,
            preformatted: true,
        })
        .collect();

    let guarded = app.permissions.in_guard(app.now);
    let mut buttons: Vec<Span<'static>> = Vec::new();
    for choice in q.choices() {
        let label = format!("[{}] {}", choice.key(), q.label(*choice));
        let style = if guarded {
            t.dim()
        } else if *choice == pending.highlight {
            t.selected()
        } else {
            t.plain()
        };
        buttons.push(Span::styled(label, style));
        buttons.push(Span::raw("  "));
    }
    let mut foot = vec![LogicalLine::plain(buttons)];
    if let Some(note) = &pending.note {
        foot.push(LogicalLine::plain(vec![
            Span::styled("note to the agent: ", t.bold()),
            Span::raw(note.clone()),
            Span::styled("▍", t.dim()),
        ]));
        foot.push(text("Enter denies with this note · Esc back", t.dim()));
    } else {
        foot.push(text(
            "←→ move · Enter choose · ↑↓ scroll arguments · Esc deny",
            t.dim(),
        ));
    }

    let head = wrap_lines(&head, inner_width);
    let args = wrap_lines(&args, inner_width);
    let foot = wrap_lines(&foot, inner_width);
    let max_height = area.height.saturating_sub(2);
    let fixed = (head.len() + foot.len() + 3) as u16; // borders + spacer line
    let args_height = (args.len() as u16)
        .min(max_height.saturating_sub(fixed))
        .max(1);
    let height = (fixed + args_height).min(max_height);
    let rect = centered(area, width, height);
    let block = Block::bordered()
        .title(Span::styled(title, t.warn()))
        .border_style(t.warn());
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let [head_area, args_area, _, foot_area] = Layout::vertical([
        Constraint::Length(head.len() as u16),
        Constraint::Length(args_height),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(head), head_area);
    let max_scroll = (args.len() as u16).saturating_sub(args_height);
    frame.render_widget(
        Paragraph::new(args).scroll((pending.scroll.min(max_scroll), 0)),
        args_area,
    );
    frame.render_widget(Paragraph::new(foot), foot_area);
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;

    use super::*;
    use crate::agent::events::{AgentEvent, PermissionRequest};
    use crate::policy::{Decision, RuleSource, Verdict};
    use crate::pool::{PoolTool, ToolClaims};
    use crate::tui::app::{ConsoleInfo, Msg, update};
    use crate::tui::permission::GUARD_WINDOW;

    #[test]
    fn project_server_question_at_80x20() {
        let now = Instant::now();
        let mut app = App::new(ConsoleInfo::default(), now);
        let (reply, _rx) = tokio::sync::oneshot::channel();
        let mut tool = PoolTool::builtin("tracker", "npx -y @acme/tracker-mcp", json!({}));
        tool.claims = ToolClaims::default();
        let _ = update(
            &mut app,
            Msg::Agent(AgentEvent::PermissionRequest(PermissionRequest {
                kind: PermissionKind::ProjectServer,
                call_id: "project-server".into(),
                tool,
                input: json!({"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}),
                why: "the project's .mcp.json defines it".into(),
                verdict: Verdict {
                    decision: Decision::Ask {
                        why: "project server".into(),
                    },
                    rule: "project server".into(),
                    source: RuleSource::Default,
                },
                reply,
            })),
        );
        app.now = now + GUARD_WINDOW + Duration::from_millis(1);
        let mut terminal = Terminal::new(TestBackend::new(80, 20)).expect("test backend");
        terminal
            .draw(|frame| {
                if let Some(front) = app.permissions.front() {
                    draw_inbox_modal(&app, frame, front);
                }
            })
            .expect("draw");
        let screen = crate::tui::widgets::testing::text(terminal.backend().buffer());
        assert!(screen.contains("Start a project server?"), "{screen}");
        assert!(screen.contains("[n] Don't start"), "{screen}");
        insta::assert_snapshot!(screen);
    }
}
