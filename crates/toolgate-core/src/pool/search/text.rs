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

/// The actions whose request may carry the text to write after a colon.
const WRITING: Actions = Actions(Action::Create as u8 | Action::Send as u8 | Action::Update as u8);

/// Words too common in requests and descriptions to say anything about which tool is meant.
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "do", "does", "for", "from", "give", "have", "how", "i", "if", "in", "into", "is",
    "it", "its", "just", "let", "like", "me", "my", "need", "of", "on", "or", "our", "please",
    "should", "so", "some", "that", "the", "their", "them", "then", "there", "these", "this",
    "those", "to", "up", "us", "use", "using", "via", "want", "was", "we", "were", "what",
    "when", "which", "who", "whose", "will", "with", "would", "you", "your", "etc", "also",
    "one", "tool", "tools", "help", "able", "way", "thing", "stuff", "currently", "called",
    "named", "titled", "specific", "specified", "given", "provided", "optional", "required",
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

fn push_terms(text: &str, out: &mut Vec<String>) {
    words(text, |w| {
        // Single letters are noise ("what's" → what, s); single digits are not ("slack-3").
        let letter = w.chars().count() == 1 && w.chars().all(char::is_alphabetic);
        if !letter && !is_stop_word(w) {
            out.push(stem(w));
        }
    });
}

/// Terms of a query. Requests name things by example more than by kind ("fetch
/// https://…", "move PROJ-12", "mail bob@acme.com"): such a word stands for its kind here,
/// because tool definitions describe the kind (`url`, `issue`, `email`) and the example's
/// own words (`example`, `com`, `proj`) would only match by accident.
///
/// Each term comes with its weight: a path says "a file" less surely than a URL says "a
/// web page", so its kind words count half.
pub fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut out = Vec::new();
    let parts: Vec<&str> = query.split_whitespace().collect();
    let quoted = quoted_parts(&parts);
    for (at, quoted) in quoted.iter().enumerate() {
        let start = out.len();
        push_part_terms(&parts, at, &mut out);
        if *quoted {
            for (_, weight) in &mut out[start..] {
                *weight *= QUOTED_WEIGHT;
            }
        }
    }
    if asks_how_to(query) {
        out.push((stem("documentation"), 0.5));
        out.push((stem("docs"), 0.5));
    }
    out
}

/// What the words of a quotation count: they are what the tool is to write ("commit it
/// with message 'pager: handle empty page'", "say 'tested locally'"), not what it does.
const QUOTED_WEIGHT: f32 = 0.25;

/// Per part of a request, whether it is what a tool is to write rather than what it does:
/// inside quotes (from a part that opens a quote to the part that closes it; an apostrophe
/// inside a word opens nothing, and a quote never closed quotes nothing), or after the colon
/// that ends a request to create or send ("file a bug on acme/web: login button dead on
/// Safari" — the bug's text; "jira: my open bugs" is no such request).
fn quoted_parts(parts: &[&str]) -> Vec<bool> {
    let mut quoted = vec![false; parts.len()];
    if let Some(colon) = parts
        .iter()
        .position(|p| p.ends_with(':') && !p.starts_with([':', '(']))
        && colon >= 2
        && parts[..=colon].iter().any(|p| {
            let word = p
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            // "open" is as often a state ("open bugs (label: p1)") as a creation.
            (word != "open" && actions_of(&stem(&word)).intersects(WRITING))
                || is_verb_use(&word, Some("a"))
        })
    {
        quoted[colon + 1..].iter_mut().for_each(|q| *q = true);
    }
    let mut at = 0;
    while at < parts.len() {
        let opening = parts[at].trim_start_matches('(');
        let Some(quote) = opening
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
        else {
            at += 1;
            continue;
        };
        let closes = |i: usize| {
            let part = parts[i].trim_end_matches([',', ';', ':', '?', '!', ')', '.']);
            let inner = if i == at { &opening[1..] } else { part };
            inner.ends_with(quote) && (i != at || inner.len() > 1)
        };
        match (at..parts.len()).find(|&i| closes(i)) {
            Some(end) => {
                quoted[at..=end].iter_mut().for_each(|q| *q = true);
                at = end + 1;
            }
            None => at += 1,
        }
    }
    quoted
}

/// "how do I wire sentry into next.js", "how to handle 3DS": a question the documentation
/// answers.
fn asks_how_to(query: &str) -> bool {
    let lower = query.to_lowercase();
    [
        "how do i ",
        "how to ",
        "how can i ",
        "how should i ",
        "how do we ",
    ]
    .iter()
    .any(|q| lower.starts_with(q) || lower.contains(&format!(" {q}")))
}

/// The terms one whitespace-separated part of a request adds (see [`query_terms`]).
fn push_part_terms(parts: &[&str], at: usize, out: &mut Vec<(String, f32)>) {
    let part = &parts[at];
    {
        // "file an issue", "log a bug": a noun used as the verb names no object.
        let next = parts.get(at + 1).map(|n| n.to_lowercase());
        if is_verb_use(&part.to_lowercase(), next.as_deref()) {
            return;
        }
        if let Some(meant) = phrasal_verb(parts, at) {
            out.extend(meant.iter().map(|w| (stem(w), 1.0)));
            return;
        }
        if let Some(kinds) = reference_kinds(part) {
            out.extend(kinds.iter().copied().map(|(k, w)| (stem(k), w)));
            return;
        }
        // "close 77", "merge 1234", "acme/web 219": a bare number right after a verb or a
        // repository is an issue or a pull request.
        let previous = at.checked_sub(1).map(|p| stem(&parts[p].to_lowercase()));
        if part.len() <= 6
            && part.chars().all(|c| c.is_ascii_digit())
            && (previous.is_some_and(|p| actions_of(&p) != Actions::default())
                || at
                    .checked_sub(1)
                    .is_some_and(|p| is_repository_name(parts[p])))
        {
            out.extend([("issue", 0.5), ("pull", 0.5)].map(|(k, w)| (stem(k), w)));
            return;
        }
        let part = part.trim_matches(|c: char| {
            matches!(c, ',' | ';' | ':' | '?' | '!' | '(' | ')' | '"' | '\'')
        });
        if let Some(kinds) = service_url(part) {
            out.extend(kinds.iter().map(|k| (stem(k), 1.0)));
            return;
        }
        let kinds: &[&str] = if part.contains("://") || part.starts_with("www.") {
            &["url", "web"]
        } else if part.contains('@') && part.contains('.') && !part.starts_with('@') {
            &["email"]
        } else if part.starts_with('@') && part.len() > 1 {
            &["user"]
        } else if part.starts_with('#')
            && part.len() > 1
            && !part[1..].chars().all(|c| c.is_ascii_digit())
        {
            &["channel"]
        } else if is_issue_key(part) {
            &["issue"]
        } else if is_commit_hash(part) {
            &["commit", "sha"]
        } else {
            if is_repository_name(part) {
                // `octocat/hello-world` is more often a repository than a folder, and its
                // words name somebody's project, not what a tool does.
                out.push((stem("repo"), 0.5));
                out.push((stem("repository"), 0.5));
                return;
            } else if is_path(part) {
                out.push((stem("file"), 0.5));
                out.push((stem("path"), 0.5));
                if is_directory(part) {
                    out.push((stem("directory"), 0.25));
                }
                let mut words = Vec::new();
                push_terms(part, &mut words);
                out.extend(words.into_iter().map(|w| (w, PATH_WORD_WEIGHT)));
                return;
            }
            let mut words = Vec::new();
            push_terms(part, &mut words);
            out.extend(words.into_iter().map(|w| (w, 1.0)));
            return;
        };
        out.extend(kinds.iter().map(|k| (stem(k), 1.0)));
    }
}

/// What a reference that people paste into requests stands for, with the weight of each kind
/// word: `acme/api#311` and `#311` are an issue or a pull request (GitHub numbers both alike),
/// `!87` is a GitLab merge request, `*.sqlite` a file name pattern, Slack's ids a user,
/// a channel or a message, Stripe's ids (`cus_…`, `sub_…`) the object their prefix names.
fn reference_kinds(part: &str) -> Option<&'static [(&'static str, f32)]> {
    if let Some(name) = part.strip_prefix(':').and_then(|p| p.strip_suffix(':'))
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
    {
        return Some(&[("emoji", 1.0), ("reaction", 1.0)]);
    }
    let part = part
        .trim_start_matches(['(', '"', '\''])
        .trim_end_matches([',', ';', ':', '?', '!', ')', '.', '"', '\'']);
    if is_clock_time(part) {
        return Some(&[("time", 1.0)]);
    }
    const ISSUE_OR_PR: &[(&str, f32)] = &[("issue", 0.5), ("pull", 0.5), ("repo", 0.25)];
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some((repo, number)) = part.split_once('#')
        && digits(number)
        && (repo.is_empty() || is_repository_name(repo))
    {
        return Some(ISSUE_OR_PR);
    }
    if let Some(number) = part.strip_prefix('!')
        && digits(number)
    {
        return Some(&[("merge", 1.0), ("request", 1.0)]);
    }
    if part.contains('*') && part.chars().any(char::is_alphanumeric) {
        return Some(&[("file", 0.5), ("pattern", 0.5), ("search", 0.5)]);
    }
    if let Some(kind) = slack_id(part) {
        return Some(kind);
    }
    stripe_id(part)
}

/// What a link to a known service shows: `github.com/acme/api/pull/1290` is a GitHub pull
/// request, not a web page to fetch; `acme.atlassian.net/browse/PROJ-1` a Jira issue. The
/// service's name and the object's kind, or `None` for any other link.
fn service_url(part: &str) -> Option<Vec<&'static str>> {
    let rest = part.split_once("://").map_or(part, |(_, rest)| rest);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_ascii_lowercase();
    if !part.contains("://") && !part.starts_with("www.") && !host.contains('.') {
        return None;
    }
    let segments: Vec<&str> = path
        .split(['/', '?', '#'])
        .filter(|s| !s.is_empty())
        .collect();
    let has = |s: &str| segments.contains(&s);
    let mut out: Vec<&'static str> = Vec::new();
    if host == "github.com" || host == "gitlab.com" {
        out.push(if host == "github.com" {
            "github"
        } else {
            "gitlab"
        });
        if has("pull") || has("pulls") {
            out.extend(["pull", "request"]);
        } else if has("merge_requests") {
            out.extend(["merge", "request"]);
        } else if has("issues") {
            out.push("issue");
        } else if has("commit") || has("commits") {
            out.push("commit");
        } else if has("actions") || has("runs") || has("pipelines") || has("jobs") {
            out.extend(["workflow", "run", "job"]);
        } else if has("blob") || has("tree") {
            out.push("file");
        } else if has("releases") {
            out.push("release");
        } else if segments.len() <= 2 {
            out.push("repository");
        }
    } else if host == "linear.app" {
        out.push("linear");
        out.push(if has("project") { "project" } else { "issue" });
    } else if host.ends_with(".atlassian.net") {
        out.push(if has("wiki") { "confluence" } else { "jira" });
        out.push(if has("wiki") { "page" } else { "issue" });
    } else if host.ends_with("notion.so") || host.ends_with("notion.site") {
        out.extend(["notion", "page"]);
    } else if host.ends_with("sentry.io") {
        out.extend(["sentry", "issue"]);
    } else if host.ends_with("slack.com") {
        out.extend(["slack", "message"]);
    } else if host == "docs.google.com" || host == "drive.google.com" {
        out.extend(["drive", "file"]);
    } else {
        return None;
    }
    Some(out)
}

/// `3pm`, `9:30am`, `15:00`: a time of day.
fn is_clock_time(part: &str) -> bool {
    let lower = part.to_ascii_lowercase();
    let (clock, meridiem) = match lower
        .strip_suffix("am")
        .or_else(|| lower.strip_suffix("pm"))
    {
        Some(clock) => (clock, true),
        None => (lower.as_str(), false),
    };
    let (hours, minutes) = match clock.split_once(':') {
        Some((h, m)) => (h, Some(m)),
        None => (clock, None),
    };
    let number = |s: &str, max: u32| {
        (1..=2).contains(&s.len())
            && s.chars().all(|c| c.is_ascii_digit())
            && s.parse::<u32>().is_ok_and(|n| n <= max)
    };
    number(hours, if meridiem { 12 } else { 23 })
        && match minutes {
            Some(m) => m.len() == 2 && number(m, 59),
            None => meridiem,
        }
}

/// `U04ABCD12` (a user), `C01ABC234` (a channel), `1733398811.004500` (a message's time
/// stamp): the ids Slack shows.
fn slack_id(part: &str) -> Option<&'static [(&'static str, f32)]> {
    if let Some((seconds, micros)) = part.split_once('.')
        && seconds.len() == 10
        && micros.len() == 6
        && seconds
            .chars()
            .chain(micros.chars())
            .all(|c| c.is_ascii_digit())
    {
        return Some(&[("message", 1.0)]);
    }
    let mut chars = part.chars();
    let first = chars.next()?;
    let rest: Vec<char> = chars.collect();
    let id = (6..=12).contains(&rest.len())
        && rest
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && rest.iter().any(char::is_ascii_digit);
    match first {
        'U' | 'W' if id => Some(&[("user", 1.0)]),
        'C' | 'G' if id => Some(&[("channel", 1.0)]),
        _ => None,
    }
}

/// Stripe's object ids name their kind in the prefix (`cus_NffrFeUfNV2Hib`).
fn stripe_id(part: &str) -> Option<&'static [(&'static str, f32)]> {
    const PREFIXES: &[(&str, &[(&str, f32)])] = &[
        ("cus", &[("customer", 1.0)]),
        ("sub", &[("subscription", 1.0)]),
        ("pi", &[("payment", 1.0), ("intent", 1.0)]),
        ("in", &[("invoice", 1.0)]),
        ("ii", &[("invoice", 1.0), ("item", 1.0)]),
        ("price", &[("price", 1.0)]),
        ("prod", &[("product", 1.0)]),
        ("ch", &[("charge", 1.0), ("payment", 0.5)]),
        ("re", &[("refund", 1.0)]),
        ("po", &[("payout", 1.0)]),
        ("dp", &[("dispute", 1.0)]),
        ("du", &[("dispute", 1.0)]),
        ("plink", &[("payment", 1.0), ("link", 1.0)]),
        ("coupon", &[("coupon", 1.0)]),
        ("promo", &[("promotion", 1.0), ("code", 1.0)]),
    ];
    let (prefix, id) = part.split_once('_')?;
    if id.len() < 3 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    PREFIXES
        .iter()
        .find(|(p, _)| *p == prefix)
        .map(|(_, kinds)| *kinds)
}

/// Whether a path names a directory (`./frontend`, `~/work/`, `/var/log/myapp`), not a file
/// (`notes.md`, `.env.example`) or something relative that could be either (`src/app`).
fn is_directory(part: &str) -> bool {
    let rooted = part.starts_with(['/', '.', '~']) || part.ends_with('/');
    let last = part
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(part);
    let file = !part.ends_with('/')
        && (last.trim_start_matches('.').contains('.') || (last.starts_with('.') && last != ".."));
    rooted && !file
}

/// What a verb means when the words around it change it: "check out a branch" (or "check it
/// out") is git's checkout, not a look; "google the error" searches the web, where "google
/// maps" or "google sheets" names a product.
fn phrasal_verb(parts: &[&str], at: usize) -> Option<&'static [&'static str]> {
    let word = |i: usize| parts.get(i).map(|w| w.to_lowercase());
    match word(at)?.as_str() {
        "check"
            if word(at + 1).as_deref() == Some("out") || word(at + 2).as_deref() == Some("out") =>
        {
            Some(&["checkout"])
        }
        // "pull up issue 842" shows it; "spin up a database" creates one.
        "pull" if word(at + 1).as_deref() == Some("up") => Some(&[]),
        // "save this as notes.md" writes a file.
        "save" if (1..=3).any(|i| word(at + i).as_deref() == Some("as")) => {
            Some(&["write", "file"])
        }
        "spin" if word(at + 1).as_deref() == Some("up") => Some(&["create"]),
        // "drop a note on #311", "drop them a line": a short message, not a deletion.
        "drop"
            if matches!(
                word(at + 1).as_deref(),
                Some("a" | "an" | "them" | "him" | "her")
            ) =>
        {
            Some(&["add"])
        }
        "mouse" if word(at + 1).as_deref() == Some("over") => Some(&["hover"]),
        // Shell commands used as verbs, before a path: "cat /etc/hosts", "ls ./src".
        "cat" | "less" | "head" | "tail"
            if parts
                .get(at + 1)
                .is_some_and(|p| is_path(p) && !is_repository_name(p)) =>
        {
            Some(&["read", "file"])
        }
        "ls" if parts.get(at + 1).is_none_or(|p| is_path(p)) => Some(&["list", "directory"]),
        "mkdir" => Some(&["create", "directory"]),
        // "what did people say on DES-77", "what have ppl been saying": the comments.
        "say" | "saying" | "said"
            if (1..=3).any(|back| {
                at.checked_sub(back).and_then(word).is_some_and(|w| {
                    matches!(
                        w.as_str(),
                        "people"
                            | "ppl"
                            | "folks"
                            | "everyone"
                            | "they"
                            | "others"
                            | "reviewers"
                            | "anyone"
                            | "someone"
                            | "somebody"
                            | "team"
                    )
                })
            }) =>
        {
            Some(&["comment"])
        }
        // "my local checkout", "the local repo": the git repository on this machine.
        "local"
            if matches!(
                word(at + 1).as_deref(),
                Some("checkout" | "clone" | "copy" | "repo" | "repository" | "branch" | "branches")
            ) =>
        {
            Some(&["git"])
        }
        "checkout" | "clone" if word(at.wrapping_sub(1)).as_deref() == Some("local") => {
            Some(&["repository"])
        }
        // "sign off on the PR" approves it.
        "sign" if word(at + 1).as_deref() == Some("off") => Some(&["approve"]),
        // "blocked by PROJ-12" is a link between two issues.
        "blocked" if word(at + 1).as_deref() == Some("by") => Some(&["link"]),
        "google" => {
            const PRODUCTS: &[&str] = &[
                "maps", "map", "drive", "sheet", "sheets", "doc", "docs", "calendar", "cloud",
            ];
            let product = word(at + 1).is_some_and(|n| PRODUCTS.contains(&n.as_str()));
            (!product).then_some(&["web", "search"][..])
        }
        _ => None,
    }
}

/// What the words of a path count: they name the person's files (`~/code/api`,
/// `config/prod.env`), and only sometimes what a tool does (`README.md`).
const PATH_WORD_WEIGHT: f32 = 0.3;

/// `abc123`, a full SHA: 6 to 40 hex digits with at least one digit and one letter (people
/// shorten hashes to six as often as to git's seven).
fn is_commit_hash(part: &str) -> bool {
    (6..=40).contains(&part.len())
        && part
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && part.chars().any(|c| c.is_ascii_digit())
        && part.chars().any(|c| c.is_ascii_alphabetic())
}

/// `PROJ-123`, `ENG-7`, `PROJECT-1Z43`: a tracker's issue key.
fn is_issue_key(part: &str) -> bool {
    let Some((key, number)) = part.split_once('-') else {
        return false;
    };
    key.len() >= 2
        && key.chars().all(|c| c.is_ascii_uppercase())
        && number.chars().next().is_some_and(|c| c.is_ascii_digit())
        && number.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `owner/name` (GitHub, GitLab): one slash between two names, no file extension.
fn is_repository_name(part: &str) -> bool {
    let Some((owner, name)) = part.split_once('/') else {
        return false;
    };
    let named = |s: &str| {
        !s.is_empty()
            && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    };
    named(owner) && named(name)
}

/// `src/main.rs`, `./app`, `notes.md`, `build/output`: a file or directory path.
fn is_path(part: &str) -> bool {
    if part.contains('/') || part.contains('\\') {
        return true;
    }
    match part.rsplit_once('.') {
        Some((stem, ext)) => {
            (!stem.is_empty() || part.starts_with('.'))
                && (1..=4).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// Groups of words that people use for the same action or object. A query term also matches
/// the other members of its groups, at a discount (see `SYNONYM_WEIGHT` in the index). The
/// groups are about how people phrase requests to tools in general (verbs of CRUD and
/// browsing, common object names), not about any particular tool set.
#[rustfmt::skip]
const SYNONYM_GROUPS: &[&[&str]] = &[
    // Reading one thing.
    &["get", "fetch", "read", "retrieve", "show", "view", "open", "see", "display", "detail", "info", "inspect", "describe", "look", "check", "load", "content", "rundown"],
    // Enumerating.
    &["list", "show", "enumerate", "browse", "overview"],
    // Searching.
    &["search", "find", "query", "lookup", "look", "locate", "filter", "grep", "match", "where", "discover"],
    // Creating.
    &["create", "add", "new", "make", "open", "start", "insert", "raise", "register", "draft", "generate", "cut"],
    // Deleting.
    &["delete", "remove", "drop", "destroy", "erase", "purge", "trash", "rm", "forget", "clear", "unlink", "wipe", "discard"],
    // Changing.
    &["update", "edit", "modify", "change", "set", "rename", "patch", "alter", "replace", "adjust", "tweak", "fix", "move", "assign", "transition"],
    // Running.
    &["run", "execute", "exec", "invoke", "trigger", "launch", "call", "evaluate", "eval", "perform"],
    // Telling people.
    &["send", "post", "message", "notify", "reply", "dm", "ping", "tell", "announce", "share", "say"],
    &["comment", "reply", "note", "remark", "respond", "feedback", "review", "said", "discussion"],
    &["close", "resolve", "stop", "finish", "complete", "done", "mark", "archive", "cancel", "end"],
    &["merge", "combine", "land", "integrate"],
    &["download", "save", "export", "pull"],
    &["upload", "push", "publish", "deploy"],
    &["screenshot", "capture", "snapshot", "image", "picture", "screen", "png"],
    &["click", "press", "tap", "select", "choose", "hit"],
    &["navigate", "goto", "go", "visit", "browse", "url", "load", "open"],
    &["type", "fill", "enter", "input", "form", "key"],
    // Objects.
    &["issue", "ticket", "bug", "task", "problem", "card", "story", "todo"],
    &["pr", "pull", "request", "mr", "merge", "changeset", "patch"],
    &["repo", "repository", "project", "codebase"],
    &["file", "document", "doc", "content", "readme", "config"],
    &["folder", "directory", "dir", "tree"],
    &["user", "member", "person", "people", "ppl", "teammate", "assignee", "account", "profile", "colleague", "who", "handle", "username"],
    &["channel", "room", "conversation", "chat", "thread"],
    &["message", "msg", "chat", "post", "text"],
    &["error", "exception", "crash", "failure", "bug", "incident"],
    &["customer", "client", "buyer", "payer", "shopper"],
    &["payment", "charge", "transaction", "pay", "paid", "money", "intent"],
    &["refund", "reimburse", "return"],
    &["dispute", "chargeback", "contest"],
    &["invoice", "bill", "billing", "receipt"],
    &["subscription", "plan", "recurring", "renewal", "membership"],
    &["price", "pricing", "cost", "amount", "product"],
    &["time", "clock", "timezone", "tz", "hour", "date", "now", "current"],
    &["convert", "translate", "transform", "conversion"],
    &["database", "db", "sql", "table", "query", "row", "record", "schema", "column", "entry"],
    &["page", "webpage", "url", "website", "site", "link", "web", "html", "internet", "online", "news"],
    &["memory", "remember", "knowledge", "entity", "graph", "fact", "recall", "observation", "relation", "memorize", "forget"],
    &["diff", "difference", "change", "compare", "modification", "changeset"],
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
    &["wiki", "page", "confluence", "doc", "documentation", "article", "space"],
    &["sprint", "cycle", "iteration", "milestone"],
    &["release", "version", "tag", "live", "shipped"],
    &["workflow", "action", "pipeline", "ci", "job", "build"],
    &["secret", "credential", "token", "key", "password"],
    &["star", "favorite", "bookmark"],
    &["notification", "alert", "inbox", "mention", "attention"],
    &["route", "direction", "distance", "travel", "drive", "transit", "train", "commute", "walking"],
    &["place", "location", "address", "map", "geocode", "nearby", "near", "somewhere", "shop", "coordinate", "latitude", "longitude", "lat", "lng", "restaurant", "cafe", "food"],
    &["reaction", "emoji", "react"],
    &["balance", "fund", "money", "available", "payout", "afford"],
    &["worklog", "timesheet", "hour", "minute", "spent", "track"],
    &["network", "request", "call", "api", "traffic", "http"],
    &["block", "paragraph", "section", "content"],
    &["link", "relate", "duplicate", "dupe", "connect", "associate"],
    &["dialog", "popup", "pop", "alert", "modal", "prompt", "confirm"],
    &["count", "many", "number", "total", "statistic", "aggregate", "metric"],
    // General software vocabulary (issue 16 item 2): common verbs and nouns of developer
    // tools and their everyday equivalents, not drawn from any task set.
    &["hierarchy", "structure", "tree", "subfolder"],
    &["reject", "decline", "deny"],
    &["assign", "assignee", "owner", "responsible", "plate"],
    &["due", "deadline"],
    &["priority", "urgent", "severity"],
    &["restart", "reboot", "rerun", "retry"],
    &["credential", "login", "auth", "authentication"],
    &["logout", "signout"],
    &["permission", "access", "role"],
    &["upgrade", "bump"],
    &["stats", "analytics", "metric", "usage"],
    &["trace", "span", "latency", "performance"],
    &["crash", "panic", "stacktrace", "traceback"],
    &["monitor", "observe", "observability", "watch"],
    &["cache", "memoize"],
    &["query", "sql", "select"],
    &["schedule", "cron", "timer"],
    &["archive", "backup", "snapshot"],
    &["rename", "relabel", "retitle"],
    &["approve", "review", "lgtm", "accept"],
    &["undo", "revert", "reset", "unstage", "rollback"],
    &["summary", "summarize", "overview", "digest"],
    &["description", "body", "summary"],
    &["owner", "author", "creator"],
    &["import", "ingest", "load"],
    &["scroll", "swipe"],
    &["drag", "drop"],
    &["resize", "dimension", "width", "height", "viewport"],
    &["keyboard", "keystroke", "key", "escape", "esc", "hotkey", "shortcut"],
    &["accessibility", "a11y"],
    &["dependency", "package", "dependabot", "npm"],
    &["postgres", "postgresql", "pg", "psql"],
    &["sub", "child", "children", "subtask", "nest"],
    &["vulnerability", "vulnerable", "cve", "advisory", "security"],
    &["append", "tack", "attach"],
    &["status", "uncommitted", "dirty", "green", "passing"],
    &["hover", "mouseover"],
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

/// A set of [`Action`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Actions(u8);

impl Actions {
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

/// The actions a word (already stemmed) names. Some words name two ("open" a ticket or a
/// file, "show" one thing or all of them).
#[rustfmt::skip]
pub fn actions_of(stem_: &str) -> Actions {
    use Action::*;
    const TABLE: &[(&str, &[Action])] = &[
        ("create", &[Create]), ("add", &[Create]), ("new", &[Create]), ("make", &[Create]),
        ("insert", &[Create]), ("raise", &[Create]), ("register", &[Create]), ("draft", &[Create]),
        ("generate", &[Create]), ("start", &[Create, Run]), ("open", &[Create, Read]), ("cut", &[Create]),
        ("get", &[Read]), ("fetch", &[Read]), ("read", &[Read]), ("retrieve", &[Read]),
        ("show", &[Read, List]), ("view", &[Read]), ("see", &[Read]), ("display", &[Read]),
        ("look", &[Read, Search]), ("check", &[Read]), ("describe", &[Read]), ("inspect", &[Read]),
        ("download", &[Read]), ("grab", &[Read]), ("load", &[Read]),
        ("list", &[List]), ("enumerate", &[List]), ("browse", &[List]), ("all", &[List]),
        ("search", &[Search]), ("find", &[Search]), ("query", &[Search]), ("lookup", &[Search]),
        ("locate", &[Search]), ("where", &[Search]), ("filter", &[Search]), ("grep", &[Search]),
        ("update", &[Update]), ("edit", &[Update]), ("modify", &[Update]), ("change", &[Update]),
        ("set", &[Update]), ("rename", &[Update]), ("move", &[Update]), ("patch", &[Update]),
        ("fix", &[Update]), ("assign", &[Update]), ("mark", &[Update]), ("transition", &[Update]),
        ("close", &[Update]), ("resolve", &[Update]), ("cancel", &[Update, Delete]),
        ("delete", &[Delete]), ("remove", &[Delete]), ("drop", &[Delete]), ("destroy", &[Delete]),
        ("erase", &[Delete]), ("forget", &[Delete]), ("clear", &[Delete]), ("purge", &[Delete]),
        ("trash", &[Delete]), ("wipe", &[Delete]), ("discard", &[Delete]),
        ("run", &[Run]), ("execute", &[Run]), ("exec", &[Run]), ("trigger", &[Run]),
        ("kick", &[Run]), ("launch", &[Run]), ("invoke", &[Run]), ("evaluate", &[Run]),
        ("rerun", &[Run]), ("retry", &[Run]),
        ("send", &[Send]), ("post", &[Send, Create]), ("message", &[Send]), ("notify", &[Send]),
        ("tell", &[Send]), ("reply", &[Send]), ("comment", &[Send]), ("announce", &[Send]),
    ];
    static STEMMED: LazyLock<HashMap<String, Actions>> = LazyLock::new(|| {
        TABLE
            .iter()
            .map(|(word, actions)| {
                let mut set = Actions::default();
                for &a in *actions {
                    set.insert(a);
                }
                (stem(word), set)
            })
            .collect()
    });
    STEMMED.get(stem_).copied().unwrap_or_default()
}

/// Verbs that begin a step of a developer's task but name no action class the ranking
/// compares: version control, publishing, telling, copying.
const STEP_VERBS: &[&str] = &[
    "write",
    "save",
    "commit",
    "stage",
    "unstage",
    "tag",
    "label",
    "publish",
    "put",
    "ping",
    "copy",
    "upload",
    "push",
    "merge",
    "checkout",
    "diff",
    "summarize",
    "count",
    "archive",
    "attach",
    "link",
    "share",
    "star",
    "paste",
    "store",
    "remember",
    "email",
    "mail",
    "deploy",
    "install",
    "review",
    "approve",
    "react",
    "schedule",
    "invite",
    "clone",
    "fork",
    "revert",
    "reset",
    "rebase",
    "pull",
    "export",
    "import",
    "screenshot",
    "click",
    "navigate",
    "visit",
    "fill",
    "type",
    "upgrade",
    "bump",
    "restart",
    "compare",
];

static STEP_VERB_STEMS: LazyLock<Vec<String>> =
    LazyLock::new(|| STEP_VERBS.iter().map(|v| stem(v)).collect());

/// The verb a request or a step of one starts with (stemmed), after words that only lead up
/// to one ("please", "also", "I"): what people put first is what they want done.
pub fn lead_verb(text: &str) -> Option<String> {
    const LEAD_IN: &[&str] = &[
        "please", "also", "then", "just", "can", "could", "you", "i", "we",
    ];
    let first = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .find(|w| !w.is_empty() && !LEAD_IN.contains(&w.as_str()))?;
    let stemmed = stem(&first);
    let verb = actions_of(&stemmed) != Actions::default() || STEP_VERB_STEMS.contains(&stemmed);
    verb.then_some(stemmed)
}

/// Nouns that people also use as the verb of a request ("file an issue", "log a bug",
/// "record a decision", "note that …"): followed by an article or "that", they are verbs
/// of creating and name no object.
const NOUN_VERBS: &[&str] = &["file", "log", "record", "note", "ticket"];

fn is_verb_use(word: &str, next: Option<&str>) -> bool {
    NOUN_VERBS.contains(&word) && matches!(next, Some("a" | "an" | "that" | "new"))
}

/// Words that, right before "open", make it an adjective ("the open bugs", "all open
/// PRs", "still open").
const OPEN_AS_STATE: &[&str] = &[
    "the",
    "all",
    "any",
    "my",
    "our",
    "still",
    "currently",
    "are",
    "is",
];

/// The actions a request asks for. Mostly the actions of its words ([`actions_of`]), with
/// three readings that depend on the neighbouring word, because the same word names
/// different actions: "open a ticket" creates, "open the file" reads, "the open bugs" are
/// a state (and, being plural, a list); "file an issue" creates; a plural object after a
/// reading verb ("show me the failing builds") lists.
pub fn wanted_actions(query: &str) -> Actions {
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
            } else if prev.is_some_and(|p| OPEN_AS_STATE.contains(&p)) || plural_next {
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
                .is_some_and(|p| SET_QUESTIONS.contains(&lower[p].to_lowercase().as_str()))
        });
        if actions.intersects(Actions(Action::Read as u8)) {
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

/// Words that ask about a set of things ("which PRs", "any open bugs", "every ticket").
const SET_QUESTIONS: &[&str] = &["what", "which", "any", "every", "all"];

/// A plural noun by its ending ("bugs", "issues", "branches"), not "status" or "this".
fn is_plural(word: &str) -> bool {
    word.len() >= 3
        && word.is_ascii()
        && stem(word) != word
        && word.ends_with('s')
        && !is_stop_word(word)
}
