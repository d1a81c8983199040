//! A request's terms: each whitespace-separated part read for what it stands for (a
//! reference pasted as an example, a verb whose neighbours change it, a quotation of what a
//! tool is to write), with the weight it counts.

use super::actions::{actions_of, is_verb_use};
use super::references::{
    is_commit_hash, is_directory, is_issue_key, is_path, is_repository_name, reference_kinds,
    service_url,
};
use super::vocabulary::{Action, Actions, VOCABULARY};
use super::{push_terms, stem};

/// The actions whose request may carry the text to write after a colon.
const WRITING: Actions = Actions::of(&[Action::Create, Action::Send, Action::Update]);

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
    VOCABULARY
        .requests
        .how_to
        .iter()
        .any(|q| lower.starts_with(q.as_str()) || lower.contains(&format!(" {q}")))
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
            out.extend(kinds.iter().map(|(k, w)| (stem(k), *w)));
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

/// What a verb means when the words around it change it: "check out a branch" (or "check it
/// out") is git's checkout, not a look; "google the error" searches the web, where "google
/// maps" or "google sheets" names a product.
fn phrasal_verb(parts: &[&str], at: usize) -> Option<&'static [&'static str]> {
    let requests = &VOCABULARY.requests;
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
                at.checked_sub(back)
                    .and_then(word)
                    .is_some_and(|w| requests.say_subjects.contains(&w))
            }) =>
        {
            Some(&["comment"])
        }
        // "my local checkout", "the local repo": the git repository on this machine.
        "local" if word(at + 1).is_some_and(|next| requests.local_objects.contains(&next)) => {
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
            let product = word(at + 1).is_some_and(|n| requests.google_products.contains(&n));
            (!product).then_some(&["web", "search"][..])
        }
        _ => None,
    }
}

/// What the words of a path count: they name the person's files (`~/code/api`,
/// `config/prod.env`), and only sometimes what a tool does (`README.md`).
const PATH_WORD_WEIGHT: f32 = 0.3;
