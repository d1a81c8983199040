//! The tokens worth tracking in a string (decision 0096): URLs and hosts, e-mail
//! addresses, account numbers (IBAN shape, compact or in groups of four) and digit runs
//! of 8 or more, each normalised for case and punctuation so `HTTPS://Example.com/x/` and
//! `example.com/x` are one token. Names and short ids have no shape to track; only these do.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A tracked token: its kind and its normalised text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Token {
    pub kind: TokenKind,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    Account,
    Digits,
    Email,
    Url,
}

impl TokenKind {
    /// How a question names the kind ("account US133…").
    pub fn word(self) -> &'static str {
        match self {
            TokenKind::Account => "account",
            TokenKind::Digits => "number",
            TokenKind::Email => "e-mail address",
            TokenKind::Url => "address",
        }
    }
}

/// File names look like hosts (`bill-2023.txt`): these endings are files, not top-level
/// domains.
const FILE_ENDINGS: &[&str] = &[
    "txt", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "csv", "json", "md", "py", "rs",
    "png", "jpg", "jpeg", "gif", "zip", "tar", "gz", "html", "htm", "xml", "yaml", "yml", "log",
    "js", "ts", "sh", "toml", "ics", "eml",
];

static EMAIL: LazyLock<Option<Regex>> =
    LazyLock::new(|| super::compiled(r"(?i)[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"));
static URL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    super::compiled(
        r#"(?i)(?:https?://)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24}(?::\d+)?(?:/[^\s'"<>)\]]*)?"#,
    )
});
static ACCOUNT: LazyLock<Option<Regex>> =
    LazyLock::new(|| super::compiled(r"(?i)\b[a-z]{2}\d{2}[a-z0-9]{10,30}\b"));
/// An account printed in groups of four, as banks print one (`LT60 3250 0447 1928 3345`):
/// the same account as the compact form, so it is compared without the spaces.
static GROUPED_ACCOUNT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    super::compiled(r"(?i)\b[a-z]{2}\d{2}(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,3})?\b")
});
static DIGITS: LazyLock<Option<Regex>> = LazyLock::new(|| super::compiled(r"\d{8,}"));

/// A URL as compared: lower case, no scheme, no trailing slash or sentence punctuation.
pub fn normalise_url(value: &str) -> String {
    let value = value
        .trim()
        .to_lowercase()
        .trim_end_matches(['.', ',', ';', ':', '!', '?'])
        .to_string();
    let value = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))
        .unwrap_or(&value);
    value.trim_end_matches('/').to_string()
}

/// The tracked tokens in `text`.
pub fn tokens_in(text: &str) -> BTreeSet<Token> {
    let mut found = BTreeSet::new();
    let mut add = |kind, value: String| {
        found.insert(Token { kind, value });
    };
    for m in EMAIL.iter().flat_map(|r| r.find_iter(text)) {
        add(TokenKind::Email, m.as_str().to_lowercase());
    }
    // An address's domain is not a host of its own: mask the addresses first.
    let masked = match EMAIL.as_ref() {
        Some(email) => email.replace_all(text, " "),
        None => std::borrow::Cow::Borrowed(text),
    };
    for m in URL.iter().flat_map(|r| r.find_iter(&masked)) {
        let url = normalise_url(m.as_str());
        let host = url.split('/').next().unwrap_or("");
        let host = host.split(':').next().unwrap_or("");
        let ending = host.rsplit('.').next().unwrap_or("");
        if FILE_ENDINGS.contains(&ending) {
            continue;
        }
        if url.contains('/') {
            add(TokenKind::Url, host.to_string());
        }
        add(TokenKind::Url, url);
    }
    let grouped = GROUPED_ACCOUNT
        .iter()
        .flat_map(|r| r.find_iter(text))
        .map(|m| m.as_str().replace(' ', ""));
    let compact = ACCOUNT
        .iter()
        .flat_map(|r| r.find_iter(text))
        .map(|m| m.as_str().to_string());
    for account in compact.chain(grouped) {
        // Letters, two digits, then at least one more digit: not a word like "ab12cdefghijkl".
        if account[4..].bytes().any(|b| b.is_ascii_digit()) {
            add(TokenKind::Account, account.to_uppercase());
        }
    }
    for m in DIGITS.iter().flat_map(|r| r.find_iter(text)) {
        // A run that is part of a decimal number (`12345678.5`) is an amount, not an id.
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        if before == Some('.') || after == Some('.') {
            continue;
        }
        add(TokenKind::Digits, m.as_str().to_string());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<String> {
        tokens_in(text)
            .into_iter()
            .map(|t| format!("{}:{}", t.kind.word(), t.value))
            .collect()
    }

    #[test]
    fn urls_hosts_emails_accounts_and_long_numbers_are_tracked() {
        assert_eq!(
            shown("Visit HTTPS://www.Secure-Systems-252.com/login/ now."),
            [
                "address:www.secure-systems-252.com",
                "address:www.secure-systems-252.com/login"
            ]
        );
        assert_eq!(
            shown("mail Fred@Example.org and pay us133000000121212121212"),
            [
                "account:US133000000121212121212",
                "number:133000000121212121212",
                "e-mail address:fred@example.org"
            ]
        );
        assert_eq!(
            shown("order 123456789 for 1234567.50"),
            ["number:123456789"]
        );
        // Printed in groups, the same account as written compact.
        assert_eq!(
            shown("settle to IBAN LT60 3250 0447 1928 3345 (billing)"),
            ["account:LT603250044719283345"]
        );
        assert_eq!(
            tokens_in("pay GB29 NWBK 6016 1331 9268 19 today"),
            tokens_in("pay GB29NWBK60161331926819 today")
                .into_iter()
                .filter(|t| t.kind == TokenKind::Account)
                .collect()
        );
    }

    #[test]
    fn the_patterns_compile() {
        assert!(EMAIL.is_some() && URL.is_some() && ACCOUNT.is_some() && DIGITS.is_some());
        assert!(GROUPED_ACCOUNT.is_some());
    }

    #[test]
    fn file_names_amounts_and_plain_words_are_not_tokens() {
        assert!(shown("read bill-december-2023.txt and landlord-notices.txt").is_empty());
        assert!(shown("pay 98.70 on 2022-03-07 to Spotify").is_empty());
        assert!(shown("abcdefghijklmnop").is_empty());
        assert!(shown("meet at ab12 this room next week").is_empty());
    }
}
