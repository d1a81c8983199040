//! The action classes of words and requests (create, read, list, search, update, delete,
//! run, send): which a word names, which a request asks for, and the verb it starts with.
//! The words of each class are the vocabulary's; what their neighbours change is here.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::vocabulary::{Action, Actions, VOCABULARY};
use super::{is_stop_word, stem, words};

/// The actions a word (already stemmed) names. Some words name two ("open" a ticket or a
/// file, "show" one thing or all of them).
pub fn actions_of(stem_: &str) -> Actions {
    static STEMMED: LazyLock<HashMap<String, Actions>> = LazyLock::new(|| {
        let mut stemmed: HashMap<String, Actions> = HashMap::new();
        for (action, words) in &VOCABULARY.actions {
            for word in words {
                stemmed.entry(stem(word)).or_default().insert(*action);
            }
        }
        stemmed
    });
    STEMMED.get(stem_).copied().unwrap_or_default()
}

/// The stems of the verbs that begin a step of a task but name no action class.
static STEP_VERB_STEMS: LazyLock<Vec<String>> = LazyLock::new(|| {
    VOCABULARY
        .requests
        .step_verbs
        .iter()
        .map(|v| stem(v))
        .collect()
});

/// The verb a request or a step of one starts with (stemmed), after words that only lead up
/// to one ("please", "also", "I"): what people put first is what they want done.
pub fn lead_verb(text: &str) -> Option<String> {
    let lead_in = &VOCABULARY.requests.lead_in;
    let first = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .find(|w| !w.is_empty() && !lead_in.contains(w))?;
    let stemmed = stem(&first);
    let verb = actions_of(&stemmed) != Actions::default() || STEP_VERB_STEMS.contains(&stemmed);
    verb.then_some(stemmed)
}

/// Whether a noun that people also use as the verb of a request ("file an issue", "log a
/// bug", "note that …") is one here: followed by an article or "that", it is a verb of
/// creating and names no object.
pub(super) fn is_verb_use(word: &str, next: Option<&str>) -> bool {
    VOCABULARY.requests.noun_verbs.iter().any(|n| n == word)
        && matches!(next, Some("a" | "an" | "that" | "new"))
}

/// The actions a request asks for. Mostly the actions of its words ([`actions_of`]), with
/// three readings that depend on the neighbouring word, because the same word names
/// different actions: "open a ticket" creates, "open the file" reads, "the open bugs" are
/// a state (and, being plural, a list); "file an issue" creates; a plural object after a
/// reading verb ("show me the failing builds") lists.
pub fn wanted_actions(query: &str) -> Actions {
    let requests = &VOCABULARY.requests;
    let mut lower = Vec::new();
    words(query, |w| lower.push(w.to_string()));
    let mut wanted = Actions::default();
    let mut reading = false;
    for (at, word) in lower.iter().enumerate() {
        let next = lower.get(at + 1).map(String::as_str);
        let prev = at.checked_sub(1).map(|p| lower[p].as_str());
        let stemmed = stem(word);
        if is_verb_use(word, next) {
            wanted.insert(Action::Create);
            continue;
        }
        if stemmed == "pull" && next == Some("up") {
            wanted.insert(Action::Read);
            continue;
        }
        if stemmed == "open" {
            // "open bugs", "open p1 bugs": a state of the things listed.
            let plural_next = next.is_some_and(is_plural)
                || (!matches!(next, Some("a" | "an" | "new" | "the"))
                    && lower.get(at + 2).is_some_and(|w| is_plural(w)));
            if matches!(next, Some("a" | "an" | "new")) {
                wanted.insert(Action::Create);
            } else if prev.is_some_and(|p| requests.open_as_state.iter().any(|w| w == p))
                || plural_next
            {
                if plural_next {
                    wanted.insert(Action::List);
                }
            } else {
                wanted.insert(Action::Read);
            }
            continue;
        }
        // "PRs sarah opened", "bugs created this week": a past participle describes the
        // object, it asks for nothing.
        if word.len() > 4 && word.ends_with("ed") && at > 0 {
            continue;
        }
        let actions = actions_of(&stemmed);
        // "which MRs are waiting", "what gitlab projects can I see", "any open PRs": a
        // plural object asked about as a set.
        let asked_as_set = (1..=3).any(|back| {
            at.checked_sub(back)
                .is_some_and(|p| requests.set_questions.contains(&lower[p].to_lowercase()))
        });
        if actions.intersects(Actions::of(&[Action::Read])) {
            reading = true;
        } else if (reading || asked_as_set)
            && is_plural(word)
            && !is_stop_word(word)
            && actions == Actions::default()
        {
            wanted.insert(Action::List);
        }
        wanted.add(actions);
    }
    wanted
}

/// A plural noun by its ending ("bugs", "issues", "branches"), not "status" or "this".
fn is_plural(word: &str) -> bool {
    word.len() >= 3
        && word.is_ascii()
        && stem(word) != word
        && word.ends_with('s')
        && !is_stop_word(word)
}
