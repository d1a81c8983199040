//! What the references people paste into requests stand for ("fetch https://…", "move
//! PROJ-12", "look at cus_NffrFeUfNV2Hib"): the shapes are recognised here, the kind words
//! they stand for (and vendors' id prefixes and known services) come from the vocabulary.

use super::vocabulary::VOCABULARY;

/// What a reference that people paste into requests stands for, with the weight of each kind
/// word: `acme/api#311` and `#311` are an issue or a pull request (GitHub numbers both alike),
/// `!87` is a GitLab merge request, `*.sqlite` a file name pattern, Slack's ids a user,
/// a channel or a message, Stripe's ids (`cus_…`, `sub_…`) the object their prefix names.
pub(super) fn reference_kinds(part: &str) -> Option<&'static [(String, f32)]> {
    let references = &VOCABULARY.references;
    if let Some(name) = part.strip_prefix(':').and_then(|p| p.strip_suffix(':'))
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
    {
        return Some(&references.emoji);
    }
    let part = part
        .trim_start_matches(['(', '"', '\''])
        .trim_end_matches([',', ';', ':', '?', '!', ')', '.', '"', '\'']);
    if is_clock_time(part) {
        return Some(&references.clock_time);
    }
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some((repo, number)) = part.split_once('#')
        && digits(number)
        && (repo.is_empty() || is_repository_name(repo))
    {
        return Some(&references.issue_or_pull);
    }
    if let Some(number) = part.strip_prefix('!')
        && digits(number)
    {
        return Some(&references.merge_request);
    }
    if part.contains('*') && part.chars().any(char::is_alphanumeric) {
        return Some(&references.file_pattern);
    }
    if let Some(kind) = slack_id(part) {
        return Some(kind);
    }
    stripe_id(part)
}

/// What a link to a known service shows: `github.com/acme/api/pull/1290` is a GitHub pull
/// request, not a web page to fetch; `acme.atlassian.net/browse/PROJ-1` a Jira issue. The
/// service's name and the object's kind, or `None` for any other link.
pub(super) fn service_url(part: &str) -> Option<Vec<&'static str>> {
    let rest = part.split_once("://").map_or(part, |(_, rest)| rest);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_ascii_lowercase();
    if !part.contains("://") && !part.starts_with("www.") && !host.contains('.') {
        return None;
    }
    let service = VOCABULARY.services.iter().find(|service| {
        service.hosts.contains(&host)
            || service
                .host_suffixes
                .iter()
                .any(|suffix| host.ends_with(suffix.as_str()))
    })?;
    let segments: Vec<&str> = path
        .split(['/', '?', '#'])
        .filter(|s| !s.is_empty())
        .collect();
    let rule = service.paths.iter().find(|rule| {
        rule.segments.iter().any(|s| segments.contains(&s.as_str()))
            || rule.max_segments.is_some_and(|most| segments.len() <= most)
    });
    let kind = rule.map_or(&service.otherwise, |rule| &rule.words);
    Some(
        service
            .words
            .iter()
            .chain(kind)
            .map(String::as_str)
            .collect(),
    )
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
fn slack_id(part: &str) -> Option<&'static [(String, f32)]> {
    let slack = &VOCABULARY.slack;
    if let Some((seconds, micros)) = part.split_once('.')
        && seconds.len() == 10
        && micros.len() == 6
        && seconds
            .chars()
            .chain(micros.chars())
            .all(|c| c.is_ascii_digit())
    {
        return Some(&slack.message);
    }
    let mut chars = part.chars();
    let first = chars.next()?;
    let rest: Vec<char> = chars.collect();
    let id = (6..=12).contains(&rest.len())
        && rest
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && rest.iter().any(char::is_ascii_digit);
    if !id {
        return None;
    }
    slack
        .letters
        .iter()
        .find(|(letter, _)| *letter == first)
        .map(|(_, kinds)| kinds.as_slice())
}

/// Stripe's object ids name their kind in the prefix (`cus_NffrFeUfNV2Hib`).
fn stripe_id(part: &str) -> Option<&'static [(String, f32)]> {
    let (prefix, id) = part.split_once('_')?;
    if id.len() < 3 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    VOCABULARY
        .stripe_prefixes
        .iter()
        .find(|(p, _)| p == prefix)
        .map(|(_, kinds)| kinds.as_slice())
}

/// Whether a path names a directory (`./frontend`, `~/work/`, `/var/log/myapp`), not a file
/// (`notes.md`, `.env.example`) or something relative that could be either (`src/app`).
pub(super) fn is_directory(part: &str) -> bool {
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

/// `abc123`, a full SHA: 6 to 40 hex digits with at least one digit and one letter (people
/// shorten hashes to six as often as to git's seven).
pub(super) fn is_commit_hash(part: &str) -> bool {
    (6..=40).contains(&part.len())
        && part
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && part.chars().any(|c| c.is_ascii_digit())
        && part.chars().any(|c| c.is_ascii_alphabetic())
}

/// `PROJ-123`, `ENG-7`, `PROJECT-1Z43`: a tracker's issue key.
pub(super) fn is_issue_key(part: &str) -> bool {
    let Some((key, number)) = part.split_once('-') else {
        return false;
    };
    key.len() >= 2
        && key.chars().all(|c| c.is_ascii_uppercase())
        && number.chars().next().is_some_and(|c| c.is_ascii_digit())
        && number.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `owner/name` (GitHub, GitLab): one slash between two names, no file extension.
pub(super) fn is_repository_name(part: &str) -> bool {
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
pub(super) fn is_path(part: &str) -> bool {
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
