//! Text to terms: identifier splitting, light stemming, stop words and verb/noun synonyms.
//! The same function turns tool definitions and queries into terms, so a query word and a
//! name part meet in one form ("Creating" and `createIssue` both give `creat`).
//!
//! The words themselves (stop words, synonyms, the words of each action, vendors' ids) are
//! data, `assets/search/vocabulary.toml` ([`vocabulary`]); the action classes of words and
//! requests are in [`actions`], what a request's parts stand for in [`query`] and
//! [`references`].

mod actions;
mod query;
mod references;
mod vocabulary;

pub use actions::{actions_of, lead_verb, wanted_actions};
pub use query::query_terms;
pub use vocabulary::Actions;
// The tests name the classes one by one; the index only compares sets of them.
#[cfg(test)]
pub use vocabulary::Action;

use std::collections::HashMap;
use std::sync::LazyLock;

use vocabulary::VOCABULARY;

/// Splits `text` into lower-case words: on anything not alphanumeric (`_`, `-`, `.`, `/`,
/// spaces), at camelCase humps (`listIssues` → list, issues), at acronym ends (`HTMLPage` →
/// html, page) and between letters and digits only where a word would be lost otherwise
/// (digits stay attached: `v2`, `oauth2`).
pub fn words(text: &str, mut emit: impl FnMut(&str)) {
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut emit);
            continue;
        }
        if c.is_uppercase() && !word.is_empty() {
            let prev = chars.get(i.wrapping_sub(1)).copied().unwrap_or(' ');
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            // lower→Upper starts a word; in a run of capitals, the last one starts a word
            // when a lower-case letter follows (HTMLPage → HTML | Page).
            // An acronym's plural ("PRs", "URLs") ends in one lower-case `s`: not a word.
            let plural_s = next == 's' && !chars.get(i + 2).is_some_and(|c| c.is_alphanumeric());
            if prev.is_lowercase()
                || prev.is_numeric()
                || (prev.is_uppercase() && next.is_lowercase() && !plural_s)
            {
                flush(&mut word, &mut emit);
            }
        }
        word.extend(c.to_lowercase());
    }
    flush(&mut word, &mut emit);
}

fn flush(word: &mut String, emit: &mut impl FnMut(&str)) {
    if !word.is_empty() {
        emit(word);
        word.clear();
    }
}

/// Words too common in requests and descriptions to say anything about which tool is meant.
pub fn is_stop_word(word: &str) -> bool {
    VOCABULARY.stop_words.contains(word)
}

/// A light suffix stripper (plural, -ing, -ed, final e). Deliberately weaker than Porter:
/// tool vocabularies are short technical words, where aggressive stemming merges words that
/// mean different things (`user`/`use`, `commit`/`committee`).
pub fn stem(word: &str) -> String {
    let mut w = word.to_string();
    let len = w.chars().count();
    if len <= 3 || !w.is_ascii() {
        // Plurals of two-letter abbreviations ("PRs", "MRs", "VMs", "DBs", "IDs").
        if len == 3
            && w.is_ascii()
            && w.ends_with('s')
            && (w == "ids" || !w[..2].contains(['a', 'e', 'i', 'o', 'u']))
        {
            w.truncate(2);
        }
        return w;
    }
    if let Some(base) = w.strip_suffix("ies")
        && len > 4
    {
        w = format!("{base}y");
    } else if w.ends_with("sses")
        || w.ends_with("xes")
        || w.ends_with("ches")
        || w.ends_with("shes")
    {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.truncate(w.len() - 1);
    } else if w.ends_with("ing") && len > 5 {
        w.truncate(w.len() - 3);
        undouble(&mut w);
    } else if w.ends_with("ed") && len > 4 {
        w.truncate(w.len() - 2);
        undouble(&mut w);
    }
    if w.ends_with('e') && w.len() > 4 {
        w.truncate(w.len() - 1);
    }
    w
}

/// `running` → `runn` → `run`; `added` → `add` keeps its double d (a real word ending).
fn undouble(w: &mut String) {
    let b = w.as_bytes();
    let n = b.len();
    if n >= 3 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'd' | b'f') {
        w.truncate(n - 1);
    }
}

/// Terms of a text: words, stop words and single letters dropped, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    push_terms(text, &mut out);
    out
}

pub(super) fn push_terms(text: &str, out: &mut Vec<String>) {
    words(text, |w| {
        // Single letters are noise ("what's" → what, s); single digits are not ("slack-3").
        let letter = w.chars().count() == 1 && w.chars().all(char::is_alphabetic);
        if !letter && !is_stop_word(w) {
            out.push(stem(w));
        }
    });
}

/// Stem → the stems it is related to through the vocabulary's synonym groups (not itself), sorted so that
/// expansion order, and with it the floating-point sums, is the same in every run.
static SYNONYMS: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let mut map: HashMap<String, Vec<String>> = HashMap::new();
    for group in &VOCABULARY.synonym_groups {
        let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
        for a in &stems {
            let related = map.entry(a.clone()).or_default();
            for b in &stems {
                if a != b && !related.contains(b) {
                    related.push(b.clone());
                }
            }
        }
    }
    for related in map.values_mut() {
        related.sort();
    }
    map
});

pub fn synonyms(stem: &str) -> &'static [String] {
    SYNONYMS.get(stem).map(Vec::as_slice).unwrap_or(&[])
}
