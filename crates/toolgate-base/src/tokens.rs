//! A token estimate without a tokenizer: what the tool-search budget and the MCP output
//! budget count in. Model tokenizers differ (and Anthropic's is not published), so this is
//! a documented rule of thumb rather than an exact count: about four characters per token
//! for ASCII text (English prose, JSON, code), and one token per character for everything
//! else (CJK characters are about one token each; accented letters and emoji are often
//! more than a quarter of one). It errs on the high side for non-ASCII text, so a budget in
//! estimated tokens is not exceeded in real ones for such text.

/// ASCII characters per token.
pub const ASCII_CHARS_PER_TOKEN: usize = 4;

/// Estimated tokens of `text`: ⌈ASCII characters / 4⌉ + other characters.
pub fn estimate(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(a, o), c| {
        if c.is_ascii() { (a + 1, o) } else { (a, o + 1) }
    });
    ascii.div_ceil(ASCII_CHARS_PER_TOKEN) + other
}

/// The byte length of the longest prefix of `text` whose estimate is at most `budget`
/// tokens (always at a character boundary). `text.len()` when all of it fits.
pub fn prefix_within(text: &str, budget: usize) -> usize {
    let (mut ascii, mut other) = (0usize, 0usize);
    for (at, c) in text.char_indices() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
        if ascii.div_ceil(ASCII_CHARS_PER_TOKEN) + other > budget {
            return at;
        }
    }
    text.len()
}

/// The byte index where the longest suffix of `text` whose estimate is at most `budget`
/// tokens starts (always at a character boundary). 0 when all of it fits.
pub fn suffix_within(text: &str, budget: usize) -> usize {
    let (mut ascii, mut other) = (0usize, 0usize);
    let mut start = text.len();
    for (at, c) in text.char_indices().rev() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
        if ascii.div_ceil(ASCII_CHARS_PER_TOKEN) + other > budget {
            return start;
        }
        start = at;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_ascii_characters_make_a_token_and_others_one_each() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcde"), 2);
        assert_eq!(estimate("日本語"), 3);
        assert_eq!(estimate("ab日"), 2);
    }

    #[test]
    fn the_prefix_fits_the_budget_and_cuts_at_a_character() {
        let text = "abcdefgh日本";
        assert_eq!(prefix_within(text, 2), 8);
        assert_eq!(prefix_within(text, 3), 11);
        assert_eq!(prefix_within(text, 100), text.len());
        assert_eq!(prefix_within(text, 0), 0);
        for budget in 0..6 {
            let cut = prefix_within(text, budget);
            assert!(estimate(&text[..cut]) <= budget);
            let start = suffix_within(text, budget);
            assert!(estimate(&text[start..]) <= budget);
        }
        assert_eq!(suffix_within(text, 2), "abcdefgh".len());
        assert_eq!(suffix_within(text, 100), 0);
    }
}
