//! Console state: the [`App`] holds the components and what belongs to no single one of
//! them (focus, the turn, the status line's message, the layout), and the messages
//! [`super::update`] takes. No I/O here, and time comes from `App::now`, so tests control
//! the clock.

use std::time::{Duration, Instant};

use crossterm::event::Event;
use ratatui::layout::Rect;

use super::components::completion::assist::{Assist, Outcome};
use super::components::composer::ComposerState;
use super::components::history::History;
use super::components::inbox::state::Inbox;
use super::components::overlays::Overlay;
use super::components::pool::detail::DetailState;
use super::components::pool::state::PoolView;
use super::components::queue::Queue;
use super::components::status::{RetryCountdown, Turn};
use super::components::transcript::state::{EntryKind, Transcript};
use super::components::transcript::viewport::Viewport;
use super::effect::Effect;
use super::layout::{Areas, Focus, Shape, areas};
use super::theme::Theme;
use crate::protocol::AgentEvent;
pub use crate::protocol::ServerInfo;
use crate::protocol::Usage;

/// A second Ctrl+C within this window quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// Static facts the console shows that no event carries.
#[derive(Debug, Clone, Default)]
pub struct ConsoleInfo {
    pub workspace: std::path::PathBuf,
    pub servers: Vec<ServerInfo>,
    /// Draw without colours (set by `run` when NO_COLOR is set; emphasis stays).
    pub no_color: bool,
    /// The managed policy as `/permissions` shows it (its files, what it sets, what it
    /// overrides); empty without one (decision 0082).
    pub managed: Vec<String>,
    /// `[tui] notify`: what a question arriving in the background writes.
    pub notify: crate::protocol::NotifySetting,
}

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
    /// The person's editor exited (Ctrl+G, or a file opened in it).
    Edited(super::editor::Edited),
}

/// What one [`super::update`] did: effects to carry out, and whether the screen may look different
/// (keys that change nothing, mouse moves and the like do not cost a frame).
#[derive(Debug)]
#[must_use]
pub struct Update {
    pub effects: Vec<Effect>,
    pub redraw: bool,
}

pub struct App {
    /// The time as far as `update` and `view` are concerned; the runtime sets it.
    pub now: Instant,
    pub theme: Theme,
    pub info: ConsoleInfo,
    pub session_id: String,
    pub model_label: String,
    pub transcript: Transcript,
    pub viewport: Viewport,
    pub pool: PoolView,
    /// Questions waiting for the person; the modal shows one of them.
    pub inbox: Inbox,
    pub composer: ComposerState,
    /// Earlier prompts of this workspace (↑/↓, Ctrl+R).
    pub history: History,
    /// What the person sent while a turn runs, until it is sent (decision 0076).
    pub queue: Queue,
    /// When the last dialog, overlay, popup or the pool's focus went away: an Esc just
    /// after it was meant for that, not for the turn.
    pub dialog_closed_at: Option<Instant>,
    pub focus: Focus,
    pub overlay: Overlay,
    pub turn: Turn,
    /// The model retry the running turn waits for (status line countdown).
    pub model_retry: Option<RetryCountdown>,
    /// How full the model's context window is (the status line's gauge).
    pub context: Option<crate::protocol::ContextGauge>,
    pub usage: Usage,
    /// Tools the user allowed for this session (revocable from /permissions).
    pub session_grants: Vec<crate::protocol::GrantLine>,
    /// Set by the first Ctrl+C while idle; a second one before it runs out quits.
    pub quit_armed_until: Option<Instant>,
    /// A short message for the status line, with when it goes away.
    pub flash: Option<(String, Instant)>,
    /// Pool panel hidden by the user (Ctrl+P); narrow screens start with it narrowed.
    pub pool_collapsed: bool,
    pub agent_gone: bool,
    /// Why bash runs without the sandbox this session, if it does (status line).
    pub sandbox_problem: Option<String>,
    /// The permission mode in force, as the agent last said (Shift+Tab asks for the next).
    pub permission_mode: crate::protocol::PermissionMode,
    /// The terminal's size, as the last resize message reported it.
    pub screen: Rect,
    /// The layout at that size (the function `view` draws with); scrolling and paging
    /// count in the conversation's lines.
    pub areas: Areas,
    /// The selected tool's details, wrapped for the detail panel at the current size.
    pub detail: DetailState,
    /// The completion popup, the prompt-argument questions, and the servers' catalogs.
    pub assist: Assist,
    /// The instruction files and command files the session loaded (`/memory`, `/help`).
    pub project: crate::protocol::ProjectView,
    /// The terminal has the focus, as its focus reports say (true until one says not).
    pub focused: bool,
}

impl App {
    pub fn new(info: ConsoleInfo, now: Instant) -> Self {
        let theme = Theme::new(!info.no_color);
        let names: Vec<String> = info.servers.iter().map(|s| s.name.clone()).collect();
        App {
            now,
            theme,
            session_id: String::new(),
            model_label: String::new(),
            transcript: Transcript::new(theme),
            viewport: Viewport::default(),
            pool: PoolView::new(&names),
            inbox: Inbox::default(),
            composer: ComposerState::new(theme),
            history: History::default(),
            queue: Queue::default(),
            dialog_closed_at: None,
            focus: Focus::Composer,
            overlay: Overlay::None,
            turn: Turn::Idle,
            model_retry: None,
            context: None,
            usage: Usage::default(),
            session_grants: Vec::new(),
            quit_armed_until: None,
            flash: None,
            pool_collapsed: false,
            agent_gone: false,
            sandbox_problem: None,
            permission_mode: crate::protocol::PermissionMode::Default,
            screen: Rect::default(),
            areas: Areas::default(),
            detail: DetailState::default(),
            assist: Assist::default(),
            project: Default::default(),
            focused: true,
            info,
        }
    }

    pub fn composer_text(&self) -> String {
        self.composer.text()
    }

    pub(super) fn set_flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now + Duration::from_secs(4)));
    }

    /// Something other than the composer takes Esc now: a question, an overlay, the
    /// completion popup or a prompt's form, or the pool's focus.
    pub fn dialog_open(&self) -> bool {
        !self.inbox.is_empty()
            || self.overlay != Overlay::None
            || self.assist.popup.is_some()
            || self.assist.form.is_some()
            || self.focus == Focus::Pool
            || self.history.search.is_some()
    }

    /// The earliest moment the screen changes by itself. None while idle: no timers then.
    pub fn next_deadline(&self) -> Option<Instant> {
        [
            self.turn.next_frame(self.now),
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

    /// The layout at `area` for the current state (the composer's height, the panel).
    pub fn areas_at(&self, area: Rect) -> Areas {
        areas(
            area,
            Shape {
                composer_lines: self.composer.line_count(),
                queued_rows: self.queue.rows(),
                pool_collapsed: self.pool_collapsed,
                focus: self.focus,
            },
        )
    }

    /// Recomputes what depends on the size and the layout inputs (composer height, panel
    /// shown, focus), and the tool details while they are shown. Cheap when nothing moved.
    pub(super) fn relayout(&mut self) {
        self.areas = self.areas_at(self.screen);
        if self.focus == Focus::Pool {
            self.detail
                .refresh(&self.pool, self.areas.conversation, &self.theme);
        }
    }

    /// A line in the conversation from the console itself.
    pub(super) fn note(&mut self, kind: EntryKind) {
        self.transcript.push(kind);
        self.viewport.content_changed();
    }

    /// Shows what the completion did outside itself.
    pub(super) fn completion_outcome(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Shown => {}
            Outcome::Flash(text) => self.set_flash(text),
            Outcome::PromptSent(line) => {
                self.note(EntryKind::Notice(line));
                self.turn = Turn::start(self.now);
            }
        }
    }
}
