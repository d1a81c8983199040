//! Where each part of the screen goes for a given terminal size. A pure function of the
//! state: `update` runs it when the size or the state it depends on changes (scrolling and
//! paging count in the conversation's lines), and `view` runs it to draw, so the two always
//! agree without the view writing anything back.

use ratatui::layout::{Constraint, Layout, Rect};

/// Which part takes the keys the inbox and the overlays leave: the composer, or the pool
/// panel (its details then cover the conversation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Composer,
    Pool,
}

/// The parts of the screen at one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    pub conversation: Rect,
    /// The pool panel; on narrow screens only while it has the focus (then over the
    /// conversation).
    pub pool: Option<Rect>,
    /// What the person queued while a turn runs, just above the composer (no rows when
    /// nothing is queued).
    pub queued: Rect,
    pub composer: Rect,
    pub status: Rect,
}

/// Panel width: roomy on wide screens, narrower below 100 columns, gone below 60 (Tab
/// still opens it, over the conversation).
fn pool_width(collapsed: bool, width: u16) -> u16 {
    if collapsed {
        0
    } else if width >= 100 {
        38
    } else if width >= 60 {
        30
    } else {
        0
    }
}

/// What the layout depends on besides the size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub composer_lines: usize,
    /// Rows of queued messages above the composer.
    pub queued_rows: u16,
    /// The user hid the pool panel.
    pub pool_collapsed: bool,
    pub focus: Focus,
}

/// The layout for `area` in this shape.
pub fn areas(area: Rect, shape: Shape) -> Areas {
    let Shape {
        composer_lines,
        queued_rows,
        pool_collapsed,
        focus,
    } = shape;
    let composer_lines = composer_lines.clamp(1, 6) as u16;
    let [main, queued, composer, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(queued_rows),
        Constraint::Length(composer_lines + 2),
        Constraint::Length(1),
    ])
    .areas(area);
    let panel = pool_width(pool_collapsed, main.width);
    if panel == 0 {
        let pool = (focus == Focus::Pool).then_some(main);
        return Areas {
            conversation: main,
            pool,
            queued,
            composer,
            status,
        };
    }
    let [conversation, pool] =
        Layout::horizontal([Constraint::Min(10), Constraint::Length(panel)]).areas(main);
    Areas {
        conversation,
        pool: Some(pool),
        queued,
        composer,
        status,
    }
}
