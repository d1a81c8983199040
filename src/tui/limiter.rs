//! Redraw pacing: draw when something changed, at most once per frame interval. Time is
//! passed in, so tests drive it with a fake clock.

use std::time::{Duration, Instant};

/// 60 frames per second.
pub const FRAME_INTERVAL: Duration = Duration::from_nanos(1_000_000_000 / 60);

#[derive(Debug, Clone)]
pub struct FrameLimiter {
    interval: Duration,
    last_draw: Option<Instant>,
    dirty: bool,
}

impl Default for FrameLimiter {
    fn default() -> Self {
        FrameLimiter::new(FRAME_INTERVAL)
    }
}

impl FrameLimiter {
    pub fn new(interval: Duration) -> Self {
        FrameLimiter {
            interval,
            last_draw: None,
            dirty: true,
        }
    }

    /// Something visible changed.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// True when a frame should be drawn now; the caller then draws and calls [`drawn`].
    ///
    /// [`drawn`]: FrameLimiter::drawn
    pub fn should_draw(&self, now: Instant) -> bool {
        self.dirty
            && self
                .last_draw
                .is_none_or(|last| now.saturating_duration_since(last) >= self.interval)
    }

    pub fn drawn(&mut self, now: Instant) {
        self.dirty = false;
        self.last_draw = Some(now);
    }

    /// When a pending change may be drawn; None when nothing waits (no timer while idle).
    pub fn next_draw_at(&self, now: Instant) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(
            self.last_draw
                .map_or(now, |last| (last + self.interval).max(now)),
        )
    }
}
