//! The pattern of a `Bash(…)` rule and how it meets one command's words, whose words may
//! be made by expansions at run time (`$VAR`, `$(…)`): a rule matches for sure, possibly, or
//! not at all. Apart from the rule grammar (`rule.rs`) because it is the one pattern that
//! reasons over the bash analyzer's words.

use super::bash::Word;

#[derive(Debug, Clone)]
pub enum BashPattern {
    Any,
    /// `git status:*` — the command's words start with these words.
    Prefix(Vec<String>),
    /// `npm run *` — `*` matches any text.
    Glob(regex::Regex),
    Exact(String),
}

/// Why a `Bash(…)` specifier is not a pattern.
#[derive(Debug, thiserror::Error)]
pub enum BashPatternError {
    #[error("empty Bash specifier; use Bash to mean every command")]
    Empty,
    #[error("a ':*' prefix rule cannot contain another '*'")]
    StarInPrefix,
    #[error("bad Bash pattern: {0}")]
    Regex(regex::Error),
}

/// How a pattern meets a command whose words may be made by expansions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordsMatch {
    No,
    /// Some value of the dynamic words would match.
    Possibly,
    /// Every value of the dynamic words matches.
    Yes,
}

impl BashPattern {
    /// The pattern of `Bash(spec)`.
    pub fn parse(inner: &str) -> Result<BashPattern, BashPatternError> {
        let spec = inner.trim();
        if spec.is_empty() {
            return Err(BashPatternError::Empty);
        }
        if spec.chars().all(|c| c == '*' || c.is_whitespace()) || spec == ":*" {
            return Ok(BashPattern::Any);
        }
        if let Some(prefix) = spec.strip_suffix(":*") {
            if prefix.contains('*') {
                return Err(BashPatternError::StarInPrefix);
            }
            return Ok(BashPattern::Prefix(
                prefix.split_whitespace().map(str::to_string).collect(),
            ));
        }
        if spec.contains('*') {
            let source = spec
                .split('*')
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(".*");
            return regex::Regex::new(&format!("^{source}$"))
                .map(BashPattern::Glob)
                .map_err(BashPatternError::Regex);
        }
        Ok(BashPattern::Exact(
            spec.split_whitespace().collect::<Vec<_>>().join(" "),
        ))
    }

    /// Matches a command whose words may be dynamic (made by an expansion at run time,
    /// which may become any text, or several words, or none).
    pub fn match_words(&self, words: &[Word]) -> WordsMatch {
        if words.iter().all(|w| !w.dynamic) {
            let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
            return if self.matches(&texts) {
                WordsMatch::Yes
            } else {
                WordsMatch::No
            };
        }
        match self {
            BashPattern::Any => WordsMatch::Yes,
            BashPattern::Prefix(prefix) => {
                for (i, p) in prefix.iter().enumerate() {
                    match words.get(i) {
                        // A dynamic word may expand to anything, or to several words.
                        Some(w) if w.dynamic => return WordsMatch::Possibly,
                        Some(w) if w.text == *p => {}
                        _ => return WordsMatch::No,
                    }
                }
                WordsMatch::Yes
            }
            BashPattern::Glob(re) => {
                // Yes when a `*` absorbs each dynamic word whatever it holds (tested with
                // a character no literal can match, once short and once long).
                let with = |hole: &str| {
                    words
                        .iter()
                        .map(|w| if w.dynamic { hole } else { w.text.as_str() })
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                if re.is_match(&with("\u{1}"))
                    && re.is_match(&with("\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}"))
                {
                    return WordsMatch::Yes;
                }
                let literal = glob_literal_prefix(re.as_str());
                if compatible(&literal_prefix(words), &literal) {
                    WordsMatch::Possibly
                } else {
                    WordsMatch::No
                }
            }
            BashPattern::Exact(text) => {
                if compatible(&literal_prefix(words), text) {
                    WordsMatch::Possibly
                } else {
                    WordsMatch::No
                }
            }
        }
    }

    /// `words` are one command's words; `Any` matches everything.
    pub fn matches(&self, words: &[String]) -> bool {
        match self {
            BashPattern::Any => true,
            BashPattern::Prefix(prefix) => {
                words.len() >= prefix.len() && words.iter().zip(prefix).all(|(w, p)| w == p)
            }
            BashPattern::Glob(re) => re.is_match(&words.join(" ")),
            BashPattern::Exact(text) => words.join(" ") == *text,
        }
    }
}

/// The text of `words` up to the first dynamic one (what every run of it starts with).
fn literal_prefix(words: &[Word]) -> String {
    let mut out = String::new();
    for w in words {
        if w.dynamic {
            break;
        }
        out.push_str(&w.text);
        out.push(' ');
    }
    out
}

/// The literal start of a Bash glob rule's regex (`^npm run .*$` gives `npm run `).
fn glob_literal_prefix(regex: &str) -> String {
    let body = regex.strip_prefix('^').unwrap_or(regex);
    let literal = body.split(".*").next().unwrap_or("");
    let literal = literal.strip_suffix('$').unwrap_or(literal);
    let mut out = String::new();
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a text starting with `a` could also start with (or be) `b`.
fn compatible(a: &str, b: &str) -> bool {
    a.starts_with(b) || b.starts_with(a)
}
