//! Redraw pacing: draw when something changed, at most 60 frames a second on average, but
//! never hold back the first frames after the screen was still. Time is passed in, so tests
//! drive it with a fake clock.
//!
//! The limiter paces bursts, not single updates. A change after an idle spell is drawn at
//! once, and so are up to [`BURST`] more within the same burst: at start-up the first
//! frame, the session's start and the first pool listing arrive a millisecond or two apart,
//! and after a key press the echo and the agent's first answer do; pacing those by a frame
//! interval each left the full first screen ~15 ms late for no gain. Frames drawn ahead of
//! the pace are paid back: each one moves the next paced frame one interval later, so any
//! second still holds at most 60 frames (a stream of deltas after a key press draws its
//! first frames at once, then steadily at 60 fps).

use std::time::{Duration, Instant};

/// 60 frames per second.
pub const FRAME_INTERVAL: Duration = Duration::from_nanos(1_000_000_000 / 60);

/// Frames that may be drawn ahead of the pace after an idle spell, besides the first.
pub const BURST: u32 = 2;

#[derive(Debug, Clone)]
pub struct FrameLimiter {
    interval: Duration,
    /// When the next frame keeps the pace; None before the first frame.
    next_paced: Option<Instant>,
    /// Frames the current burst may still draw ahead of the pace.
    burst_left: u32,
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
            next_paced: None,
            burst_left: 0,
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
        self.dirty && (self.on_pace(now) || self.burst_left > 0)
    }

    pub fn drawn(&mut self, now: Instant) {
        self.dirty = false;
        match self.next_paced {
            // Still for at least a whole interval past the pace (or never drawn): a new
            // burst starts with this frame.
            None => self.start_burst(now),
            Some(paced) if now >= paced + self.interval => self.start_burst(now),
            // On pace inside a steady stream: the burst, if any was left, is over, so a
            // stream never draws faster than the interval.
            Some(_) if self.on_pace(now) => {
                self.burst_left = 0;
                self.next_paced = Some(now + self.interval);
            }
            // Ahead of the pace (the caller drew anyway, or within a burst): the next paced
            // frame waits one interval more, so bursts do not raise the rate.
            Some(paced) => {
                self.burst_left = self.burst_left.saturating_sub(1);
                self.next_paced = Some(paced + self.interval);
            }
        }
    }

    /// When a pending change may be drawn; None when nothing waits (no timer while idle).
    pub fn next_draw_at(&self, now: Instant) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        if self.burst_left > 0 {
            return Some(now);
        }
        Some(self.next_paced.map_or(now, |paced| paced.max(now)))
    }

    fn on_pace(&self, now: Instant) -> bool {
        self.next_paced.is_none_or(|paced| now >= paced)
    }

    fn start_burst(&mut self, now: Instant) {
        self.burst_left = BURST;
        self.next_paced = Some(now + self.interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Draws whatever is due at each of `changes` (ms after start); the times it drew.
    fn frames(changes: &[u64]) -> Vec<u64> {
        let start = Instant::now();
        let mut limiter = FrameLimiter {
            dirty: false,
            ..FrameLimiter::default()
        };
        let mut drawn = Vec::new();
        let mut pending = changes.iter().peekable();
        // Step a fake clock by 100 µs: the runtime wakes on a change or on the deadline.
        for tick in 0..20_000u64 {
            let now = start + Duration::from_micros(tick * 100);
            while pending.peek().is_some_and(|&&c| start + ms(c) <= now) {
                pending.next();
                limiter.mark_dirty();
            }
            if limiter.should_draw(now) {
                limiter.drawn(now);
                drawn.push(tick / 10);
            }
        }
        drawn
    }

    #[test]
    fn the_first_frames_after_start_are_not_held() {
        // First frame, then the session and the pool a millisecond or two later.
        assert_eq!(frames(&[0, 1, 2]), vec![0, 1, 2]);
    }

    #[test]
    fn a_key_after_a_pause_is_drawn_at_once() {
        let drawn = frames(&[0, 1, 2, 3, 500, 501]);
        // The fourth change of the start-up burst waits for the pace (three intervals,
        // paid back); the key press after half a second, and its answer, do not wait.
        assert_eq!(drawn, vec![0, 1, 2, 50, 500, 501]);
    }

    #[test]
    fn a_steady_stream_is_paced() {
        let changes: Vec<u64> = (0..1000).collect();
        let drawn = frames(&changes);
        let first_second = drawn.iter().filter(|&&t| t < 1000).count();
        assert!(first_second <= 60, "{first_second} frames in one second");
        assert!(
            first_second >= 55,
            "only {first_second} frames: streaming looks frozen"
        );
        for pair in drawn.windows(2).skip(BURST as usize + 1) {
            assert!(pair[1] - pair[0] >= 16, "{drawn:?}");
        }
    }

    #[test]
    fn nothing_pending_means_no_timer() {
        let now = Instant::now();
        let mut limiter = FrameLimiter::default();
        assert_eq!(limiter.next_draw_at(now), Some(now));
        limiter.drawn(now);
        assert_eq!(limiter.next_draw_at(now), None);
        limiter.mark_dirty();
        assert_eq!(limiter.next_draw_at(now + ms(1)), Some(now + ms(1)));
    }
}
