//! Console state and `update`: every input (key, mouse, paste, resize, agent event, timer)
//! becomes a [`Msg`]; `update` changes the [`App`] and returns an [`Update`]: the
//! [`Effect`]s for the runtime to carry out and whether the screen may have changed. No I/O
//! here, and time comes from `App::now`, so tests control the clock.

use std::time::{Duration, Instant};

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::inbox::{Inbox, KeyResult};
use super::layout::{Areas, areas};
use super::pool::PoolView;
use super::theme::Theme;
use super::transcript::{EntryKind, Scroll, ToolCard, ToolState, Transcript, summarize_args};
use super::widgets::DetailState;
use crate::model::Usage;
use crate::policy::{AuditRecord, Decider, Permit, PersonAnswer, RuleSource};
use crate::protocol::{AgentEvent, UiCommand};
use crate::sanitize::for_terminal;

/// A second Ctrl+C within this window quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// Spinner frame length while a turn runs.
pub const SPINNER_FRAME: Duration = Duration::from_millis(100);
/// Lines per mouse-wheel notch.
const WHEEL_LINES: usize = 3;

/// Static facts the console shows that no event carries.
#[derive(Debug, Clone, Default)]
pub struct ConsoleInfo {
    pub workspace: std::path::PathBuf,
    pub servers: Vec<ServerInfo>,
    /// Draw without colours (set by `run` when NO_COLOR is set; emphasis stays).
    pub no_color: bool,
}

pub use crate::protocol::ServerInfo;

// Messages are moved once from the channel into `update`, never stored in bulk, so the size
// of the largest agent event costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Msg {
    Terminal(Event),
    Agent(AgentEvent),
    /// The agent's event channel closed.
    AgentGone,
    /// A deadline the app asked for passed (spinner frame, highlight expiry, guard end).
    Tick,
}

/// What one [`update`] did: effects to carry out, and whether the screen may look different
/// (keys that change nothing, mouse moves and the like do not cost a frame).
#[derive(Debug)]
#[must_use]
pub struct Update {
    pub effects: Vec<Effect>,
    pub redraw: bool,
}

#[derive(Debug)]
pub enum Effect {
    SendCommand(UiCommand),
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Composer,
    Pool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    Mcp { selected: usize },
    Permissions { selected: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Idle,
    Running { since: Instant, cancel_sent: bool },
}

/// A rule as `/permissions` lists it: one line per distinct (decision, rule, source).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLine {
    pub decision: String,
    pub rule: String,
    pub source: String,
    pub tools: Vec<String>,
}

pub struct App {
    /// The time as far as `update` and `view` are concerned; the runtime sets it.
    pub now: Instant,
    pub theme: Theme,
    pub info: ConsoleInfo,
    pub session_id: String,
    pub model_label: String,
    pub transcript: Transcript,
    pub scroll: Scroll,
    /// Output arrived while the user was scrolled up.
    pub unseen_below: bool,
    pub pool: PoolView,
    /// Questions waiting for the person; the modal shows one of them.
    pub inbox: Inbox,
    pub composer: TextArea<'static>,
    pub focus: Focus,
    pub overlay: Overlay,
    pub turn: Turn,
    pub usage: Usage,
    /// Tools the user allowed for this session (revocable from /permissions).
    pub session_grants: Vec<String>,
    /// Set by the first Ctrl+C while idle; a second one before it runs out quits.
    pub quit_armed_until: Option<Instant>,
    /// A short message for the status line, with when it goes away.
    pub flash: Option<(String, Instant)>,
    /// Pool panel hidden by the user (Ctrl+P); narrow screens start with it narrowed.
    pub pool_collapsed: bool,
    pub agent_gone: bool,
    /// Why bash runs without the sandbox this session, if it does (status line).
    pub sandbox_problem: Option<String>,
    /// The terminal's size, as the last resize message reported it.
    pub screen: Rect,
    /// The layout at that size (the function `view` draws with); scrolling and paging
    /// count in the conversation's lines.
    pub areas: Areas,
    /// First line shown of the selected tool's details (long schemas scroll).
    pub detail_scroll: usize,
    /// The selected tool's details, wrapped for the detail panel at the current size.
    pub detail: DetailState,
    /// Resources, templates and prompts of the connected servers (for `@` and `/`).
    pub catalogs: std::collections::BTreeMap<String, std::sync::Arc<crate::mcp::Catalog>>,
    /// The completion popup and the prompt-argument questions.
    pub assist: super::assist::Assist,
}

fn new_composer() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text("Message the agent — /help for commands, ? for keys");
    t.set_cursor_line_style(ratatui::style::Style::new());
    t
}

impl App {
    pub fn new(info: ConsoleInfo, now: Instant) -> Self {
        let theme = Theme::new(!info.no_color);
        let names: Vec<String> = info.servers.iter().map(|s| s.name.clone()).collect();
        let mut composer = new_composer();
        composer.set_placeholder_style(theme.dim());
        App {
            now,
            theme,
            session_id: String::new(),
            model_label: String::new(),
            transcript: Transcript::new(theme),
            scroll: Scroll::Follow,
            unseen_below: false,
            pool: PoolView::new(&names),
            inbox: Inbox::default(),
            composer,
            focus: Focus::Composer,
            overlay: Overlay::None,
            turn: Turn::Idle,
            usage: Usage::default(),
            session_grants: Vec::new(),
            quit_armed_until: None,
            flash: None,
            pool_collapsed: false,
            agent_gone: false,
            sandbox_problem: None,
            screen: Rect::default(),
            areas: Areas::default(),
            detail_scroll: 0,
            detail: DetailState::default(),
            catalogs: Default::default(),
            assist: Default::default(),
            info,
        }
    }

    pub fn composer_text(&self) -> String {
        self.composer.lines().join("\n")
    }

    pub(super) fn reset_composer(&mut self) {
        self.composer = new_composer();
        self.composer.set_placeholder_style(self.theme.dim());
    }

    pub(super) fn set_flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now + Duration::from_secs(4)));
    }

    /// The earliest moment the screen changes by itself. None while idle: no timers then.
    pub fn next_deadline(&self) -> Option<Instant> {
        let spinner = match self.turn {
            Turn::Running { since, .. } => {
                let elapsed = self.now.saturating_duration_since(since);
                let frames = elapsed.as_millis() / SPINNER_FRAME.as_millis() + 1;
                Some(since + SPINNER_FRAME * frames as u32)
            }
            Turn::Idle => None,
        };
        [
            spinner,
            self.pool.next_expiry(),
            self.inbox.next_deadline(self.now),
            self.quit_armed_until,
            self.flash.as_ref().map(|(_, t)| *t),
        ]
        .into_iter()
        .flatten()
        .filter(|t| *t > self.now)
        .min()
    }

    /// Rules in force, from the verdicts of the current pool (with their sources).
    pub fn rule_lines(&self) -> Vec<RuleLine> {
        let mut out: Vec<RuleLine> = Vec::new();
        for entry in self.pool.entries() {
            let v = &entry.verdict;
            let decision = match v.decision {
                crate::policy::Decision::Allow => "allow",
                crate::policy::Decision::Ask { .. } => "ask",
                crate::policy::Decision::Deny { .. } => "deny",
            }
            .to_string();
            let source = describe_source(&v.source);
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

    fn conversation_metrics(&self) -> (u16, usize) {
        let area = self.areas.conversation;
        (area.width.max(1), area.height.max(1) as usize)
    }

    /// Recomputes what depends on the size and the layout inputs (composer height, panel
    /// shown, focus), and the tool details while they are shown. Cheap when nothing moved.
    fn relayout(&mut self) {
        self.areas = areas(self, self.screen);
        if self.focus == Focus::Pool {
            self.detail
                .refresh(&self.pool, self.areas.conversation, &self.theme);
        }
    }

    fn scroll_up(&mut self, n: usize) {
        let (w, h) = self.conversation_metrics();
        self.scroll = self.transcript.scroll_up(self.scroll, n, w, h);
    }

    fn scroll_down(&mut self, n: usize) {
        let (w, h) = self.conversation_metrics();
        self.scroll = self.transcript.scroll_down(self.scroll, n, w, h);
        if self.scroll == Scroll::Follow {
            self.unseen_below = false;
        }
    }

    pub(super) fn content_changed(&mut self) {
        if self.scroll != Scroll::Follow {
            self.unseen_below = true;
        }
    }
}

pub fn describe_source(source: &RuleSource) -> String {
    source.to_string()
}

pub fn update(app: &mut App, msg: Msg) -> Update {
    let mut effects = Vec::new();
    let mut redraw = false;
    if let Some((_, until)) = &app.flash
        && *until <= app.now
    {
        app.flash = None;
        redraw = true;
    }
    if app.quit_armed_until.is_some_and(|t| t <= app.now) {
        app.quit_armed_until = None;
    }
    redraw |= match msg {
        Msg::Terminal(event) => on_terminal(app, event, &mut effects),
        Msg::Agent(AgentEvent::Completions { id, values }) => {
            super::assist::on_completions(app, id, values, &mut effects);
            true
        }
        Msg::Agent(AgentEvent::Catalog { server, catalog }) => {
            if catalog.has_resources || catalog.has_prompts {
                app.catalogs.insert(server, catalog);
            } else {
                app.catalogs.remove(&server);
            }
            super::assist::refresh(app, &mut effects);
            true
        }
        Msg::Agent(event) => {
            on_agent(app, event);
            true
        }
        Msg::AgentGone => {
            if !app.agent_gone {
                app.agent_gone = true;
                app.turn = Turn::Idle;
                app.transcript.push(EntryKind::Error(
                    "the agent stopped; press Ctrl+D to quit".into(),
                ));
                app.content_changed();
            }
            true
        }
        // Ticks come only when something due changes the screen (spinner frame, a highlight,
        // the inbox's guard ending, a countdown second, a deadline).
        Msg::Tick => true,
    };
    redraw |= app.pool.expire(app.now);
    redraw |= app.inbox.prune(app.now);
    for expired in app.inbox.expire_due(app.now) {
        app.transcript
            .push(EntryKind::Notice(for_terminal(&expired.message())));
        app.content_changed();
        redraw = true;
    }
    app.relayout();
    Update { effects, redraw }
}

/// What a tool card says about its permission decision.
fn decision_label(record: &AuditRecord) -> String {
    let verb = match record.decision {
        Permit::Allow => "allowed",
        Permit::Deny => "denied",
    };
    match &record.decider {
        Decider::Person { answer, .. } => match answer {
            PersonAnswer::AllowOnce => "you answered: allow once".into(),
            PersonAnswer::AllowSession => "you answered: allow for this session".into(),
            PersonAnswer::AllowAlways => "you answered: always allow".into(),
            PersonAnswer::Deny => "you answered: deny".into(),
            PersonAnswer::DenyWithNote(note) => format!("you answered: deny ({note})"),
        },
        Decider::SessionGrant { .. } => format!("{verb} for this session (your earlier answer)"),
        Decider::Rule { rule, source } => {
            let place = match source {
                RuleSource::UserConfig(_) => "user config",
                RuleSource::ProjectConfig(_) => "project config",
                RuleSource::Flag => "command-line flag",
                RuleSource::Default | RuleSource::SessionGrant => "default",
            };
            format!("{verb} by rule {rule} ({place})")
        }
        // Defaults read "default: built-in" and the like.
        Decider::Default { rule } => format!("{verb} by {rule}"),
        Decider::Expired { .. } => "denied: nobody answered before the deadline".into(),
        Decider::Dismissed { .. } => "denied: the question was dismissed".into(),
        Decider::Headless { .. } => "denied: nobody could be asked (non-interactive)".into(),
    }
}

fn on_agent(app: &mut App, event: AgentEvent) {
    match event {
        AgentEvent::SessionStarted {
            session_id,
            model_label,
            workspace,
            servers,
            sandbox_problem,
        } => {
            app.sandbox_problem = sandbox_problem.map(|p| for_terminal(&p));
            app.session_id = for_terminal(&session_id);
            app.model_label = for_terminal(&model_label);
            app.info.workspace = workspace;
            for server in &servers {
                app.pool.add_configured(&server.name);
            }
            app.info.servers = servers;
            return;
        }
        AgentEvent::ServersChanged { servers } => {
            let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
            app.pool.set_configured(&names);
            app.info.servers = servers;
        }
        AgentEvent::UserMessage(text) => {
            let text = for_terminal(&text);
            // The composer already showed what was sent; the echo only adds replayed ones.
            let echoed = matches!(app.turn, Turn::Running { .. })
                && app.transcript.last_user_text() == Some(text.as_str());
            if !echoed {
                app.transcript.push(EntryKind::User(text));
            }
        }
        AgentEvent::TextDelta(delta) => app.transcript.append_text(&for_terminal(&delta)),
        AgentEvent::AssistantMessageDone => app.transcript.close_stream(),
        AgentEvent::ToolCallStarted {
            call_id,
            name,
            server,
            input,
        } => app.transcript.push(EntryKind::Tool(ToolCard {
            call_id: call_id.into_string(),
            name: for_terminal(&name),
            server: server.map(|s| for_terminal(&s)),
            args_summary: summarize_args(&input),
            images: Vec::new(),
            state: ToolState::Running {
                progress: None,
                message: None,
            },
            decided: None,
            output: String::new(),
        })),
        AgentEvent::ToolProgress {
            call_id,
            progress,
            total,
            message,
        } => {
            app.transcript.update_tool(&call_id, |card| {
                card.state = ToolState::Running {
                    progress: Some((progress, total)),
                    message: message.map(|m| for_terminal(&m)),
                }
            });
        }
        AgentEvent::ToolImages { call_id, images } => {
            // Media types come from the server: cleaned like any server text.
            let images: Vec<_> = images
                .into_iter()
                .map(|mut image| {
                    image.media_type = for_terminal(&image.media_type);
                    image
                })
                .collect();
            app.transcript
                .update_tool(&call_id, |card| card.images = images.clone());
        }
        AgentEvent::ToolCallFinished {
            call_id,
            outcome,
            output,
        } => {
            let output = for_terminal(&output);
            let found = app.transcript.update_tool(&call_id, |card| {
                card.state = ToolState::Finished(outcome);
                card.output = output.clone();
            });
            if !found {
                app.transcript.push(EntryKind::Tool(ToolCard {
                    call_id: call_id.into_string(),
                    name: "tool".into(),
                    server: None,
                    args_summary: String::new(),
                    state: ToolState::Finished(outcome),
                    output,
                    decided: None,
                    images: Vec::new(),
                }));
            }
        }
        AgentEvent::PoolChanged(update) => {
            app.pool.apply_update(update, app.now);
            return;
        }
        AgentEvent::ServerStatus { server, status } => {
            if !matches!(status, crate::mcp::ServerStatus::Ready { .. }) {
                app.catalogs.remove(&server);
            }
            // A server a reload removed says "disconnected" after its row went (hub events
            // travel on their own task): that must not bring the row back.
            let removed = matches!(status, crate::mcp::ServerStatus::Disconnected { .. })
                && app.pool.server(&for_terminal(&server)).is_none();
            if !removed {
                app.pool.set_status(&server, status);
            }
            return;
        }
        AgentEvent::ServerEnabled { server, enabled } => {
            if let Some(info) = app.info.servers.iter_mut().find(|s| s.name == server) {
                info.enabled = enabled;
            }
            return;
        }
        // Taken by `update` before it gets here.
        AgentEvent::Catalog { .. } | AgentEvent::Completions { .. } => return,
        AgentEvent::ServerAuth { server, status } => {
            app.pool.set_auth(&server, status);
            return;
        }
        AgentEvent::Request(request) => {
            app.inbox.push(request, app.now);
            return;
        }
        AgentEvent::PermissionDecided { call_id, record } => {
            if let Decider::Person {
                answer: PersonAnswer::AllowSession,
                ..
            } = &record.decider
                && !app.session_grants.contains(&record.tool)
            {
                app.session_grants.push(record.tool.clone());
            }
            let label = for_terminal(&decision_label(&record));
            app.transcript
                .update_tool(&call_id, |card| card.decided = Some(label));
        }
        AgentEvent::TurnFinished { usage, cancelled } => {
            app.usage.add(&usage);
            app.turn = Turn::Idle;
            app.transcript.close_stream();
            if cancelled {
                app.transcript.cancel_running_tools();
                app.transcript
                    .push(EntryKind::Notice("turn cancelled".into()));
            }
        }
        AgentEvent::Sampling(report) => {
            if let Some(record) = &report.decision
                && let Decider::Person {
                    answer: PersonAnswer::AllowSession,
                    ..
                } = &record.decider
                && !app.session_grants.contains(&record.tool)
            {
                // Listed in /permissions as `sampling(SERVER)`, revocable like a tool's.
                app.session_grants.push(record.tool.clone());
            }
            // Spent on the person's model like a turn's tokens.
            let used = report.usage();
            app.usage.input_tokens += used.input_tokens;
            app.usage.output_tokens += used.output_tokens;
            let line = for_terminal(&report.summary());
            match report.outcome {
                crate::protocol::SamplingOutcome::Answered { .. } => {
                    app.transcript.push(EntryKind::Notice(line))
                }
                _ => app.transcript.push(EntryKind::Error(line)),
            }
        }
        AgentEvent::ServerLog {
            server,
            level,
            message,
        } => {
            app.pool.add_log(&server, level, &message);
            return;
        }
        AgentEvent::ServerInstructions { server, text } => {
            app.pool.set_instructions(&server, &text);
            return;
        }
        AgentEvent::Error(text) => app.transcript.push(EntryKind::Error(for_terminal(&text))),
        AgentEvent::Notice(text) => app.transcript.push(EntryKind::Notice(for_terminal(&text))),
    }
    app.content_changed();
}

/// Handles terminal input; true when the screen may have changed.
fn on_terminal(app: &mut App, event: Event, effects: &mut Vec<Effect>) -> bool {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => on_key(app, key, effects),
        Event::Mouse(mouse) => on_mouse(app, mouse),
        Event::Paste(text) => {
            if !app.inbox.is_empty() {
                app.inbox.paste(&text);
            } else {
                // Pasted text keeps its newlines but loses anything that could drive the terminal.
                app.composer.insert_str(for_terminal(&text));
                app.focus = Focus::Composer;
            }
            true
        }
        // The layout follows in `relayout`; cached wraps re-key on width.
        Event::Resize(width, height) => {
            app.screen = Rect::new(0, 0, width, height);
            true
        }
        _ => false,
    }
}

/// The view state scrolling can change, to tell whether a scroll moved anything.
fn scroll_state(app: &App) -> (Scroll, bool) {
    (app.scroll, app.unseen_below)
}

fn on_mouse(app: &mut App, mouse: MouseEvent) -> bool {
    let before = scroll_state(app);
    match mouse.kind {
        MouseEventKind::ScrollUp => app.scroll_up(WHEEL_LINES),
        MouseEventKind::ScrollDown => app.scroll_down(WHEEL_LINES),
        // Moves and clicks: nothing to show.
        _ => return false,
    }
    scroll_state(app) != before
}

fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char(c)
}

/// Handles a key; true when the screen may have changed.
fn on_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    if ctrl(&key, 'c') {
        on_ctrl_c(app, effects);
        return true;
    }
    if ctrl(&key, 'd') {
        effects.push(Effect::Quit);
        return true;
    }
    // The inbox owns the keyboard while a request waits.
    if !app.inbox.is_empty() {
        match app.inbox.handle_key(key, app.now) {
            // The asker was told through the request's own channel; a tool call's card
            // shows the outcome when the agent reports the decision.
            KeyResult::Answered(closed) => {
                tracing::debug!(request = %closed.id, kind = closed.kind, outcome = %closed.outcome, delivered = closed.delivered, "answered");
                return true;
            }
            KeyResult::Consumed => return true,
            KeyResult::NotHandled => {}
        }
    }
    if ctrl(&key, 'o') {
        app.transcript.expand_tools = !app.transcript.expand_tools;
        return true;
    }
    if ctrl(&key, 'p') {
        app.pool_collapsed = !app.pool_collapsed;
        if app.pool_collapsed && app.focus == Focus::Pool {
            app.focus = Focus::Composer;
        }
        return true;
    }
    // With the pool focused its details cover the conversation, so paging moves them.
    if app.focus == Focus::Pool && app.overlay == Overlay::None {
        let max = app.detail.max_scroll();
        let step = app.detail.page().saturating_sub(1).max(1);
        let before = app.detail_scroll;
        match key.code {
            KeyCode::PageUp => {
                app.detail_scroll = app.detail_scroll.min(max).saturating_sub(step);
                return app.detail_scroll != before;
            }
            KeyCode::PageDown => {
                app.detail_scroll = (app.detail_scroll + step).min(max);
                return app.detail_scroll != before;
            }
            _ => {}
        }
    }
    let before = scroll_state(app);
    match key.code {
        KeyCode::PageUp => {
            app.scroll_up(page(app));
            return scroll_state(app) != before;
        }
        KeyCode::PageDown => {
            app.scroll_down(page(app));
            return scroll_state(app) != before;
        }
        KeyCode::Home if key.modifiers.contains(KeyModifiers::CONTROL) => {
            app.scroll = Scroll::Anchored { entry: 0, line: 0 };
            return scroll_state(app) != before;
        }
        KeyCode::End if key.modifiers.contains(KeyModifiers::CONTROL) => {
            app.scroll = Scroll::Follow;
            app.unseen_below = false;
            return scroll_state(app) != before;
        }
        _ => {}
    }
    if app.overlay != Overlay::None {
        return on_overlay_key(app, key, effects);
    }
    match app.focus {
        Focus::Pool => on_pool_key(app, key),
        Focus::Composer => on_composer_key(app, key, effects),
    }
}

fn page(app: &App) -> usize {
    (app.areas.conversation.height as usize)
        .saturating_sub(2)
        .max(1)
}

fn on_ctrl_c(app: &mut App, effects: &mut Vec<Effect>) {
    let armed = app.quit_armed_until.is_some_and(|t| t > app.now);
    match app.turn {
        Turn::Running {
            since,
            cancel_sent: false,
        } => {
            effects.push(Effect::SendCommand(UiCommand::Cancel));
            app.turn = Turn::Running {
                since,
                cancel_sent: true,
            };
            app.quit_armed_until = Some(app.now + QUIT_WINDOW);
            app.set_flash("cancelling… (Ctrl+C again to quit)");
        }
        _ if armed => effects.push(Effect::Quit),
        _ if !app.composer.is_empty() => {
            app.composer = new_composer();
            app.composer.set_placeholder_style(app.theme.dim());
        }
        _ => {
            app.quit_armed_until = Some(app.now + QUIT_WINDOW);
            app.set_flash("press Ctrl+C again to quit");
        }
    }
}

fn on_overlay_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    let before = (app.overlay, app.flash.clone());
    let count = match app.overlay {
        Overlay::Mcp { .. } => app.pool.servers().len(),
        Overlay::Permissions { .. } => app.session_grants.len(),
        _ => 0,
    };
    let step = |selected: &mut usize, delta: isize| {
        if count > 0 {
            *selected = (*selected as isize + delta).clamp(0, count as isize - 1) as usize;
        }
    };
    match (&mut app.overlay, key.code) {
        (_, KeyCode::Esc | KeyCode::Char('q')) => app.overlay = Overlay::None,
        (Overlay::Help, _) => app.overlay = Overlay::None,
        (Overlay::Mcp { selected } | Overlay::Permissions { selected }, KeyCode::Up) => {
            step(selected, -1)
        }
        (Overlay::Mcp { selected } | Overlay::Permissions { selected }, KeyCode::Down) => {
            step(selected, 1)
        }
        (Overlay::Mcp { selected }, KeyCode::Char('r')) => {
            if let Some(row) = app.pool.servers().get(*selected) {
                let name = row.name.clone();
                if matches!(row.status, crate::mcp::ServerStatus::Ready { .. }) {
                    effects.push(Effect::SendCommand(UiCommand::Disconnect(name.clone())));
                }
                app.set_flash(format!("reconnecting {name}…"));
                effects.push(Effect::SendCommand(UiCommand::Connect(name)));
            }
        }
        (Overlay::Mcp { selected }, KeyCode::Char('d')) => {
            if let Some(row) = app.pool.servers().get(*selected) {
                effects.push(Effect::SendCommand(UiCommand::Disconnect(row.name.clone())));
            }
        }
        (
            Overlay::Permissions { selected },
            KeyCode::Char('x') | KeyCode::Delete | KeyCode::Backspace,
        ) if *selected < app.session_grants.len() => {
            let tool = app.session_grants.remove(*selected);
            *selected = (*selected).min(app.session_grants.len().saturating_sub(1));
            app.set_flash(format!("revoked the session grant for {tool}"));
            effects.push(Effect::SendCommand(UiCommand::RevokeGrant(tool)));
        }
        _ => {}
    }
    // A key either moves the selection, closes the overlay, shows a message or sends a
    // command; anything else leaves the screen as it was.
    (app.overlay, app.flash.clone()) != before || !effects.is_empty()
}

fn on_pool_key(app: &mut App, key: KeyEvent) -> bool {
    let before = (app.pool.selected, app.detail_scroll);
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => {
            app.pool.move_selection(-1);
            app.detail_scroll = 0;
        }
        KeyCode::Down | KeyCode::Char('j') => {
            app.pool.move_selection(1);
            app.detail_scroll = 0;
        }
        KeyCode::Tab | KeyCode::Esc | KeyCode::BackTab => {
            app.focus = Focus::Composer;
            return true;
        }
        KeyCode::Char(c) => {
            // Typing goes to the composer, so a user never loses keystrokes.
            app.focus = Focus::Composer;
            app.composer.insert_char(c);
            return true;
        }
        _ => {}
    }
    (app.pool.selected, app.detail_scroll) != before
}

fn on_composer_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    if let Some(redraw) = super::assist::on_key(app, key, effects) {
        return redraw;
    }
    let newline_mod = key
        .modifiers
        .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
    match key.code {
        KeyCode::Enter if newline_mod => app.composer.insert_newline(),
        KeyCode::Enter => submit(app, effects),
        KeyCode::Tab | KeyCode::BackTab if !app.pool_collapsed => app.focus = Focus::Pool,
        KeyCode::Char('?') if app.composer.is_empty() => app.overlay = Overlay::Help,
        KeyCode::Esc => return false,
        _ => {
            // The text area reports edits; cursor and selection moves show too.
            let before = (app.composer.cursor(), app.composer.selection_range());
            let popup_before = app.assist.popup.clone();
            let edited = app.composer.input(key);
            let moved = (app.composer.cursor(), app.composer.selection_range()) != before;
            if edited || moved {
                super::assist::refresh(app, effects);
            }
            return edited || moved || app.assist.popup != popup_before;
        }
    }
    true
}

fn submit(app: &mut App, effects: &mut Vec<Effect>) {
    let text = app.composer_text();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    if let Some(command) = trimmed.strip_prefix('/') {
        let command = command.to_string();
        reset_composer(app);
        return run_command(app, &command, effects);
    }
    if app.agent_gone {
        app.set_flash("the agent has stopped; Ctrl+D quits");
        return;
    }
    if matches!(app.turn, Turn::Running { .. }) {
        app.set_flash("a turn is running — wait for it or press Ctrl+C to cancel");
        return;
    }
    let message = trimmed.to_string();
    reset_composer(app);
    app.transcript.push(EntryKind::User(for_terminal(&message)));
    app.scroll = Scroll::Follow;
    app.unseen_below = false;
    app.turn = Turn::Running {
        since: app.now,
        cancel_sent: false,
    };
    effects.push(Effect::SendCommand(UiCommand::Submit(message)));
}

fn reset_composer(app: &mut App) {
    app.composer = new_composer();
    app.composer.set_placeholder_style(app.theme.dim());
}

fn run_command(app: &mut App, command: &str, effects: &mut Vec<Effect>) {
    let (first, rest) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    if first.starts_with("mcp__") && super::assist::run_prompt_command(app, first, rest, effects) {
        return;
    }
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or_default();
    let arg = words.next();
    match (name, arg) {
        ("connect", Some(server)) => {
            effects.push(Effect::SendCommand(UiCommand::Connect(server.to_string())))
        }
        ("disconnect", Some(server)) => effects.push(Effect::SendCommand(UiCommand::Disconnect(
            server.to_string(),
        ))),
        ("connect" | "disconnect", None) => {
            let names: Vec<&str> = app.pool.servers().iter().map(|s| s.name.as_str()).collect();
            app.transcript.push(EntryKind::Error(format!(
                "usage: /{name} NAME — configured servers: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
            app.content_changed();
        }
        ("mcp", Some(action @ ("enable" | "disable"))) => {
            let rest: Vec<&str> = words.collect();
            let save = rest.contains(&"--save");
            let server = rest.iter().find(|w| !w.starts_with("--"));
            match server {
                Some(server) => effects.push(Effect::SendCommand(UiCommand::SetServerEnabled {
                    server: server.to_string(),
                    enabled: action == "enable",
                    save,
                })),
                None => {
                    app.transcript.push(EntryKind::Error(format!(
                        "usage: /mcp {action} NAME [--save] — --save writes \"enabled\" into the server's .mcp.json"
                    )));
                    app.content_changed();
                }
            }
        }
        ("mcp", Some("reload")) => {
            app.set_flash("reloading the MCP configuration…");
            effects.push(Effect::SendCommand(UiCommand::ReloadConfig));
        }
        ("mcp", _) => app.overlay = Overlay::Mcp { selected: 0 },
        ("roots", None) => effects.push(Effect::SendCommand(UiCommand::ListRoots)),
        ("roots", Some("add")) => match command.split_once(" add ").map(|(_, dir)| dir.trim()) {
            Some(dir) if !dir.is_empty() => effects.push(Effect::SendCommand(UiCommand::AddRoot(
                std::path::PathBuf::from(dir),
            ))),
            _ => {
                app.transcript
                    .push(EntryKind::Error("usage: /roots add DIR".into()));
                app.content_changed();
            }
        },
        ("roots", Some(_)) => {
            app.transcript.push(EntryKind::Error(
                "usage: /roots (list) or /roots add DIR".into(),
            ));
            app.content_changed();
        }
        ("permissions", _) => app.overlay = Overlay::Permissions { selected: 0 },
        ("clear", _) => {
            app.transcript.clear();
            app.scroll = Scroll::Follow;
            app.unseen_below = false;
            effects.push(Effect::SendCommand(UiCommand::Clear));
        }
        ("undo", _) if matches!(app.turn, Turn::Running { .. }) => {
            app.set_flash("a turn is running — /undo can restore its files once it ends");
        }
        // The agent finds the files and asks before restoring them (an inbox request).
        ("undo", _) => effects.push(Effect::SendCommand(UiCommand::Undo)),
        ("help", _) => app.overlay = Overlay::Help,
        ("quit" | "exit", _) => effects.push(Effect::Quit),
        _ => {
            app.transcript.push(EntryKind::Error(format!(
                "unknown command /{} — /help lists the commands",
                for_terminal(name)
            )));
            app.content_changed();
        }
    }
}
