//! The words search reads requests with, as data: `assets/search/vocabulary.toml` (stop
//! words, synonym groups, the words of each action class, the words that change a verb's
//! meaning, the kinds of pasted references, vendors' id patterns and known services' links),
//! compiled in and read once into typed tables. The rules that use them stay in code.

use std::collections::HashSet;
use std::sync::LazyLock;

const TEXT: &str = include_str!("../../../../../../assets/search/vocabulary.toml");

/// The vocabulary, read on first use. The asset is compiled in and a test reads it, so a
/// broken one fails the build's tests; should it fail all the same, search ranks without
/// these words rather than not at all, and says so once.
pub(super) static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| match Vocabulary::parse(TEXT) {
        Ok(vocabulary) => vocabulary,
        Err(error) => {
            tracing::warn!("tool search reads requests without its vocabulary: {error}");
            Vocabulary::default()
        }
    });

/// What a tool does, or what a request asks for, in broad classes. Common verbs have a low
/// inverse document frequency (dozens of tools are called `create_…`), so in plain BM25
/// the action barely counts next to a rare object word; but "open a ticket" and "list
/// tickets" want different tools. The index compares these classes separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Action {
    Create = 1,
    Read = 2,
    List = 4,
    Search = 8,
    Update = 16,
    Delete = 32,
    Run = 64,
    Send = 128,
}

impl Action {
    /// Every class, with its key in the vocabulary's `[actions]` table.
    const ALL: [(Action, &'static str); 8] = [
        (Action::Create, "create"),
        (Action::Read, "read"),
        (Action::List, "list"),
        (Action::Search, "search"),
        (Action::Update, "update"),
        (Action::Delete, "delete"),
        (Action::Run, "run"),
        (Action::Send, "send"),
    ];
}

/// A set of [`Action`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Actions(u8);

impl Actions {
    /// The set of `actions`.
    pub const fn of(actions: &[Action]) -> Actions {
        let mut bits = 0;
        let mut i = 0;
        while i < actions.len() {
            bits |= actions[i] as u8;
            i += 1;
        }
        Actions(bits)
    }

    pub fn insert(&mut self, action: Action) {
        self.0 |= action as u8;
    }

    pub fn add(&mut self, other: Actions) {
        self.0 |= other.0;
    }

    pub fn intersects(self, other: Actions) -> bool {
        self.0 & other.0 != 0
    }
}

/// Kind words with their weights (`[["issue", 0.5], ["pull", 0.5]]`).
pub(super) type Kinds = Vec<(String, f32)>;

#[derive(Debug, Default)]
pub(super) struct Vocabulary {
    pub stop_words: HashSet<String>,
    pub requests: Requests,
    /// Per action class, the words that name it.
    pub actions: Vec<(Action, Vec<String>)>,
    pub synonym_groups: Vec<Vec<String>>,
    pub references: References,
    pub slack: SlackIds,
    /// Stripe's id prefixes (`cus`) and what they name.
    pub stripe_prefixes: Vec<(String, Kinds)>,
    pub services: Vec<Service>,
}

/// The `[requests]` table: words that change how the words around them are read.
#[derive(Debug, Default)]
pub(super) struct Requests {
    pub lead_in: Vec<String>,
    pub step_verbs: Vec<String>,
    pub noun_verbs: Vec<String>,
    pub open_as_state: Vec<String>,
    pub set_questions: Vec<String>,
    pub how_to: Vec<String>,
    pub say_subjects: Vec<String>,
    pub local_objects: Vec<String>,
    pub google_products: Vec<String>,
}

/// The `[references]` table: what pasted references stand for.
#[derive(Debug, Default)]
pub(super) struct References {
    pub emoji: Kinds,
    pub clock_time: Kinds,
    pub issue_or_pull: Kinds,
    pub merge_request: Kinds,
    pub file_pattern: Kinds,
}

/// `[vendor_ids.slack]`: a message's time stamp, and an id's first letter.
#[derive(Debug, Default)]
pub(super) struct SlackIds {
    pub message: Kinds,
    pub letters: Vec<(char, Kinds)>,
}

/// One `[[services]]` entry: a known service's links.
#[derive(Debug, Default)]
pub(super) struct Service {
    pub hosts: Vec<String>,
    pub host_suffixes: Vec<String>,
    pub words: Vec<String>,
    pub paths: Vec<PathRule>,
    pub otherwise: Vec<String>,
}

/// A `[[services.paths]]` rule: holds when a segment of the link's path is one of
/// `segments`, or when the path has at most `max_segments` segments.
#[derive(Debug, Default)]
pub(super) struct PathRule {
    pub segments: Vec<String>,
    pub max_segments: Option<usize>,
    pub words: Vec<String>,
}

/// Where the vocabulary's text is not what the tables expect.
#[derive(Debug, thiserror::Error)]
pub(super) enum VocabularyError {
    #[error("not valid TOML: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("`{0}` is missing or not of the expected shape")]
    Shape(String),
}

type Table = toml::Table;

impl Vocabulary {
    fn parse(text: &str) -> Result<Vocabulary, VocabularyError> {
        let root: Table = toml::from_str(text)?;
        let requests = table(&root, "requests")?;
        let actions_table = table(&root, "actions")?;
        let mut actions = Vec::new();
        for (action, key) in Action::ALL {
            actions.push((action, strings(actions_table, key, "actions")?));
        }
        let references = table(&root, "references")?;
        let vendor_ids = table(&root, "vendor_ids")?;
        let slack = table(vendor_ids, "slack")?;
        let mut letters = Vec::new();
        for (letter, value) in table(slack, "letters")? {
            let mut chars = letter.chars();
            let (Some(first), None) = (chars.next(), chars.next()) else {
                return Err(shape("vendor_ids.slack.letters", letter));
            };
            letters.push((first, kinds(value, "vendor_ids.slack.letters")?));
        }
        let mut stripe_prefixes = Vec::new();
        for (prefix, value) in table(vendor_ids, "stripe")? {
            stripe_prefixes.push((prefix.clone(), kinds(value, "vendor_ids.stripe")?));
        }
        Ok(Vocabulary {
            stop_words: strings(&root, "stop_words", "")?.into_iter().collect(),
            requests: Requests {
                lead_in: strings(requests, "lead_in", "requests")?,
                step_verbs: strings(requests, "step_verbs", "requests")?,
                noun_verbs: strings(requests, "noun_verbs", "requests")?,
                open_as_state: strings(requests, "open_as_state", "requests")?,
                set_questions: strings(requests, "set_questions", "requests")?,
                how_to: strings(requests, "how_to", "requests")?,
                say_subjects: strings(requests, "say_subjects", "requests")?,
                local_objects: strings(requests, "local_objects", "requests")?,
                google_products: strings(requests, "google_products", "requests")?,
            },
            actions,
            synonym_groups: array(table(&root, "synonyms")?, "groups", "synonyms")?
                .iter()
                .map(|group| string_list(group, "synonyms.groups"))
                .collect::<Result<_, _>>()?,
            references: References {
                emoji: kinds_at(references, "emoji")?,
                clock_time: kinds_at(references, "clock_time")?,
                issue_or_pull: kinds_at(references, "issue_or_pull")?,
                merge_request: kinds_at(references, "merge_request")?,
                file_pattern: kinds_at(references, "file_pattern")?,
            },
            slack: SlackIds {
                message: kinds(
                    slack
                        .get("message")
                        .ok_or_else(|| shape("vendor_ids.slack", "message"))?,
                    "vendor_ids.slack.message",
                )?,
                letters,
            },
            stripe_prefixes,
            services: array(&root, "services", "")?
                .iter()
                .map(service)
                .collect::<Result<_, _>>()?,
        })
    }
}

fn service(value: &toml::Value) -> Result<Service, VocabularyError> {
    let entry = value.as_table().ok_or_else(|| shape("", "services"))?;
    let optional = |key: &str| match entry.get(key) {
        None => Ok(Vec::new()),
        Some(value) => string_list(value, &format!("services.{key}")),
    };
    let paths = match entry.get("paths") {
        None => Vec::new(),
        Some(value) => value
            .as_array()
            .ok_or_else(|| shape("services", "paths"))?
            .iter()
            .map(path_rule)
            .collect::<Result<_, _>>()?,
    };
    Ok(Service {
        hosts: optional("hosts")?,
        host_suffixes: optional("host_suffixes")?,
        words: strings(entry, "words", "services")?,
        paths,
        otherwise: optional("otherwise")?,
    })
}

fn path_rule(value: &toml::Value) -> Result<PathRule, VocabularyError> {
    let rule = value.as_table().ok_or_else(|| shape("services", "paths"))?;
    let max_segments = match rule.get("max_segments") {
        None => None,
        Some(value) => Some(
            value
                .as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| shape("services.paths", "max_segments"))?,
        ),
    };
    Ok(PathRule {
        segments: match rule.get("segments") {
            None => Vec::new(),
            Some(value) => string_list(value, "services.paths.segments")?,
        },
        max_segments,
        words: strings(rule, "words", "services.paths")?,
    })
}

fn shape(at: &str, key: &str) -> VocabularyError {
    VocabularyError::Shape(if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    })
}

fn table<'t>(parent: &'t Table, key: &str) -> Result<&'t Table, VocabularyError> {
    parent
        .get(key)
        .and_then(toml::Value::as_table)
        .ok_or_else(|| shape("", key))
}

fn array<'t>(
    parent: &'t Table,
    key: &str,
    at: &str,
) -> Result<&'t Vec<toml::Value>, VocabularyError> {
    parent
        .get(key)
        .and_then(toml::Value::as_array)
        .ok_or_else(|| shape(at, key))
}

fn strings(parent: &Table, key: &str, at: &str) -> Result<Vec<String>, VocabularyError> {
    let value = parent.get(key).ok_or_else(|| shape(at, key))?;
    string_list(value, &format!("{at}.{key}"))
}

fn string_list(value: &toml::Value, at: &str) -> Result<Vec<String>, VocabularyError> {
    value
        .as_array()
        .ok_or_else(|| shape("", at))?
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_string)
                .ok_or_else(|| shape("", at))
        })
        .collect()
}

fn kinds_at(parent: &Table, key: &str) -> Result<Kinds, VocabularyError> {
    let value = parent.get(key).ok_or_else(|| shape("references", key))?;
    kinds(value, &format!("references.{key}"))
}

/// `[["issue", 0.5], ["pull", 0.5]]`.
fn kinds(value: &toml::Value, at: &str) -> Result<Kinds, VocabularyError> {
    value
        .as_array()
        .ok_or_else(|| shape("", at))?
        .iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([word, weight]) => match (word.as_str(), weight.as_float()) {
                (Some(word), Some(weight)) => Ok((word.to_string(), weight as f32)),
                _ => Err(shape("", at)),
            },
            _ => Err(shape("", at)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled-in vocabulary reads without falling back to an empty one.
    #[test]
    fn the_asset_reads_into_every_table() {
        let vocabulary = Vocabulary::parse(TEXT).unwrap();
        assert!(vocabulary.stop_words.contains("the"));
        assert!(vocabulary.synonym_groups.len() > 100);
        assert!(
            vocabulary
                .actions
                .iter()
                .all(|(_, words)| !words.is_empty())
        );
        assert_eq!(vocabulary.slack.letters.len(), 4);
        assert!(vocabulary.stripe_prefixes.iter().any(|(p, _)| p == "cus"));
        assert_eq!(vocabulary.services.len(), 8);
        assert_eq!(vocabulary.requests.how_to.len(), 5);
    }

    #[test]
    fn a_wrong_shape_is_named() {
        let error = Vocabulary::parse("stop_words = 3\n").unwrap_err();
        assert!(error.to_string().contains("requests"), "{error}");
        let text = TEXT.replace("clock_time = [[\"time\", 1.0]]", "clock_time = [\"time\"]");
        let error = Vocabulary::parse(&text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`references.clock_time` is missing or not of the expected shape"
        );
    }
}
