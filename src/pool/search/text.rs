//! Text to terms: identifier splitting, light stemming, stop words and verb/noun synonyms.
//! The same function turns tool definitions and queries into terms, so a query word and a
//! name part meet in one form ("Creating" and `createIssue` both give `creat`).

use std::collections::HashMap;
use std::sync::LazyLock;

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
            if prev.is_lowercase()
                || prev.is_numeric()
                || (prev.is_uppercase() && next.is_lowercase())
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
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "could",
    "do",
    "does",
    "for",
    "from",
    "give",
    "have",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "let",
    "like",
    "me",
    "my",
    "need",
    "of",
    "on",
    "or",
    "our",
    "please",
    "should",
    "so",
    "some",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "those",
    "to",
    "up",
    "us",
    "use",
    "using",
    "via",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whose",
    "will",
    "with",
    "would",
    "you",
    "your",
    "e",
    "g",
    "etc",
    "also",
    "one",
    "tool",
    "tools",
    "want",
    "help",
    "able",
    "way",
    "thing",
    "stuff",
    "currently",
    "specific",
    "specified",
    "given",
    "provided",
    "optional",
    "required",
];

pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// A light suffix stripper (plural, -ing, -ed, final e). Deliberately weaker than Porter:
/// tool vocabularies are short technical words, where aggressive stemming merges words that
/// mean different things (`user`/`use`, `commit`/`committee`).
pub fn stem(word: &str) -> String {
    let mut w = word.to_string();
    let len = w.chars().count();
    if len <= 3 || !w.is_ascii() {
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

/// Terms of a text: words, stop words dropped, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    words(text, |w| {
        if !is_stop_word(w) {
            out.push(stem(w));
        }
    });
    out
}

/// Groups of words that people use for the same action or object. A query term also matches
/// the other members of its groups, at a discount (see `SYNONYM_WEIGHT` in the index). The
/// groups are about how people phrase requests to tools in general (verbs of CRUD and
/// browsing, common object names), not about any particular tool set.
const SYNONYM_GROUPS: &[&[&str]] = &[
    // Reading one thing.
    &[
        "get", "fetch", "read", "retrieve", "show", "view", "open", "see", "display", "detail",
        "info", "inspect", "describe", "look", "check", "load", "content",
    ],
    // Enumerating.
    &[
        "list",
        "all",
        "show",
        "enumerate",
        "browse",
        "every",
        "overview",
        "recent",
        "latest",
    ],
    // Searching.
    &[
        "search", "find", "query", "lookup", "look", "locate", "filter", "grep", "match", "where",
        "discover", "which",
    ],
    // Creating.
    &[
        "create", "add", "new", "make", "open", "start", "insert", "post", "submit", "file",
        "raise", "register", "write", "draft", "generate", "set",
    ],
    // Deleting.
    &[
        "delete", "remove", "drop", "destroy", "erase", "purge", "trash", "rm", "forget", "clear",
        "unlink", "wipe", "discard",
    ],
    // Changing.
    &[
        "update",
        "edit",
        "modify",
        "change",
        "set",
        "rename",
        "patch",
        "alter",
        "replace",
        "adjust",
        "tweak",
        "fix",
        "move",
        "assign",
        "transition",
    ],
    // Running.
    &[
        "run", "execute", "exec", "invoke", "trigger", "launch", "call", "evaluate", "eval",
        "perform",
    ],
    // Telling people.
    &[
        "send", "post", "message", "notify", "reply", "dm", "ping", "tell", "announce", "share",
        "say",
    ],
    &[
        "comment", "reply", "note", "remark", "respond", "feedback", "review",
    ],
    &[
        "close", "resolve", "finish", "complete", "done", "mark", "archive", "cancel", "end",
    ],
    &["merge", "combine", "land", "integrate"],
    &["download", "save", "export", "pull"],
    &["upload", "push", "publish", "deploy"],
    &[
        "screenshot",
        "capture",
        "snapshot",
        "image",
        "picture",
        "screen",
        "png",
    ],
    &["click", "press", "tap", "select", "choose"],
    &[
        "navigate", "goto", "go", "visit", "browse", "url", "load", "open",
    ],
    &["type", "fill", "enter", "input", "form", "key"],
    // Objects.
    &[
        "issue", "ticket", "bug", "task", "problem", "card", "story", "todo",
    ],
    &["pr", "pull", "request", "mr", "merge", "changeset", "patch"],
    &["repo", "repository", "project", "codebase"],
    &["file", "document", "doc", "content"],
    &["folder", "directory", "dir", "tree"],
    &[
        "user",
        "member",
        "person",
        "people",
        "teammate",
        "assignee",
        "account",
        "profile",
        "colleague",
        "who",
    ],
    &["channel", "room", "conversation", "chat", "thread"],
    &["message", "msg", "chat", "post", "text"],
    &[
        "error",
        "exception",
        "crash",
        "failure",
        "bug",
        "stack",
        "trace",
        "stacktrace",
        "event",
        "incident",
    ],
    &["customer", "client", "buyer", "payer", "shopper"],
    &[
        "payment",
        "charge",
        "transaction",
        "pay",
        "paid",
        "money",
        "intent",
    ],
    &["refund", "reimburse", "return", "chargeback"],
    &["invoice", "bill", "billing", "receipt"],
    &["subscription", "plan", "recurring", "renewal", "membership"],
    &["price", "pricing", "cost", "amount", "product"],
    &[
        "time", "clock", "timezone", "tz", "hour", "date", "now", "current",
    ],
    &["convert", "translate", "transform", "conversion"],
    &[
        "database", "db", "sql", "table", "query", "row", "record", "schema", "column",
    ],
    &[
        "page", "webpage", "url", "website", "site", "link", "web", "html", "internet", "online",
    ],
    &[
        "memory",
        "remember",
        "knowledge",
        "entity",
        "graph",
        "fact",
        "recall",
        "observation",
        "relation",
        "memorize",
    ],
    &[
        "diff",
        "difference",
        "change",
        "compare",
        "modification",
        "changeset",
    ],
    &["log", "history", "past", "previous", "timeline"],
    &["status", "state", "progress", "health"],
    &["commit", "checkin", "snapshot", "save"],
    &["branch", "checkout", "switch", "fork"],
    &["worker", "function", "script", "serverless", "edge"],
    &["bucket", "storage", "object", "blob", "r2"],
    &["kv", "key", "value", "namespace", "store"],
    &["dns", "domain", "zone", "record"],
    &["label", "tag", "category"],
    &["team", "group", "org", "organization", "workspace"],
    &["calendar", "event", "meeting", "schedule"],
    &["word", "text", "string", "phrase"],
    &["size", "metadata", "info", "stat", "attribute", "property"],
    &["tab", "window", "browser", "page"],
    &["console", "log", "output", "devtools"],
    &[
        "wiki",
        "page",
        "confluence",
        "doc",
        "documentation",
        "article",
        "space",
    ],
    &["sprint", "cycle", "iteration", "milestone"],
    &["release", "version", "tag"],
    &["workflow", "action", "pipeline", "ci", "job", "build"],
    &["secret", "credential", "token", "key", "password"],
    &["star", "favorite", "bookmark"],
    &["notification", "alert", "inbox", "mention"],
    &["route", "direction", "distance", "travel", "drive"],
    &[
        "place",
        "location",
        "address",
        "map",
        "geocode",
        "nearby",
        "coordinate",
    ],
    &["reaction", "emoji", "react"],
];

/// Stem → the stems it is related to through `SYNONYM_GROUPS` (not itself), sorted so that
/// expansion order, and with it the floating-point sums, is the same in every run.
static SYNONYMS: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let mut map: HashMap<String, Vec<String>> = HashMap::new();
    for group in SYNONYM_GROUPS {
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
