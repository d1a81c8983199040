//! The last lines a server wrote to stderr, kept to explain a failure.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

pub const STDERR_TAIL_LINES: usize = 20;
/// A single line longer than this is cut: a server that floods stderr without newlines
/// must not grow memory.
const MAX_LINE_CHARS: usize = 2_000;

#[derive(Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    pub fn push(&self, line: &str) {
        let mut line = crate::sanitize::for_terminal(line.trim_end());
        if line.chars().count() > MAX_LINE_CHARS {
            line = line.chars().take(MAX_LINE_CHARS).collect::<String>() + "…";
        }
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// Reads `stream` line by line until EOF (the process exited or closed stderr).
    pub fn spawn_reader(&self, server: String, stream: impl AsyncRead + Unpin + Send + 'static) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        tracing::debug!(target: "mcp_stderr", server = %server, "{}", line.trim_end());
                        tail.push(&line);
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_last_twenty_sanitized() {
        let tail = StderrTail::default();
        for i in 0..25 {
            tail.push(&format!("line {i}\u{1b}[31m\n"));
        }
        let lines = tail.lines();
        assert_eq!(lines.len(), 20);
        assert_eq!(lines[0], "line 5");
        assert_eq!(lines[19], "line 24");
    }
}
