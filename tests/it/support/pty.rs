//! The screen of a console running in a real pty, shared by the end-to-end tests.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a test waits for the screen to show something.
pub const WAIT: Duration = Duration::from_secs(30);

/// The screen as a user sees it, fed by a thread that drains the pty the whole time
/// (a full pty would block the child's writes).
pub struct Screen {
    pub parser: Arc<Mutex<vt100::Parser>>,
}

impl Screen {
    pub fn text(&self) -> String {
        self.parser.lock().expect("parser lock").screen().contents()
    }

    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = self.text();
            if pred(&text) {
                return;
            }
            if Instant::now() > deadline {
                panic!("timed out after {WAIT:?} waiting for {what}; screen:\n{text}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_text(&self, needle: &str) {
        self.wait_for(&format!("{needle:?}"), |t| t.contains(needle));
    }
}
