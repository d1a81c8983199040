//! Ranking MCP tool definitions for a natural-language query (what `search_tools` answers
//! with when the pool's tools are deferred). Pure and deterministic: the same listings and
//! the same query give the same hits in the same order, on every run and every machine.
//!
//! The method is BM25F: a tool is a document with fields (name words, server name,
//! description, parameter names, parameter descriptions), each with a weight and its own
//! length normalisation, combined into one saturated term frequency per term. On top:
//! exact names first, light stemming, stop words, query-side synonyms at a discount, kin
//! words for a query word the index lacks (another form of it, or it with one typo), and a
//! multiplier for the tools of a server the request names.
//! Beside the words, meaning ([`semantic`], a static embedding model compiled in): the
//! similarity of the request to each tool is added to the word score (scaled so that the best
//! word match has 1), and each query word also matches the indexed words closest to it in
//! meaning ("remember" → memory, "big" → size), at a discount.
//! Everything that depends only on the listings (terms, weights, inverse document
//! frequencies, posting lists) is worked out in [`ToolIndex::new`], once per change of the
//! listings; a query walks only the posting lists of its own terms.

mod answer;
mod merge;
mod request;
mod semantic;
mod siblings;
mod text;
mod tool_text;

use super::{McpToolInfo, ServerTools, model_facing_name};
use crate::ids::ServerName;
use std::collections::HashMap;
use std::sync::Arc;

pub use answer::{Loading, answer};
pub use merge::{Found, MAX_SIBLINGS};
pub use request::{MAX_PARTS, SearchRequest};
pub use text::{stem, words};
pub use tool_text::{SUMMARY_LEN, summary};
use tool_text::{count, meaning_text, parameters};

/// BM25 term-frequency saturation.
const K1: f32 = 1.2;

/// What a synonym's match is worth next to the query's own word.
const SYNONYM_WEIGHT: f32 = 0.5;

/// How much more a tool scores when its name does what the request asks (create, read, list,
/// search, update, delete, run, send); see [`text::Actions`].
const ACTION_BONUS: f32 = 0.3;

/// How much of the score depends on covering all of the query's terms: a tool matching
/// "list" and "issues" beats one matching "issues" twice as strongly.
const COVERAGE: f32 = 0.5;

/// How much more a tool scores when the request names its server ("… on slack", "my git
/// history"): BM25 adds the server word like any other, and next to a rare word from
/// another server's tool ("history" in `slack_get_channel_history`) it is easily outweighed;
/// a named server is a constraint, so it scales the score. Chosen by three-fold
/// cross-validation on the tuned tasks (0, 0.5, 1, 2; 1 never worse on a fold).
const SERVER_BONUS: f32 = 1.0;

/// What a kin word's match (see [`ToolIndex::kin`]) is worth next to the query's own word:
/// the same as a synonym's.
const KIN_WEIGHT: f32 = SYNONYM_WEIGHT;

/// What the similarity in meaning (a cosine, see [`semantic`]) adds to a tool's score, next
/// to the word score scaled so that the best-matching tool has 1. Chosen on the tuned tasks
/// only (the largest weight that kept their recall@5, from 0.5, 0.7, 1, 1.5, 2): word
/// matches still decide between tools that mean the same, and meaning decides when the
/// request's words are not the tools' words.
const SEMANTIC_WEIGHT: f32 = 1.0;

/// The least similarity that makes a tool a hit without sharing a word with the request,
/// when other tools do share one: below it a tool is merely in the same language.
const SEMANTIC_FLOOR: f32 = 0.2;

/// The same when no tool shares a word with the request: meaning alone must then be strong.
/// Above the best match of every unrelated request tried on the corpus ("asdf qwerty" 0.34,
/// "play some jazz music" 0.28, "I love my cat" 0.19), so nonsense still finds nothing.
const SEMANTIC_FLOOR_ALONE: f32 = 0.4;

/// The fields of a tool, with their weight and BM25 length normalisation `b`. The name says
/// most about what a tool does, so it weighs most and is barely length-normalised (names are
/// short and all of them count). Parameter descriptions are long and generic, so they weigh
/// least.
#[derive(Clone, Copy)]
enum Field {
    Name,
    Server,
    Description,
    ParamNames,
    ParamDescriptions,
}

const FIELDS: [Field; 5] = [
    Field::Name,
    Field::Server,
    Field::Description,
    Field::ParamNames,
    Field::ParamDescriptions,
];

impl Field {
    fn weight(self) -> f32 {
        match self {
            Field::Name => 3.0,
            Field::Server => 3.0,
            Field::Description => 1.0,
            Field::ParamNames => 0.6,
            Field::ParamDescriptions => 0.25,
        }
    }

    fn b(self) -> f32 {
        match self {
            Field::Name => 0.3,
            Field::Server => 0.0,
            Field::Description => 0.75,
            Field::ParamNames => 0.5,
            Field::ParamDescriptions => 0.75,
        }
    }
}

/// A tool as search results show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedTool {
    /// Model-facing name (`mcp__github__create_issue`).
    pub name: String,
    pub server: ServerName,
    /// The name the server listed it under.
    pub raw_name: String,
    /// The first sentence of the description, at most [`SUMMARY_LEN`] characters.
    pub summary: String,
}

/// One result: the tool, its score, and whether it was named exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchHit<'a> {
    pub tool: &'a IndexedTool,
    pub score: f32,
    pub exact: bool,
    /// Position in the index: how merging and siblings tell tools apart.
    id: u32,
}

/// The search index over the tools of a set of listings.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    tools: Vec<IndexedTool>,
    /// Term → position in `postings` / `idf`.
    terms: HashMap<String, u32>,
    /// Per term: (tool, saturated weighted term frequency), in tool order.
    postings: Vec<Vec<(u32, f32)>>,
    idf: Vec<f32>,
    /// What each tool does, from the words of its name.
    actions: Vec<text::Actions>,
    /// Lower-cased model-facing name, raw name and `server/raw` → tools.
    exact: HashMap<String, Vec<u32>>,
    /// Per tool: the terms of its server's name (`google-maps` → google, map).
    server_terms: Vec<Vec<String>>,
    /// Every indexed term, sorted: where a query word the index lacks looks for its kin.
    vocabulary: Vec<String>,
    /// Per tool, the unit vector of what it does ([`semantic`]), `dimensions` floats each;
    /// empty when the model is unavailable.
    meanings: Vec<f32>,
    dimensions: usize,
    /// Per term of `vocabulary` (same order), the unit vector of the word alone: where a
    /// query word finds indexed words of the same meaning ("remember" → memory).
    term_meanings: Vec<f32>,
    /// Tools of one server acting on one resource (`list_issues`, `get_issue`).
    siblings: siblings::Siblings,
}

impl ToolIndex {
    /// Indexes the tools of `servers`, in order (the order breaks ties between equal scores).
    pub fn new(servers: &[Arc<ServerTools>]) -> Self {
        Self::from_tools(
            servers
                .iter()
                .flat_map(|s| s.tools().iter().map(move |t| (s.server(), t))),
        )
    }

    /// Indexes (server, tool) pairs, in the given order.
    pub fn from_tools<'a>(tools: impl IntoIterator<Item = (&'a str, &'a McpToolInfo)>) -> Self {
        let mut index = ToolIndex::default();
        // Per tool, per field: term → count, and the field's length in terms.
        let mut fields: Vec<[(HashMap<String, f32>, f32); 5]> = Vec::new();
        let mut meaning_texts: Vec<String> = Vec::new();
        for (server, tool) in tools {
            let id = index.tools.len() as u32;
            let (name, _) = model_facing_name(server, &tool.name);
            for key in [
                name.to_lowercase(),
                tool.name.to_lowercase(),
                format!("{}/{}", server.to_lowercase(), tool.name.to_lowercase()),
            ] {
                let ids = index.exact.entry(key).or_default();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let mut name_text = tool.name.clone();
            if let Some(title) = tool.claims.title.as_deref() {
                name_text.push(' ');
                name_text.push_str(title);
            }
            let mut actions = text::Actions::default();
            text::words(&tool.name, |w| {
                actions.add(text::actions_of(&text::stem(w)))
            });
            index.actions.push(actions);
            index.siblings.push(server, &tool.name);
            let server_terms = text::terms(server);
            index.server_terms.push(server_terms);
            meaning_texts.push(meaning_text(server, &tool.name, &tool.description));
            let (param_names, param_descriptions) = parameters(&tool.input_schema);
            let texts = [
                name_text,
                server.to_string(),
                tool.description.clone(),
                param_names,
                param_descriptions,
            ];
            fields.push(texts.map(|t| count(&t)));
            index.tools.push(IndexedTool {
                name,
                server: server.to_string().into(),
                raw_name: tool.name.clone(),
                summary: summary(&tool.description),
            });
        }
        let n = fields.len().max(1) as f32;
        let mut average = [0f32; 5];
        for doc in &fields {
            for (f, (_, len)) in doc.iter().enumerate() {
                average[f] += len / n;
            }
        }
        // Term → tool → weighted, length-normalised frequency over all fields (BM25F).
        let mut frequencies: Vec<Vec<(u32, f32)>> = Vec::new();
        for (id, doc) in fields.iter().enumerate() {
            let mut combined: HashMap<&str, f32> = HashMap::new();
            for (f, (counts, len)) in doc.iter().enumerate() {
                let field = FIELDS[f];
                let norm = if average[f] > 0.0 {
                    1.0 - field.b() + field.b() * len / average[f]
                } else {
                    1.0
                };
                for (term, tf) in counts {
                    *combined.entry(term).or_default() += field.weight() * tf / norm;
                }
            }
            let mut combined: Vec<(&str, f32)> = combined.into_iter().collect();
            combined.sort_by(|a, b| a.0.cmp(b.0));
            for (term, tf) in combined {
                let next = index.terms.len() as u32;
                let term_id = *index.terms.entry(term.to_string()).or_insert(next);
                if term_id == next {
                    frequencies.push(Vec::new());
                }
                frequencies[term_id as usize].push((id as u32, tf));
            }
        }
        let mut vocabulary: Vec<String> = index.terms.keys().cloned().collect();
        vocabulary.sort();
        if let Some(embedder) = semantic::embedder() {
            let mut cache = semantic::TokenCache::default();
            index.dimensions = embedder.dimensions();
            index.meanings = meaning_texts
                .iter()
                .flat_map(|text| embedder.embed(text, &mut cache))
                .collect();
            index.term_meanings = vocabulary
                .iter()
                .flat_map(|term| embedder.embed(term, &mut cache))
                .collect();
        }
        index.vocabulary = vocabulary;
        index.siblings.finish();
        for list in frequencies {
            let df = list.len() as f32;
            index.idf.push((1.0 + (n - df + 0.5) / (df + 0.5)).ln());
            index.postings.push(
                list.into_iter()
                    .map(|(id, tf)| (id, tf * (K1 + 1.0) / (tf + K1)))
                    .collect(),
            );
        }
        index
    }

    /// The same index ranking by words alone, without meaning: what the benchmark compares
    /// against.
    pub fn words_only(mut self) -> Self {
        self.meanings.clear();
        self.term_meanings.clear();
        self.dimensions = 0;
        self
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn tools(&self) -> &[IndexedTool] {
        &self.tools
    }

    /// The best `limit` tools for `query`, best first. Tools named exactly (model-facing
    /// name, raw name or `server/raw`, as the whole query or as one of its comma- or
    /// space-separated parts) come first; then the rest by score; equal scores in index order.
    /// A tool matching none of the query's terms is returned only when it is close enough in
    /// meaning ([`SEMANTIC_FLOOR`], [`SEMANTIC_FLOOR_ALONE`]).
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit<'_>> {
        self.search_with(query, limit, &mut Expansions::default())
    }

    /// [`ToolIndex::search`], with what the query's words bring in (kin, kin in meaning,
    /// tokens) kept in `expansions` for the next query of the same request: the parts of a
    /// split request are made of the whole's words, so each word is expanded once.
    fn search_with<'a>(
        &'a self,
        query: &str,
        limit: usize,
        expansions: &mut Expansions<'a>,
    ) -> Vec<SearchHit<'a>> {
        let n = self.tools.len();
        if n == 0 || limit == 0 {
            return Vec::new();
        }
        let mut exact = vec![false; n];
        self.mark_exact(query, &mut exact);

        // Each term once, at the highest weight it was given.
        let mut query_terms: Vec<(String, f32)> = Vec::new();
        for (term, weight) in text::query_terms(query) {
            match query_terms.iter_mut().find(|(t, _)| *t == term) {
                Some((_, w)) => *w = w.max(weight),
                None => query_terms.push((term, weight)),
            }
        }
        let mut total = vec![0f32; n];
        let mut covered = vec![0u16; n];
        let mut best = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for (term, weight) in &query_terms {
            if self.terms.contains_key(term.as_str()) {
                self.score_term(term, *weight, &mut best, &mut touched);
            } else {
                let kin = expansions
                    .kin
                    .entry(term.clone())
                    .or_insert_with(|| self.kin(term).collect());
                for kin in kin.iter() {
                    self.score_term(kin, weight * KIN_WEIGHT, &mut best, &mut touched);
                }
            }
            if !expansions.meaning.contains_key(term.as_str()) {
                let kin = self.kin_in_meaning(term, &mut expansions.tokens);
                expansions.meaning.insert(term.clone(), kin);
            }
            for &(kin, similarity) in &expansions.meaning[term.as_str()] {
                if !query_terms.iter().any(|(t, _)| t == kin) {
                    self.score_term(
                        kin,
                        weight * KIN_WEIGHT * similarity,
                        &mut best,
                        &mut touched,
                    );
                }
            }
            for synonym in text::synonyms(term) {
                if !query_terms.iter().any(|(t, _)| t == synonym) {
                    self.score_term(synonym, weight * SYNONYM_WEIGHT, &mut best, &mut touched);
                }
            }
            for &id in &touched {
                let id = id as usize;
                total[id] += best[id];
                covered[id] += 1;
                best[id] = 0.0;
            }
            touched.clear();
        }
        let wanted = text::wanted_actions(query);
        let terms = query_terms.len().max(1) as f32;
        let words: Vec<f32> = (0..n)
            .map(|id| {
                if total[id] == 0.0 {
                    return 0.0;
                }
                let coverage = 1.0 - COVERAGE + COVERAGE * f32::from(covered[id]) / terms;
                let action = if self.actions[id].intersects(wanted) {
                    1.0 + ACTION_BONUS
                } else {
                    1.0
                };
                let named = if !self.server_terms[id].is_empty()
                    && self.server_terms[id]
                        .iter()
                        .all(|t| query_terms.iter().any(|(q, _)| q == t))
                {
                    1.0 + SERVER_BONUS
                } else {
                    1.0
                };
                total[id] * coverage * action * named
            })
            .collect();
        let best_words = words.iter().copied().fold(0f32, f32::max);
        let meaning = self.similarities(query, &mut expansions.tokens);
        let floor = if best_words > 0.0 {
            SEMANTIC_FLOOR
        } else {
            SEMANTIC_FLOOR_ALONE
        };
        let mut hits: Vec<(u32, f32)> = (0..n)
            .filter_map(|id| {
                let similarity = meaning.as_ref().map_or(0.0, |m| m[id]);
                let matched = exact[id] || words[id] > 0.0 || similarity >= floor;
                let words = if best_words > 0.0 {
                    words[id] / best_words
                } else {
                    0.0
                };
                matched.then_some((id as u32, words + SEMANTIC_WEIGHT * similarity))
            })
            .collect();
        self.prefer_the_wanted_verb(&mut hits, wanted);
        hits.sort_by(|a, b| {
            exact[b.0 as usize]
                .cmp(&exact[a.0 as usize])
                .then(b.1.total_cmp(&a.1))
                .then(a.0.cmp(&b.0))
        });
        hits.truncate(limit);
        hits.into_iter()
            .map(|(id, score)| SearchHit {
                tool: &self.tools[id as usize],
                score,
                exact: exact[id as usize],
                id,
            })
            .collect()
    }

    /// Among siblings (one server, one resource, different verbs), the one that does what the
    /// request asks ranks right above a sibling that does not: "what PRs are open" wants
    /// `list_pull_requests` even where `get_pull_request`'s shorter description matches the
    /// words better. Only siblings that matched the request move, and never past a tool of
    /// another resource that scored higher than the sibling they pass.
    fn prefer_the_wanted_verb(&self, hits: &mut [(u32, f32)], wanted: text::Actions) {
        if wanted == text::Actions::default() {
            return;
        }
        let mut scores: HashMap<u32, f32> = hits.iter().copied().collect();
        for &(id, score) in hits.iter() {
            if self.actions[id as usize].intersects(wanted) {
                continue;
            }
            for sibling in self.siblings.of(id) {
                if !self.actions[sibling as usize].intersects(wanted) {
                    continue;
                }
                if let Some(s) = scores.get_mut(&sibling)
                    && *s < score
                {
                    *s = score + SIBLING_STEP;
                }
            }
        }
        for (id, score) in hits.iter_mut() {
            *score = scores[id];
        }
    }

    /// Per tool, the cosine between the query's meaning and the tool's; `None` when the
    /// model is unavailable or no token of the query is in its vocabulary.
    fn similarities(&self, query: &str, tokens: &mut semantic::TokenCache) -> Option<Vec<f32>> {
        let embedder = semantic::embedder().filter(|_| self.dimensions > 0)?;
        let query = embedder.embed(query, tokens);
        if query.iter().all(|&x| x == 0.0) {
            return None;
        }
        Some(
            self.meanings
                .chunks_exact(self.dimensions)
                .map(|tool| semantic::cosine(&query, tool))
                .collect(),
        )
    }

    /// Indexed words closest in meaning to `term` (at most [`MEANING_KIN`], each at least
    /// [`KIN_SIMILARITY`] similar), with their similarity.
    fn kin_in_meaning(&self, term: &str, tokens: &mut semantic::TokenCache) -> Vec<(&str, f32)> {
        let Some(embedder) =
            semantic::embedder().filter(|_| self.dimensions > 0 && !self.term_meanings.is_empty())
        else {
            return Vec::new();
        };
        let query = embedder.embed(term, tokens);
        let mut kin: Vec<(&str, f32)> = self
            .term_meanings
            .chunks_exact(self.dimensions)
            .zip(&self.vocabulary)
            .map(|(meaning, word)| (word.as_str(), semantic::cosine(&query, meaning)))
            // The similarity first: it rules out nearly every word, and comparing the word
            // with the term for each of thousands of words cost a tenth of a search.
            .filter(|&(word, similarity)| similarity >= KIN_SIMILARITY && word != term)
            .collect();
        kin.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        kin.truncate(MEANING_KIN);
        kin
    }

    /// Indexed terms akin to `term`, a word the index lacks: another form of the same word
    /// that the light stemmer does not merge (a long shared prefix: `modified` /
    /// `modification`, `vulnerable` / `vulnerability`), or the word with one typo
    /// (`repositroy`, `delte`: one letter added, dropped, changed or two swapped). Only for
    /// words of [`MIN_PREFIX`] letters or more, where one letter rarely makes another word.
    fn kin<'a>(&'a self, term: &str) -> impl Iterator<Item = &'a str> + 'a {
        let term: Vec<char> = term.chars().collect();
        let enough = term.len() >= MIN_PREFIX;
        let min = MIN_PREFIX.max((term.len() * 3).div_ceil(4));
        // Most words are ASCII: compared as bytes, a word costs no allocation (this runs
        // over the whole vocabulary for each unknown query word).
        let ascii: Option<Vec<u8>> = term
            .iter()
            .all(char::is_ascii)
            .then(|| term.iter().map(|&c| c as u8).collect());
        self.vocabulary
            .iter()
            .filter(move |v| {
                if !enough {
                    return false;
                }
                match &ascii {
                    Some(term) if v.is_ascii() => is_kin(term, v.as_bytes(), min),
                    _ => is_kin(&term, &v.chars().collect::<Vec<char>>(), min),
                }
            })
            .map(String::as_str)
    }

    /// Keeps, per tool, the best score of `term` (weighted) in `best`; remembers in
    /// `touched` which tools got one.
    fn score_term(&self, term: &str, weight: f32, best: &mut [f32], touched: &mut Vec<u32>) {
        let Some(&term_id) = self.terms.get(term) else {
            return;
        };
        let idf = self.idf[term_id as usize] * weight;
        for &(id, tf) in &self.postings[term_id as usize] {
            let slot = &mut best[id as usize];
            if *slot == 0.0 {
                touched.push(id);
            }
            *slot = slot.max(idf * tf);
        }
    }

    fn mark_exact(&self, query: &str, exact: &mut [bool]) {
        let whole = query.trim().to_lowercase();
        let parts = whole.split(|c: char| c == ',' || c.is_whitespace());
        for key in std::iter::once(whole.as_str())
            .chain(parts)
            .filter(|p| looks_like_identifier(p))
        {
            for &id in self.exact.get(key).into_iter().flatten() {
                exact[id as usize] = true;
            }
        }
    }
}

/// What the words of one request bring in beyond themselves, worked out once per word and
/// request (see [`ToolIndex::search_with`]). Expanding a word by meaning compares it with
/// every indexed word, most of a search's time; a request split in two ranks three texts
/// made of the same words.
#[derive(Default)]
struct Expansions<'a> {
    /// Query word the index lacks → its kin ([`ToolIndex::kin`]).
    kin: HashMap<String, Vec<&'a str>>,
    /// Query word → indexed words close in meaning ([`ToolIndex::kin_in_meaning`]).
    meaning: HashMap<String, Vec<(&'a str, f32)>>,
    /// Word → the embedding model's tokens.
    tokens: semantic::TokenCache,
}

/// How far above a sibling the one with the wanted verb is placed (see
/// [`ToolIndex::prefer_the_wanted_verb`]): enough to pass it, too little to pass anything else.
const SIBLING_STEP: f32 = 1e-4;

/// How many indexed words one query word may bring in by meaning.
const MEANING_KIN: usize = 2;

/// The least similarity of two words alone for one to stand in for the other.
const KIN_SIMILARITY: f32 = 0.5;

/// The shortest shared prefix that makes two words kin (see [`ToolIndex::kin`]).
const MIN_PREFIX: usize = 5;

/// Whether the indexed word `word` is kin to the query word `term` (see [`ToolIndex::kin`]):
/// they share a prefix of at least `min` letters (or all of a shorter word's, when that is at
/// least [`MIN_PREFIX`]), or are one edit apart.
fn is_kin<T: PartialEq>(term: &[T], word: &[T], min: usize) -> bool {
    let prefix = term.iter().zip(word).take_while(|(a, b)| a == b).count();
    if prefix >= min.min(word.len().max(MIN_PREFIX)) {
        return true;
    }
    // Only words of about the same length can be one typo away.
    word.len().abs_diff(term.len()) <= 1 && one_edit(term, word)
}

/// Whether `b` is `a` with one edit: a letter inserted, deleted or replaced, or two
/// neighbouring letters swapped.
fn one_edit<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 || a == b {
        return false;
    }
    let start = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() < long.len() {
        // One letter more: the rest after it must match.
        return short[start..] == long[start + 1..];
    }
    short[start + 1..] == long[start + 1..]
        || (start + 1 < short.len()
            && short[start] == long[start + 1]
            && short[start + 1] == long[start]
            && short[start + 2..] == long[start + 2..])
}

/// A query part that can only be meant as a name: `create_issue`, `get-file`, `fs.read`,
/// `mcp__github__create_issue`, `github/create_issue`. Plain words ("search") are not
/// names here: many servers have a tool called that, and the words rank them anyway.
fn looks_like_identifier(part: &str) -> bool {
    part.contains(['_', '-', '.', '/'])
}

#[cfg(test)]
mod tests;
