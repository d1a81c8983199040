//! `view(&App, &mut Frame)`: places the widgets, decides nothing, and writes nothing back.
//! The layout comes from the same pure function `update` uses ([`super::layout::areas`]),
//! applied to the frame's size.

use ratatui::Frame;

use super::app::App;
use super::components::completion::popup::{CompletionPopup, FormQuestion};
use super::components::composer::Composer;
use super::components::history::SearchPopup;
use super::components::inbox::modal::InboxModal;
use super::components::overlays::{
    HelpOverlay, McpOverlay, Overlay, PermissionsOverlay, rule_lines,
};
use super::components::pool::detail::ToolDetail;
use super::components::pool::panel::PoolPanel;
use super::components::queue::QueuedLines;
use super::components::status::StatusLine;
use super::components::transcript::conversation::Conversation;
use super::layout::Focus;

pub fn view(app: &App, frame: &mut Frame) {
    let t = &app.theme;
    let a = app.areas_at(frame.area());
    frame.render_widget(
        Conversation {
            transcript: &app.transcript,
            scroll: app.viewport.scroll,
            unseen_below: app.viewport.unseen_below,
            theme: t,
            model_label: &app.model_label,
            workspace: &app.info.workspace,
            servers: &app.info.servers,
            rules: &match app.transcript.is_empty() {
                true => super::components::overlays::rule_lines(&app.pool),
                false => Vec::new(),
            },
        },
        a.conversation,
    );
    if let Some(pool) = a.pool {
        frame.render_widget(
            PoolPanel {
                pool: &app.pool,
                theme: t,
                focused: app.focus == Focus::Pool,
                now: app.now,
                servers: &app.info.servers,
            },
            pool,
        );
    }
    if app.focus == Focus::Pool {
        frame.render_widget(
            ToolDetail {
                state: &app.detail,
                scroll: app.detail.scroll,
                theme: t,
            },
            a.conversation,
        );
    }
    if app.queue.rows() > 0 {
        frame.render_widget(
            QueuedLines {
                queue: &app.queue,
                theme: t,
            },
            a.queued,
        );
    }
    frame.render_widget(
        Composer {
            textarea: &app.composer.textarea,
            focused: app.focus == Focus::Composer && app.inbox.is_empty(),
            theme: t,
        },
        a.composer,
    );
    if let Some(form) = &app.assist.form {
        frame.render_widget(
            FormQuestion {
                text: &form.question(),
                theme: t,
            },
            a.composer,
        );
    }
    if let Some(popup) = &app.assist.popup
        && app.focus == Focus::Composer
    {
        let widget = CompletionPopup { popup, theme: t };
        let area = widget.area(a.composer, frame.area());
        frame.render_widget(widget, area);
    }
    if let Some(search) = &app.history.search {
        let widget = SearchPopup {
            history: &app.history,
            search,
            theme: t,
        };
        let area = widget.area(a.composer, frame.area());
        frame.render_widget(widget, area);
    }
    frame.render_widget(
        StatusLine {
            model_label: &app.model_label,
            session_id: &app.session_id,
            turn: app.turn,
            retry: app.model_retry.as_ref(),
            waiting: app.inbox.len(),
            queued: app.queue.len(),
            sandbox_problem: app.sandbox_problem.as_deref(),
            mode: app.permission_mode,
            usage: &app.usage,
            context: app.context,
            flash: app.flash.as_ref(),
            focus: app.focus,
            now: app.now,
            theme: t,
        },
        a.status,
    );
    let screen = frame.area();
    match app.overlay {
        Overlay::None => {}
        Overlay::Help => frame.render_widget(
            HelpOverlay {
                theme: t,
                commands: &app.assist.commands,
            },
            screen,
        ),
        Overlay::Mcp { selected } => frame.render_widget(
            McpOverlay {
                pool: &app.pool,
                servers: &app.info.servers,
                catalogs: &app.assist.catalogs,
                selected,
                theme: t,
            },
            screen,
        ),
        Overlay::Permissions { selected } => frame.render_widget(
            PermissionsOverlay {
                rules: &rule_lines(&app.pool),
                managed: &app.info.managed,
                session_grants: &app.session_grants,
                selected,
                theme: t,
            },
            screen,
        ),
    }
    InboxModal {
        inbox: &app.inbox,
        theme: t,
        now: app.now,
    }
    .draw(frame);
}
