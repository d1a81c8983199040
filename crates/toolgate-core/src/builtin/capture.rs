//! Bounded capture of a command's output: the first and the last half of the character
//! budget are kept, everything between is counted and replaced by a visible marker. Memory
//! stays bounded however much a command prints (`yes` runs until the timeout).

use std::collections::VecDeque;

/// Counts characters without decoding: every byte that is not a UTF-8 continuation byte
/// starts a character (invalid bytes are counted one each, as lossy decoding shows them).
fn starts_char(byte: u8) -> bool {
    byte & 0xC0 != 0x80
}

pub struct HeadTailCapture {
    head_chars_max: usize,
    tail_chars_max: usize,
    head: Vec<u8>,
    head_chars: usize,
    head_closed: bool,
    /// The most recent bytes after the head; at most 4 bytes per kept character.
    tail: VecDeque<u8>,
    total_chars: usize,
}

impl HeadTailCapture {
    pub fn new(limit_chars: usize) -> Self {
        let head_chars_max = limit_chars / 2;
        HeadTailCapture {
            head_chars_max,
            tail_chars_max: limit_chars - head_chars_max,
            head: Vec::new(),
            head_chars: 0,
            head_closed: false,
            tail: VecDeque::new(),
            total_chars: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            let start = starts_char(byte);
            if start {
                self.total_chars += 1;
            }
            if !self.head_closed {
                if !start || self.head_chars < self.head_chars_max {
                    self.head.push(byte);
                    if start {
                        self.head_chars += 1;
                    }
                    continue;
                }
                self.head_closed = true;
            }
            self.tail.push_back(byte);
            if self.tail.len() > self.tail_chars_max * 4 {
                self.tail.pop_front();
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// The captured text, with `[output truncated: N characters omitted]` between head and
    /// tail when anything was left out.
    pub fn finish(self) -> String {
        let limit = self.head_chars_max + self.tail_chars_max;
        let mut head = String::from_utf8_lossy(&self.head).into_owned();
        let (front, back) = self.tail.as_slices();
        let mut tail_bytes = Vec::with_capacity(self.tail.len());
        tail_bytes.extend_from_slice(front);
        tail_bytes.extend_from_slice(back);
        if self.total_chars <= limit {
            // Nothing was dropped: head and tail are contiguous.
            head.push_str(&String::from_utf8_lossy(&tail_bytes));
            return head;
        }
        // The ring may have cut a character in two at its front; skip the orphaned bytes.
        let first_start = tail_bytes
            .iter()
            .position(|&b| starts_char(b))
            .unwrap_or(tail_bytes.len());
        let tail_text = String::from_utf8_lossy(&tail_bytes[first_start..]);
        let tail_len = tail_text.chars().count();
        let skip = tail_len.saturating_sub(self.tail_chars_max);
        let tail: String = tail_text.chars().skip(skip).collect();
        let kept = self.head_chars + (tail_len - skip);
        let omitted = self.total_chars.saturating_sub(kept);
        let mut out = head;
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[output truncated: {omitted} characters omitted]\n"
        ));
        out.push_str(&tail);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(limit: usize, chunks: &[&[u8]]) -> String {
        let mut c = HeadTailCapture::new(limit);
        for chunk in chunks {
            c.push(chunk);
        }
        c.finish()
    }

    #[test]
    fn short_output_is_kept_whole() {
        assert_eq!(capture(11, &[b"hello", b" wor", b"ld"]), "hello world");
        assert_eq!(capture(10, &[b"0123456789"]), "0123456789");
        assert_eq!(capture(10, &[]), "");
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_marker() {
        let out = capture(10, &[b"abcdefghij", b"klmnopqrst"]);
        assert_eq!(
            out,
            "abcde\n[output truncated: 10 characters omitted]\npqrst"
        );
    }

    #[test]
    fn counts_characters_not_bytes() {
        // 12 three-byte characters, limit 6: 3 kept at each end, 6 omitted.
        let text = "€".repeat(12);
        let bytes = text.as_bytes();
        // Split mid-character on purpose.
        let out = capture(6, &[&bytes[..7], &bytes[7..]]);
        assert_eq!(out, "€€€\n[output truncated: 6 characters omitted]\n€€€");
    }

    #[test]
    fn huge_output_stays_bounded() {
        let mut c = HeadTailCapture::new(100);
        let chunk = [b'x'; 4096];
        for _ in 0..1000 {
            c.push(&chunk);
        }
        assert!(c.tail.len() <= 200);
        let out = c.finish();
        assert!(out.contains(&format!(
            "[output truncated: {} characters omitted]",
            4096 * 1000 - 100
        )));
    }
}
