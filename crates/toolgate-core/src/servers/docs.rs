//! `toolgate serve docs`: full-text search over toolgate's user documentation, which is
//! compiled into the binary from `assets/docs/`. Every page is also an MCP resource.

use rmcp::{
    ErrorData as McpError,
    model::{Implementation, JsonObject, Resource, ResourceContents},
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::common::{Backend, CallContext, SetupError, ToolOutput, ToolSpec, read_only};

/// One Markdown page of the corpus.
pub struct Page {
    pub slug: &'static str,
    pub file: &'static str,
    pub text: &'static str,
}

impl Page {
    pub fn uri(&self) -> String {
        format!("docs://{}", self.slug)
    }

    /// The page's first `# ` heading, or its slug when it has none.
    pub fn title(&self) -> &'static str {
        self.text
            .lines()
            .find_map(|line| line.strip_prefix("# "))
            .map(str::trim)
            .unwrap_or(self.slug)
    }
}

macro_rules! page {
    ($slug:literal) => {
        Page {
            slug: $slug,
            file: concat!($slug, ".md"),
            text: include_str!(concat!("../../../../assets/docs/", $slug, ".md")),
        }
    };
}

/// The shipped corpus, in reading order.
pub const PAGES: &[Page] = &[
    page!("getting-started"),
    page!("configuration"),
    page!("mcp-servers"),
    page!("permissions"),
    page!("modes"),
    page!("hooks"),
    page!("managed-policy"),
    page!("keys"),
    page!("sandbox"),
    page!("audit"),
    page!("long-sessions"),
    page!("headless"),
    page!("project-context"),
];

const VERSION_FILE: &str = include_str!("../../../../assets/docs/VERSION");

/// `"<version>+<first 12 hex digits of the sha256 of all pages>"`: the hash changes
/// whenever any page does, even if nobody bumped `assets/docs/VERSION`.
pub fn corpus_version() -> String {
    let mut hasher = Sha256::new();
    for page in PAGES {
        hasher.update(page.slug.as_bytes());
        hasher.update([0]);
        hasher.update(page.text.as_bytes());
        hasher.update([0]);
    }
    let digest = hex::encode(hasher.finalize());
    format!("{}+{}", VERSION_FILE.trim(), &digest[..12])
}

/// A ranked search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub page: &'static str,
    pub uri: String,
    pub heading: String,
    /// 1-based line in the page's Markdown file.
    pub line: usize,
    pub snippet: String,
    pub score: u32,
}

/// A section: a heading and the lines up to the next heading.
struct Section<'a> {
    heading: &'a str,
    heading_line: usize,
    lines: Vec<(usize, &'a str)>,
}

fn sections(page: &Page) -> Vec<Section<'_>> {
    let mut out: Vec<Section<'_>> = Vec::new();
    let mut in_code = false;
    for (index, line) in page.text.lines().enumerate() {
        let number = index + 1;
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        let heading = if in_code { None } else { heading_text(line) };
        match heading {
            Some(text) => out.push(Section {
                heading: text,
                heading_line: number,
                lines: Vec::new(),
            }),
            None => match out.last_mut() {
                Some(section) => section.lines.push((number, line)),
                None => out.push(Section {
                    heading: page.title(),
                    heading_line: 1,
                    lines: vec![(number, line)],
                }),
            },
        }
    }
    out
}

fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        Some(line[hashes..].trim())
    } else {
        None
    }
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "can", "do", "does", "for", "how", "i", "in", "is", "it", "of", "on",
    "or", "the", "to", "what", "when", "where", "which", "with", "my", "me", "use", "using", "be",
    "you", "your", "if", "at", "by", "from", "as", "this", "that", "there", "should", "get",
];

/// Lower-cased words of `text`; `.`, `_`, `-` and `$` stay inside words so that
/// `.mcp.json`, `mcp__docs__search` and `ANTHROPIC_API_KEY` are single, findable words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || "._-$".contains(c)))
        .map(|w| w.trim_matches(|c| c == '.' || c == '-').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn query_terms(query: &str) -> Vec<String> {
    let all = words(query);
    let meaningful: Vec<String> = all
        .iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .cloned()
        .collect();
    // Single letters ("c" of "Ctrl+C") match nearly every section; drop them when the query
    // has longer words.
    let long: Vec<String> = meaningful
        .iter()
        .filter(|w| w.chars().count() > 1)
        .cloned()
        .collect();
    let mut terms = if !long.is_empty() {
        long
    } else if meaningful.is_empty() {
        all
    } else {
        meaningful
    };
    terms.dedup();
    terms
}

/// A word matches a term when it starts with it, or with the term minus a plural `s`
/// ("permission" finds "permissions", "keys" finds "key"), or contains a longer term.
fn word_matches(word: &str, term: &str) -> bool {
    let singular = term.strip_suffix('s').filter(|s| s.len() >= 3);
    has_prefix(word, term)
        || singular.is_some_and(|s| has_prefix(word, s))
        || (term.len() >= 4 && word.contains(term))
}

/// Prefixes only stretch a little for short terms: "use" finds "uses", not "usually".
fn has_prefix(word: &str, prefix: &str) -> bool {
    word.starts_with(prefix) && (prefix.len() >= 5 || word.len() <= prefix.len() + 2)
}

fn count_matches(words: &[String], term: &str) -> u32 {
    words.iter().filter(|w| word_matches(w, term)).count() as u32
}

/// A section with its words split once per search.
struct IndexedSection<'a> {
    page: &'a Page,
    section: Section<'a>,
    heading_words: Vec<String>,
    body_words: Vec<Vec<String>>,
}

/// Ranks sections: those containing every query term first, then by a tf-idf style score in
/// which rare terms weigh more than common ones and a term in the heading counts extra;
/// ties keep reading order.
pub fn search(query: &str, limit: usize) -> Vec<Hit> {
    let terms = query_terms(query);
    if terms.is_empty() {
        return Vec::new();
    }
    let phrase = query.trim().to_lowercase();
    let corpus: Vec<IndexedSection<'_>> = PAGES
        .iter()
        .flat_map(|page| {
            sections(page)
                .into_iter()
                .map(move |section| (page, section))
        })
        .map(|(page, section)| IndexedSection {
            heading_words: words(section.heading),
            body_words: section.lines.iter().map(|(_, line)| words(line)).collect(),
            page,
            section,
        })
        .collect();
    let counts: Vec<Vec<(u32, u32)>> = corpus
        .iter()
        .map(|indexed| {
            terms
                .iter()
                .map(|term| {
                    let in_body = indexed
                        .body_words
                        .iter()
                        .map(|line| count_matches(line, term))
                        .sum();
                    (count_matches(&indexed.heading_words, term), in_body)
                })
                .collect()
        })
        .collect();
    let sections_total = corpus.len() as f64;
    let idf: Vec<f64> = (0..terms.len())
        .map(|t| {
            let df = counts.iter().filter(|c| c[t].0 + c[t].1 > 0).count() as f64;
            ((sections_total + 1.0) / (df + 0.5)).ln().max(0.1)
        })
        .collect();

    let mut hits: Vec<(bool, Hit)> = Vec::new();
    for (IndexedSection { page, section, .. }, section_counts) in corpus.iter().zip(&counts) {
        let mut matched = 0;
        let mut score = 0.0;
        for (t, (in_heading, in_body)) in section_counts.iter().enumerate() {
            if in_heading + in_body == 0 {
                continue;
            }
            matched += 1;
            let heading_bonus = if *in_heading > 0 { 3.0 } else { 0.0 };
            score += idf[t] * (2.0 + heading_bonus + f64::from(*in_body).ln_1p());
        }
        if matched == 0 {
            continue;
        }
        let phrase_hit = terms.len() > 1
            && section
                .lines
                .iter()
                .any(|(_, line)| line.to_lowercase().contains(&phrase));
        if phrase_hit {
            score += 5.0;
        }
        let (line, snippet) = best_line(section, &terms);
        // A line that starts with a query term usually defines it ("- `MODEL_ID` selects").
        if starts_with_term(&snippet, &terms) {
            score += 2.0;
        }
        hits.push((
            matched == terms.len(),
            Hit {
                page: page.file,
                uri: page.uri(),
                heading: section.heading.to_owned(),
                line,
                snippet,
                score: (score * 10.0).round() as u32,
            },
        ));
    }
    hits.sort_by(|(all_a, a), (all_b, b)| all_b.cmp(all_a).then(b.score.cmp(&a.score)));
    hits.into_iter().take(limit).map(|(_, hit)| hit).collect()
}

/// The body line with the most distinct terms (the heading line when the body has none).
fn best_line(section: &Section<'_>, terms: &[String]) -> (usize, String) {
    let mut best: Option<(u32, usize, &str)> = None;
    for (number, line) in &section.lines {
        let line_words = words(line);
        let distinct = terms
            .iter()
            .filter(|t| count_matches(&line_words, t) > 0)
            .count() as u32;
        if distinct > 0 && best.is_none_or(|(d, _, _)| distinct > d) {
            best = Some((distinct, *number, line));
        }
    }
    match best {
        Some((_, number, line)) => (number, snippet(line)),
        None => (section.heading_line, snippet(section.heading)),
    }
}

fn starts_with_term(snippet: &str, terms: &[String]) -> bool {
    words(snippet)
        .first()
        .is_some_and(|first| terms.iter().any(|t| word_matches(first, t)))
}

fn snippet(line: &str) -> String {
    const MAX: usize = 240;
    let text = line
        .trim()
        .trim_start_matches(['-', '*', '>', '|', ' '])
        .trim();
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// The docs server.
#[derive(Default)]
pub struct DocsBackend;

impl DocsBackend {
    pub fn new() -> Self {
        Self
    }
}

impl Backend for DocsBackend {
    fn implementation(&self) -> Implementation {
        Implementation::new("toolgate-docs", env!("CARGO_PKG_VERSION"))
            .with_title("toolgate documentation")
    }

    fn instructions(&self) -> String {
        "Searchable user documentation for toolgate (getting started, configuration, MCP \
         servers, permissions, keys). Use `search` to find the relevant section, then read the \
         whole page as the resource named in the hit (docs://PAGE) when you need more context."
            .to_owned()
    }

    fn tools(&self) -> Result<Vec<ToolSpec>, SetupError> {
        Ok(vec![
            ToolSpec::new(
                "search",
                "Search toolgate's user documentation (getting started, .mcp.json configuration, \
                 MCP servers and tool naming, permission rules and the approval dialog, key \
                 bindings and API keys). Returns up to `limit` ranked hits, each with the page \
                 file, section heading, line number, a snippet and the page's docs:// resource \
                 URI. Use a few specific keywords (e.g. \"deny rule precedence\" or \
                 \"ANTHROPIC_API_KEY\"), not a full sentence.",
                json!({
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "minLength": 1,
                            "description": "Keywords to look for, e.g. \"workspace trust\"."
                        },
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 20,
                            "description": "Maximum number of hits to return (default 5)."
                        }
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }),
                read_only("Search toolgate docs"),
            )?,
            ToolSpec::new(
                "get_version",
                "Return the version of the documentation corpus this server ships: the docs \
                 release plus a content hash that changes whenever any page changes, and the \
                 list of pages.",
                json!({ "type": "object", "properties": {}, "additionalProperties": false }),
                read_only("Docs corpus version"),
            )?,
        ])
    }

    async fn call(
        &self,
        tool: &str,
        args: JsonObject,
        _ctx: CallContext,
    ) -> Result<ToolOutput, String> {
        match tool {
            "search" => Ok(run_search(&args)),
            "get_version" => {
                let version = corpus_version();
                let pages: Vec<&str> = PAGES.iter().map(|p| p.file).collect();
                Ok(ToolOutput::text(format!(
                    "toolgate docs {version} ({} pages: {})",
                    pages.len(),
                    pages.join(", ")
                ))
                .with_structured(json!({ "version": version, "pages": pages })))
            }
            other => Err(format!(
                "tool '{other}' is not implemented by the docs server"
            )),
        }
    }

    fn has_resources(&self) -> bool {
        true
    }

    fn resources(&self) -> Result<Vec<Resource>, McpError> {
        Ok(PAGES
            .iter()
            .map(|page| {
                Resource::new(page.uri(), page.slug)
                    .with_title(page.title())
                    .with_description(format!("toolgate user docs: {}", page.title()))
                    .with_mime_type("text/markdown")
                    .with_size(page.text.len() as u64)
            })
            .collect())
    }

    fn read_resource(&self, uri: &str) -> Result<ResourceContents, McpError> {
        let page = PAGES.iter().find(|page| page.uri() == uri).ok_or_else(|| {
            let known: Vec<String> = PAGES.iter().map(Page::uri).collect();
            McpError::resource_not_found(
                format!("no docs page '{uri}'; pages are: {}", known.join(", ")),
                None,
            )
        })?;
        Ok(ResourceContents::text(page.text, uri).with_mime_type("text/markdown"))
    }
}

fn run_search(args: &JsonObject) -> ToolOutput {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(5)
        .clamp(1, 20) as usize;
    let hits = search(query, limit);
    if hits.is_empty() {
        return ToolOutput::text(format!(
            "No matches for \"{query}\" in the toolgate docs ({} pages searched). Try fewer or \
             different keywords, e.g. \"permissions\", \".mcp.json\" or \"keys\".",
            PAGES.len()
        ))
        .with_structured(json!({ "query": query, "hits": [] }));
    }
    let mut text = format!(
        "{} hit{} for \"{query}\" in the toolgate docs:\n",
        hits.len(),
        if hits.len() == 1 { "" } else { "s" }
    );
    for (rank, hit) in hits.iter().enumerate() {
        text.push_str(&format!(
            "\n{}. {} > {} (line {}) [{}]\n   {}\n",
            rank + 1,
            hit.page,
            hit.heading,
            hit.line,
            hit.uri,
            hit.snippet
        ));
    }
    let structured: Vec<Value> = hits
        .iter()
        .map(|hit| {
            json!({
                "page": hit.page,
                "uri": hit.uri,
                "heading": hit.heading,
                "line": hit.line,
                "snippet": hit.snippet,
                "score": hit.score,
            })
        })
        .collect();
    ToolOutput::text(text).with_structured(json!({ "query": query, "hits": structured }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_a_title_and_content() {
        for page in PAGES {
            assert_ne!(page.title(), page.slug, "{} lacks a '# ' title", page.file);
            assert!(
                page.text.len() > 500,
                "{} is too short to be real docs",
                page.file
            );
        }
    }

    #[test]
    fn hit_line_points_at_the_snippet_in_the_file() {
        let hits = search("deny ask allow precedence", 5);
        assert!(!hits.is_empty(), "the query finds nothing to check");
        for hit in hits {
            let page = PAGES.iter().find(|p| p.file == hit.page).unwrap();
            let line = page.text.lines().nth(hit.line - 1).unwrap();
            let head: String = hit.snippet.chars().take(30).collect();
            assert!(
                line.contains(head.trim_end_matches('…')),
                "{hit:?} vs {line:?}"
            );
        }
    }

    #[test]
    fn api_key_query_finds_the_keys_page_first() {
        let hits = search("ANTHROPIC_API_KEY", 3);
        assert_eq!(hits.first().map(|h| h.page), Some("keys.md"), "{hits:?}");
    }

    #[test]
    fn nonsense_finds_nothing() {
        assert!(search("xyzzyplugh", 5).is_empty());
        assert!(search("  ", 5).is_empty());
    }

    #[test]
    fn version_has_release_and_hash() {
        let version = corpus_version();
        let (release, hash) = version.split_once('+').unwrap();
        assert!(!release.is_empty());
        assert_eq!(hash.len(), 12);
    }
}
