//! Text from models, tools and servers is untrusted: it must never be able to move the
//! cursor, change colours or retitle the terminal. Everything that reaches the screen
//! passes through [`for_terminal`].

/// Removes ANSI/VT escape sequences and control characters, keeping `\n` and `\t`
/// (tabs become four spaces so width computations stay exact).
pub fn for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 control introducers (CSI, OSC, DCS …) act like ESC sequences on many terminals.
            '\u{9b}' => skip_csi_body(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{9e}' | '\u{9f}' => skip_string_body(&mut chars),
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\r' => {}
            c if c.is_control() => {}
            // Bidirectional overrides can make displayed text differ from what runs.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi_body(chars);
        }
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
            chars.next();
            skip_string_body(chars);
        }
        Some(c) if ('\u{20}'..='\u{2f}').contains(&c) => {
            // nF sequences: intermediates then one final byte.
            while let Some(&c) = chars.peek() {
                chars.next();
                if !('\u{20}'..='\u{2f}').contains(&c) {
                    break;
                }
            }
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

fn skip_csi_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

/// OSC/DCS/… run until BEL or ST (`ESC \`).
fn skip_string_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_terminal;

    #[test]
    fn strips_csi_osc_and_controls() {
        assert_eq!(for_terminal("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(for_terminal("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(for_terminal("x\u{1b}]8;;http://e\u{1b}\\link"), "xlink");
        assert_eq!(for_terminal("bell\u{7} back\u{8}"), "bell back");
        assert_eq!(for_terminal("line1\r\nline2\tz"), "line1\nline2    z");
        assert_eq!(for_terminal("\u{9b}2Jok"), "ok");
        assert_eq!(for_terminal("safe\u{202e}txt"), "safetxt");
    }

    #[test]
    fn keeps_unicode() {
        assert_eq!(for_terminal("héllo → 世界"), "héllo → 世界");
    }
}
