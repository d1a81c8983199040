//! What one search asks for: one or more parts, each a task of its own. A request such as
//! "find the failing job and open an issue about it" needs two tools; ranked as one text, the
//! words of both tasks compete for the same five places and one task usually takes them all.
//! Split at its connecting words, each part is ranked alone and the rankings are merged
//! ([`super::merge`]), so each part keeps its best matches near the top.
//!
//! Splitting is deliberately cautious: a piece becomes a part only when it could be a request
//! by itself (enough words that say what to do), so "search and replace in a file" or "issues
//! and pull requests" stay whole. A wrong split costs little, because the whole request is
//! ranked as well and leads the merge.

use super::text;

/// Most parts one request is split into; more would leave each part one place or none.
pub const MAX_PARTS: usize = 4;

/// The least number of content terms (words that are not stop words) a piece needs to stand
/// as a part of its own after a weak connector (`and`, a comma).
const MIN_PART_TERMS: usize = 2;

/// A search request: the text as given and the parts it was split into (one part when it
/// reads as one task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    whole: String,
    parts: Vec<String>,
    /// Whether the host made the parts (from one query) rather than the model (one query
    /// per part): only then may a split be wrong, so only then does the whole text lead.
    split_by_host: bool,
}

impl SearchRequest {
    /// One query, split by the host at its connecting words when it reads as several tasks.
    pub fn query(query: &str) -> Self {
        let whole = query.trim().to_string();
        let parts = split(&whole);
        SearchRequest {
            split_by_host: parts.len() > 1,
            whole,
            parts,
        }
    }

    /// Several queries, one per part of the task (what the model was told to send for a task
    /// with several steps). Each is split further when it still reads as several tasks;
    /// repeated parts count once.
    pub fn queries<'a>(queries: impl IntoIterator<Item = &'a str>) -> Self {
        let given: Vec<String> = queries
            .into_iter()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(str::to_string)
            .collect();
        let mut parts: Vec<String> = Vec::new();
        for query in &given {
            for part in split(query) {
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
        }
        parts.truncate(MAX_PARTS);
        let whole = given.join("; ");
        SearchRequest {
            split_by_host: given.len() == 1 && parts.len() > 1,
            whole,
            parts,
        }
    }

    /// The request as one text (the queries joined), as results quote it.
    pub fn whole(&self) -> &str {
        &self.whole
    }

    /// The parts, in the order given; one when the request is a single task.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// Whether the whole text is ranked too, ahead of the parts: when the host split it.
    pub fn whole_leads(&self) -> bool {
        self.split_by_host
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

/// How sure a connector is to join two tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    /// `;`, "then", "after that", "also": the text says a next step follows.
    Strong,
    /// "and": as often joins two objects ("issues and pull requests") as two tasks.
    Weak,
}

/// Connecting words, longest first so that "and then" is one connector, not "and" + "then".
/// Matched on whole words, lower-cased.
const CONNECTORS: &[(&[&str], Strength)] = &[
    (&["and", "after", "that"], Strength::Strong),
    (&["and", "then"], Strength::Strong),
    (&["and", "also"], Strength::Strong),
    (&["after", "that"], Strength::Strong),
    (&["as", "well", "as"], Strength::Weak),
    (&["then"], Strength::Strong),
    (&["afterwards"], Strength::Strong),
    (&["also"], Strength::Strong),
    (&["and"], Strength::Weak),
    (&["plus"], Strength::Weak),
    (&["before"], Strength::Weak),
];

/// Splits `query` into the tasks it names; the whole query when it names one.
fn split(query: &str) -> Vec<String> {
    let tokens = tokens(query);
    let mut parts: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut pending: Option<Strength> = None;
    let mut i = 0;
    while i < tokens.len() {
        let (strength, len) = match tokens[i] {
            Token::Stop => (Strength::Strong, 1),
            // A comma alone joins a request to its reason or its context more often than to a
            // second task ("why did the job fail, show me its logs"); before "then" or "and"
            // it is part of that connector.
            Token::Comma => {
                i += 1;
                continue;
            }
            Token::Word(word) => match connector_at(&tokens, i) {
                Some(connector) => connector,
                None => {
                    if let Some(strength) = pending.take()
                        && !current.is_empty()
                    {
                        close(&mut parts, &mut current, strength, &tokens[i..]);
                    }
                    current.push(word);
                    i += 1;
                    continue;
                }
            },
        };
        pending = Some(match pending {
            Some(Strength::Strong) => Strength::Strong,
            _ => strength,
        });
        i += len;
    }
    if !current.is_empty() {
        parts.push(current.join(" "));
    }
    if parts.len() <= 1 || parts.len() > MAX_PARTS {
        return vec![query.trim().to_string()];
    }
    parts
}

/// Ends the part in `current` at a connector of `strength` when both it and what follows can
/// stand alone; otherwise the connector stays inside the part.
fn close<'a>(
    parts: &mut Vec<String>,
    current: &mut Vec<&'a str>,
    strength: Strength,
    rest: &[Token<'a>],
) {
    let text = current.join(" ");
    let next: Vec<&str> = rest
        .iter()
        .take_while(|t| matches!(t, Token::Word(_)))
        .filter_map(|t| match t {
            Token::Word(w) => Some(*w),
            _ => None,
        })
        .collect();
    let split_here = match strength {
        Strength::Strong => content_terms(&text) >= 1 && content_terms(&next.join(" ")) >= 1,
        // A verb and what it acts on is a step even when the object is a pronoun ("… and
        // read them", "… and commit it").
        Strength::Weak => {
            stands_alone(&text) && content_terms(&next.join(" ")) >= 1 && starts_with_verb(&next)
        }
    };
    if split_here {
        parts.push(text);
        current.clear();
    } else {
        // Keep the words together; the connector itself says nothing for ranking.
    }
}

/// Whether a piece begins with a verb ("open an issue", "and post it to slack"), after words
/// that only lead up to one ("please", "also", "I'll"). After "and", that is what tells a
/// second task ("… and open an issue about it") from a second object or a clause about the
/// first ("issues and pull requests", "the build broke and I don't know why").
fn starts_with_verb(words: &[&str]) -> bool {
    text::lead_verb(&words.join(" ")).is_some()
}

/// Whether a piece of a request can be a request by itself.
fn stands_alone(text: &str) -> bool {
    content_terms(text) >= MIN_PART_TERMS
}

fn content_terms(text: &str) -> usize {
    text::terms(text).len()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Word(&'a str),
    /// `,` or `:` after a word: no boundary by itself (see [`split`]), but it ends the words
    /// a connector is judged by.
    Comma,
    /// `;`, or a sentence's end (`.`, `?`, `!` before a space).
    Stop,
}

/// Words and the punctuation between them. Punctuation inside a word (`example.com`,
/// `src/app.toml`, `PROJ-12`) stays in the word.
fn tokens(query: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    for raw in query.split_whitespace() {
        let word = raw.trim_end_matches([',', ';', '.', '?', '!', ':']);
        if !word.is_empty() {
            out.push(Token::Word(word));
        }
        let tail = &raw[word.len()..];
        if tail.contains([';', '.', '?', '!']) {
            out.push(Token::Stop);
        } else if tail.contains([',', ':']) {
            out.push(Token::Comma);
        }
    }
    out
}

/// The connector starting at `tokens[i]`, with its strength and length in tokens.
fn connector_at(tokens: &[Token<'_>], i: usize) -> Option<(Strength, usize)> {
    CONNECTORS.iter().find_map(|(words, strength)| {
        let matches = words.iter().enumerate().all(
            |(k, w)| matches!(tokens.get(i + k), Some(Token::Word(t)) if t.eq_ignore_ascii_case(w)),
        );
        matches.then_some((*strength, words.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(q: &str) -> Vec<String> {
        SearchRequest::query(q).parts().to_vec()
    }

    #[test]
    fn two_tasks_joined_by_and_are_two_parts() {
        assert_eq!(
            parts("find the failing build job and open an issue about it"),
            ["find the failing build job", "open an issue about it"]
        );
    }

    #[test]
    fn a_verb_and_a_pronoun_after_and_are_a_step() {
        assert_eq!(
            parts("find all the .proto files under ./api and read them"),
            ["find all the .proto files under ./api", "read them"]
        );
        assert_eq!(
            parts("make a folder called reports and write summary.txt inside it"),
            [
                "make a folder called reports",
                "write summary.txt inside it"
            ],
            "verbs beyond the ranking's action classes start a step too"
        );
        assert_eq!(
            parts("unstage everything i added before diffing main"),
            ["unstage everything i added", "diffing main"]
        );
    }

    #[test]
    fn then_and_semicolons_split_even_short_parts() {
        assert_eq!(
            parts("merge PR 4, then notify slack"),
            ["merge PR 4", "notify slack"]
        );
        assert_eq!(parts("stage files; commit"), ["stage files", "commit"]);
    }

    #[test]
    fn objects_joined_by_and_stay_one_task() {
        assert_eq!(
            parts("search and replace in a file"),
            ["search and replace in a file"]
        );
        assert_eq!(
            parts("list issues and bugs"),
            ["list issues and bugs"],
            "\"bugs\" alone is no request"
        );
    }

    #[test]
    fn a_comma_alone_keeps_a_request_and_its_context_together() {
        assert_eq!(
            parts("why did the CI job fail, show me its logs"),
            ["why did the CI job fail, show me its logs"]
        );
        assert_eq!(
            parts("the nightly build broke and I have no idea why"),
            ["the nightly build broke and I have no idea why"],
            "no verb after \"and\""
        );
    }

    #[test]
    fn punctuation_inside_words_is_not_a_boundary() {
        assert_eq!(
            parts("fetch example.com/a.html"),
            ["fetch example.com/a.html"]
        );
    }

    #[test]
    fn queries_are_parts_and_repeats_count_once() {
        let request = SearchRequest::queries(["list issues", " list issues ", "post to slack"]);
        assert_eq!(request.parts(), ["list issues", "post to slack"]);
        assert_eq!(request.whole(), "list issues; list issues; post to slack");
        assert!(SearchRequest::queries([" "]).is_empty());
    }

    #[test]
    fn too_many_pieces_stay_whole() {
        let q = "read a file, then edit it, then stage it, then commit it, then push it";
        assert_eq!(parts(q), [q]);
    }
}
