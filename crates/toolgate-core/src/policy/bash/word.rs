//! Text of words: quote removal, ANSI-C strings, `env -S` strings, backticks the grammar
//! leaves inside plain words. Pure string work; the syntax tree walk is in `syntax.rs`.

/// An unquoted word's value: backslashes removed. `None` when bash would change it at run
/// time (a glob, a brace expansion), since then the value is not what is written.
pub fn unquoted(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut brace_open = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n) => out.push(n),
                None => out.push('\\'),
            },
            '*' | '?' | '[' => return None,
            // `@(…)`, `!(…)`, `+(…)` with extglob.
            '@' | '!' | '+' if chars.peek() == Some(&'(') => return None,
            '{' => {
                brace_open = true;
                out.push(c);
            }
            ',' if brace_open => return None,
            '.' if brace_open && chars.peek() == Some(&'.') => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

/// The value of the literal part of a double-quoted string (`string_content`): a backslash
/// escapes only `$`, `` ` ``, `"`, `\` and the newline.
pub fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek().copied() {
                Some('\n') => {
                    chars.next();
                }
                Some(n @ ('$' | '`' | '"' | '\\')) => {
                    chars.next();
                    out.push(n);
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `$'…'` (the whole node's text), or None for an escape we do not decode.
pub fn ansi_c(text: &str) -> Option<String> {
    let inner = text.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut value = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value & 0xff)?);
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut n = 0;
                while n < max {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.checked_mul(16)?.checked_add(d)?;
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return None;
                }
                out.push(char::from_u32(value)?);
            }
            // `\cX` (control characters) and anything else: not decoded, so unknown.
            _ => return None,
        }
    }
    Some(out)
}

/// The commands inside backticks in `text` (a word the grammar did not split, such as the
/// word of `${x:-`cmd`}` or a here-document's text); an unmatched backtick is an error.
pub fn backtick_bodies(text: &str) -> Result<Vec<String>, ()> {
    let mut bodies = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '`' => {
                let mut body = String::new();
                loop {
                    match chars.next() {
                        Some('`') => break,
                        Some('\\') => match chars.next() {
                            Some(n @ ('`' | '\\' | '$')) => body.push(n),
                            Some(n) => {
                                body.push('\\');
                                body.push(n);
                            }
                            None => return Err(()),
                        },
                        Some(ch) => body.push(ch),
                        None => return Err(()),
                    }
                }
                bodies.push(body);
            }
            _ => {}
        }
    }
    Ok(bodies)
}

/// Splits the string of `env -S`/`--split-string` into words as env does (quotes and
/// backslash escapes); None where env would expand something (`${VAR}`, `\c`) or the
/// quoting is unbalanced, since then the words are not known.
pub fn env_split(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut has_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' => {
                if has_word {
                    words.push(std::mem::take(&mut cur));
                    has_word = false;
                }
            }
            '#' if !has_word => break,
            '\'' => {
                has_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        '\\' if matches!(chars.peek(), Some('\'' | '\\')) => {
                            cur.push(chars.next()?);
                        }
                        ch => cur.push(ch),
                    }
                }
            }
            '"' => {
                has_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(env_escape(chars.next()?)?),
                        '$' => return None,
                        ch => cur.push(ch),
                    }
                }
            }
            '\\' => {
                let e = chars.next()?;
                if e == '_' {
                    // `\_` outside quotes separates words.
                    if has_word {
                        words.push(std::mem::take(&mut cur));
                        has_word = false;
                    }
                    continue;
                }
                has_word = true;
                cur.push(env_escape(e)?);
            }
            '$' => return None,
            ch => {
                has_word = true;
                cur.push(ch);
            }
        }
    }
    if has_word {
        words.push(cur);
    }
    Some(words)
}

fn env_escape(e: char) -> Option<char> {
    Some(match e {
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\x0b',
        '_' => ' ',
        '#' | '$' | '\\' | '"' | '\'' | ' ' => e,
        _ => return None,
    })
}

/// True for a shell variable name.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_decodes_the_escapes_bash_knows() {
        assert_eq!(ansi_c(r"$'\x72m'").as_deref(), Some("rm"));
        assert_eq!(ansi_c(r"$'\162\155'").as_deref(), Some("rm"));
        assert_eq!(ansi_c(r"$'\u0072m'").as_deref(), Some("rm"));
        assert_eq!(ansi_c(r"$'a\nb'").as_deref(), Some("a\nb"));
        assert_eq!(ansi_c(r"$'\cA'"), None);
    }

    #[test]
    fn env_split_follows_env() {
        assert_eq!(
            env_split("rm v1.txt"),
            Some(vec!["rm".into(), "v1.txt".into()])
        );
        assert_eq!(env_split("'touch f'"), Some(vec!["touch f".into()]));
        assert_eq!(env_split("a\\_b"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(env_split("x ${HOME}"), None);
        assert_eq!(env_split("'x"), None);
    }

    #[test]
    fn unquoted_words() {
        assert_eq!(unquoted("\\rm").as_deref(), Some("rm"));
        assert_eq!(unquoted("r*"), None);
        assert_eq!(unquoted("{rm,x}"), None);
        assert_eq!(unquoted("{}").as_deref(), Some("{}"));
        assert_eq!(unquoted("a=b").as_deref(), Some("a=b"));
    }
}
