use super::*;
use crate::pool::ToolClaims;
use serde_json::json;

fn tool(name: &str, description: &str, params: &[(&str, &str)]) -> McpToolInfo {
    let mut properties = serde_json::Map::new();
    for (p, d) in params {
        properties.insert(p.to_string(), json!({"type": "string", "description": d}));
    }
    McpToolInfo {
        name: name.to_string(),
        description: description.to_string(),
        input_schema: Arc::new(json!({"type": "object", "properties": properties})),
        claims: ToolClaims::default(),
    }
}

fn index() -> ToolIndex {
    let github = Arc::new(ServerTools::new(
        "github",
        vec![
            tool(
                "create_issue",
                "Create a new issue in a GitHub repository",
                &[
                    ("owner", "Repository owner"),
                    ("repo", "Repository name"),
                    ("title", "Issue title"),
                ],
            ),
            tool(
                "list_issues",
                "List issues in a GitHub repository with filtering options",
                &[("state", "Filter by state")],
            ),
            tool(
                "get_pull_request",
                "Get details of a specific pull request",
                &[("pull_number", "Pull request number")],
            ),
            tool(
                "search",
                "Search code across repositories",
                &[("q", "Search query")],
            ),
        ],
    ));
    let fs = Arc::new(ServerTools::new(
        "filesystem",
        vec![
            tool(
                "read_file",
                "Read the complete contents of a file from the file system.",
                &[("path", "")],
            ),
            tool(
                "listDirectory",
                "Get a detailed listing of all files and directories in a specified path.",
                &[("path", "")],
            ),
            tool(
                "search",
                "Recursively search for files and directories matching a pattern.",
                &[("pattern", "")],
            ),
        ],
    ));
    ToolIndex::new(&[github, fs])
}

fn top(index: &ToolIndex, query: &str, k: usize) -> Vec<String> {
    index
        .search(query, k)
        .into_iter()
        .map(|h| h.tool.name.clone())
        .collect()
}

#[test]
fn identifiers_split_into_words() {
    let mut out = Vec::new();
    words("listIssues get-file fs.read HTMLPage oauth2_token", |w| {
        out.push(w.to_string())
    });
    assert_eq!(
        out,
        [
            "list", "issues", "get", "file", "fs", "read", "html", "page", "oauth2", "token"
        ]
    );
}

#[test]
fn stems_meet_across_word_forms() {
    assert_eq!(stem("creating"), stem("create"));
    assert_eq!(stem("created"), stem("creates"));
    assert_eq!(stem("issues"), stem("issue"));
    assert_eq!(stem("directories"), stem("directory"));
    assert_eq!(stem("running"), "run");
    assert_eq!(stem("added"), "add");
}

#[test]
fn users_words_find_the_tool() {
    let index = index();
    assert_eq!(
        top(&index, "open a ticket about the login bug", 1),
        ["mcp__github__create_issue"]
    );
    assert_eq!(
        top(&index, "show me what's in the src folder", 1),
        ["mcp__filesystem__listDirectory"]
    );
    assert_eq!(
        top(&index, "look at PR 42", 1),
        ["mcp__github__get_pull_request"]
    );
}

#[test]
fn exact_names_come_first() {
    let index = index();
    assert_eq!(
        top(&index, "mcp__filesystem__search", 1),
        ["mcp__filesystem__search"]
    );
    let hits = index.search("github/search, read_file", 5);
    assert!(hits[0].exact && hits[1].exact && !hits.get(2).is_some_and(|h| h.exact));
    let mut names: Vec<&str> = hits[..2].iter().map(|h| h.tool.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["mcp__filesystem__read_file", "mcp__github__search"]);
    // A plain word is a query, not a name: both `search` tools rank, none is "exact".
    assert!(index.search("search", 5).iter().all(|h| !h.exact));
}

#[test]
fn results_are_deterministic_and_limited() {
    let index = index();
    let a = top(&index, "search files", 3);
    assert_eq!(a.len(), 3);
    for _ in 0..5 {
        assert_eq!(top(&index, "search files", 3), a);
        assert_eq!(
            top(&ToolIndex::new(&[]), "search files", 3),
            Vec::<String>::new()
        );
    }
    assert!(index.search("zzzz qqqq", 5).is_empty());
}

#[test]
fn summary_is_the_first_sentence() {
    assert_eq!(summary("Read a file. Handles encodings."), "Read a file.");
    let long = "word ".repeat(100);
    let s = summary(&long);
    assert!(s.ends_with('…') && s.chars().count() <= SUMMARY_LEN);
}

#[test]
fn the_neighbouring_word_decides_what_a_verb_asks_for() {
    use text::{Action, Actions, wanted_actions};
    let only = |actions: &[Action]| {
        let mut set = Actions::default();
        actions.iter().for_each(|a| set.insert(*a));
        set
    };
    assert_eq!(
        wanted_actions("open a ticket for the crash"),
        only(&[Action::Create])
    );
    assert_eq!(
        wanted_actions("open the config file"),
        only(&[Action::Read])
    );
    // A plural asked about as a set lists: "which PRs", "what gitlab projects".
    assert_eq!(
        wanted_actions("which PRs are still open"),
        only(&[Action::List])
    );
    assert_eq!(
        wanted_actions("open p1 bugs in acme/checkout"),
        only(&[Action::List])
    );
    assert_eq!(
        wanted_actions("what gitlab projects can I see"),
        only(&[Action::List, Action::Read])
    );
    assert_eq!(
        wanted_actions("show me the open bugs"),
        only(&[Action::Read, Action::List])
    );
    assert_eq!(
        wanted_actions("file an issue about it"),
        only(&[Action::Create])
    );
    assert_eq!(
        wanted_actions("get the failing builds"),
        only(&[Action::Read, Action::List])
    );
    // "file" as a noun stays a term; as a verb it is not one.
    let terms =
        |q: &str| -> Vec<String> { text::query_terms(q).into_iter().map(|(t, _)| t).collect() };
    assert!(terms("read the file").contains(&"file".to_string()));
    assert!(!terms("file an issue").contains(&"file".to_string()));
    // owner/name is a repository; a path with an extension a file.
    assert!(terms("star octocat/hello-world").contains(&"repo".to_string()));
    assert!(terms("open src/main.rs").contains(&"file".to_string()));
    // Six hex digits with a digit and a letter are a commit.
    assert!(terms("what did abc123 change").contains(&"commit".to_string()));
    // A repository's own words name somebody's project, not a tool ("web" would find web
    // search).
    assert_eq!(
        terms("the open PRs on acme/web"),
        ["open", "pr", "repo", "repository"]
    );
    // Phrasal verbs: git's checkout; "google" as a verb searches the web, before a product
    // it names one.
    assert_eq!(terms("check out the release branch")[0], "checkout");
    assert_eq!(terms("check it out")[0], "checkout");
    assert_eq!(
        terms("google cve-2025-1234"),
        ["web", "search", "cve", "2025", "1234"]
    );
    assert!(terms("google maps directions").contains(&text::stem("google")));
    // "pull up issue 842" reads it: no term of its own (git's `show`, a pull request).
    assert_eq!(terms("pull up issue 842"), ["issu", "842"]);
    assert!(wanted_actions("pull up issue 842").intersects(only(&[Action::Read])));
    // Quoted words are what a tool writes, not what it does.
    let weights = text::query_terms("commit it with message 'pager: handle the empty page'");
    let handle = weights
        .iter()
        .find(|(t, _)| t == "handl")
        .expect("quoted word");
    assert!(handle.1 < 0.5, "{weights:?}");
    let commit = weights
        .iter()
        .find(|(t, _)| t == "commit")
        .expect("the verb");
    assert_eq!(commit.1, 1.0);
    assert!(
        text::query_terms("what's in it's folder")
            .iter()
            .all(|(_, w)| *w == 1.0),
        "apostrophes inside words quote nothing"
    );
    // A how-to question is for the documentation.
    assert!(terms("how do I wire sentry into next.js").contains(&text::stem("documentation")));
    assert!(
        !terms("how does feature/parser differ from main").contains(&text::stem("documentation"))
    );
    // A bare number after a verb is an issue or a pull request.
    assert!(terms("close 77 in acme/cli").contains(&text::stem("issue")));
    assert!(!terms("top 10 orders").contains(&text::stem("issue")));
    // A path's own words count less than the request's.
    let weights = text::query_terms("last commits in ~/code/api");
    let api = weights
        .iter()
        .find(|(t, _)| t == "api")
        .expect("the path's word");
    assert!(api.1 < 0.5, "{weights:?}");
    // A past participle describes the object: "created" asks for no creation.
    assert_eq!(
        wanted_actions("find the bugs created this week"),
        only(&[Action::Search])
    );
}

/// What people paste into a request stands for its kind: an issue or PR number, a merge
/// request, a file pattern, a directory, an emoji, a time of day, Slack's and Stripe's ids.
#[test]
fn pasted_references_stand_for_their_kind() {
    let terms =
        |q: &str| -> Vec<String> { text::query_terms(q).into_iter().map(|(t, _)| t).collect() };
    let has = |q: &str, kind: &str| terms(q).contains(&text::stem(kind));
    assert!(has("drop a note on acme/api#311", "issue"));
    assert!(has("drop a note on acme/api#311", "pull"));
    assert!(!has("drop a note on acme/api#311", "file"), "not a path");
    assert!(has("what is #482 about", "issue"));
    assert!(has("give me the rundown on !87", "merge"));
    assert!(has("hunt down any *.sqlite files", "pattern"));
    assert!(has("what's in /var/log/myapp", "directory"));
    assert!(!has("show me src/main.rs", "directory"));
    assert!(
        !has("show me ~/api/.env.example", "directory"),
        "a dotfile is a file"
    );
    assert!(
        !has("read https://docs.rs/serde/", "directory"),
        "a URL is a page"
    );
    assert!(has("slap a :white_check_mark: on it", "reaction"));
    assert!(has("if it's 3pm in new york", "time"));
    assert!(has("move the call to 15:30", "time"));
    assert!(!has("version 3.12 is out", "time"));
    assert!(has("what timezone is U04ABCD8 in", "user"));
    assert!(has("react to 1733398811.004500", "message"));
    assert!(has("move sub_1Mz9xQ to the annual price", "subscription"));
    assert!(has("refund cus_NffrFeUfNV2Hib", "customer"));
    assert!(
        !has("open my_notes", "customer"),
        "a prefix Stripe does not use"
    );
    // A link to a known service is its object there, not a page to fetch.
    let pr = terms("https://github.com/acme/api/pull/1290 still a draft?");
    assert!(
        pr.contains(&text::stem("github")) && pr.contains(&text::stem("pull")),
        "{pr:?}"
    );
    assert!(!pr.contains(&text::stem("url")), "{pr:?}");
    assert!(has("see https://acme.atlassian.net/browse/PROJ-7", "jira"));
    assert!(
        has("what does https://blog.example.dev/posts/x say", "url"),
        "any other link"
    );
    // Shell commands before a path are verbs; a cat elsewhere is a cat.
    assert_eq!(
        terms("cat /etc/nginx/sites-enabled/default")[..2],
        ["read", "file"]
    );
    assert_eq!(terms("I love my cat"), ["love", "cat"]);
    // A number after a repository is an issue or a pull request.
    assert!(has("are checks green on acme/web 219", "pull"));
    // "my local checkout" is the git repository here, not a branch to check out.
    assert_eq!(
        terms("commits in my local checkout")[1..],
        ["git", "repository"]
    );
    // "what did people say" asks for the comments.
    assert!(has("what did people say on DES-77", "comment"));
    // The text after the colon of a request to create is the thing's text, and counts less.
    let weights = text::query_terms("file a bug on acme/web: login button dead on safari");
    let button = weights
        .iter()
        .find(|(t, _)| t == "button")
        .expect("payload word");
    assert!(button.1 < 0.5, "{weights:?}");
    let weights = text::query_terms("jira: everything assigned to me, by priority");
    assert!(weights.iter().all(|(_, w)| *w >= 1.0), "{weights:?}");
    // Phrasal verbs: a short note is added, not dropped; "sign off" approves.
    assert_eq!(terms("drop a note on it")[0], "add");
    assert_eq!(terms("sign off on the PR")[0], "approv");
    assert!(has("mark PROJ-2 as blocked by PROJ-1", "link"));
}

/// An acronym's plural is one word ("PRs" → prs → pr), not a letter and "rs".
#[test]
fn acronym_plurals_are_words() {
    let mut seen = Vec::new();
    text::words("open PRs and URLs", |w| seen.push(w.to_string()));
    assert_eq!(seen, ["open", "prs", "and", "urls"]);
    assert_eq!(text::stem("prs"), "pr");
    assert_eq!(text::stem("ids"), "id");
    assert_eq!(text::stem("has"), "has", "a word with a vowel stays");
    assert_eq!(
        text::stem("aés"),
        "aés",
        "not ASCII: left whole, never cut inside a letter"
    );
}

/// A word the index lacks still finds another form of itself ("modified" → modification):
/// without kin words the query matches nothing at all.
#[test]
fn unknown_word_matches_its_kin() {
    let fs = Arc::new(ServerTools::new(
        "filesystem",
        vec![
            tool(
                "get_file_info",
                "Retrieve metadata about a file: size, modification time, permissions",
                &[("path", "Path of the file")],
            ),
            tool("write_file", "Write text to a file", &[("path", "Path")]),
        ],
    ));
    let index = ToolIndex::new(&[fs]);
    let hits = index.search("when was it last modified", 5);
    assert_eq!(
        hits.first().map(|h| h.tool.raw_name.as_str()),
        Some("get_file_info"),
        "{hits:?}"
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
    // Short words have no kin by spelling: "wri" is not "write".
    assert!(index.search("wri", 5).is_empty());
}

/// A request naming a server prefers that server's tools over a rarer word of another's.
#[test]
fn named_server_scales_its_tools() {
    let git = Arc::new(ServerTools::new(
        "git",
        vec![
            tool(
                "git_log",
                "Shows the commit logs",
                &[("repo_path", "Path to Git repository")],
            ),
            tool(
                "git_status",
                "Shows the working tree status",
                &[("repo_path", "Path")],
            ),
        ],
    ));
    let slack = Arc::new(ServerTools::new(
        "slack",
        vec![
            tool(
                "slack_get_channel_history",
                "Get recent messages from a channel",
                &[
                    ("channel_id", "The ID of the channel"),
                    ("limit", "Number of messages"),
                ],
            ),
            tool(
                "slack_post_message",
                "Post a new message to a Slack channel",
                &[],
            ),
        ],
    ));
    let index = ToolIndex::new(&[slack, git]);
    let hits = index.search("show the recent local git history", 5);
    assert_eq!(
        hits.first().map(|h| h.tool.raw_name.as_str()),
        Some("git_log"),
        "{hits:?}"
    );
}

/// One typo in a longer word still finds the tool; the index never had the misspelling.
/// Words shorter than five letters are left alone (one letter off is often another word).
#[test]
fn typo_matches_the_word() {
    let index = index();
    for query in ["repositroy", "reposiory", "repossitory", "rapository"] {
        let hits = index.search(query, 5);
        assert!(
            hits.iter().any(|h| h.tool.raw_name == "create_issue"),
            "{query}: {hits:?}"
        );
    }
    assert!(index.search("isue", 5).is_empty());
    assert!(one_edit(&['a', 'b', 'c'], &['a', 'c', 'b']));
    assert!(!one_edit(&['a', 'b', 'c'], &['c', 'b', 'a']));
    assert!(one_edit(&['a', 'b', 'c'], &['a', 'b']));
    assert!(!one_edit(&['a', 'b'], &['a', 'b']));
}

fn maps_and_memory() -> ToolIndex {
    let maps = Arc::new(ServerTools::new(
        "google-maps",
        vec![
            tool(
                "maps_reverse_geocode",
                "Convert coordinates into an address",
                &[("latitude", "Latitude"), ("longitude", "Longitude")],
            ),
            tool(
                "maps_elevation",
                "Get elevation data for locations on the earth",
                &[("locations", "Array of locations to get elevation for")],
            ),
            tool(
                "maps_search_places",
                "Search for places using Google Places API",
                &[("query", "Search query")],
            ),
        ],
    ));
    let memory = Arc::new(ServerTools::new(
        "memory",
        vec![
            tool(
                "search_nodes",
                "Search for nodes in the knowledge graph based on a query",
                &[(
                    "query",
                    "The search query to match against entity names, types, and observation content",
                )],
            ),
            tool(
                "delete_entities",
                "Delete multiple entities and their associated relations from the knowledge graph",
                &[("entityNames", "An array of entity names to delete")],
            ),
        ],
    ));
    let slack = Arc::new(ServerTools::new(
        "slack",
        vec![tool(
            "slack_post_message",
            "Post a new message to a Slack channel",
            &[("channel_id", "The ID of the channel to post to")],
        )],
    ));
    ToolIndex::new(&[slack, maps, memory])
}

/// A request in other words than the tool's still finds it, by meaning: no word of "how high
/// above sea level" is in `maps_elevation`'s name or description.
#[test]
fn meaning_finds_tools_whose_words_differ() {
    let index = maps_and_memory();
    for (query, tool) in [
        ("how high above sea level is Denver", "maps_elevation"),
        ("forget everything about Bob", "delete_entities"),
    ] {
        let hits = index.search(query, 5);
        assert_eq!(
            hits.first().map(|h| h.tool.raw_name.as_str()),
            Some(tool),
            "{query}: {hits:?}"
        );
    }
    // "Remember" is what a memory server is for, though its tools never say the word.
    let hits = index.search("what do you remember about project Apollo", 5);
    assert!(
        hits.iter().take(2).all(|h| h.tool.server == "memory"),
        "{hits:?}"
    );
}

/// Meaning alone is a weak signal: a request that shares no word with any tool and means
/// nothing close to one finds nothing, rather than the least unrelated tool.
#[test]
fn meaning_alone_needs_a_close_match() {
    let index = maps_and_memory();
    for query in ["I love my cat", "play some jazz music", "asdf qwerty"] {
        let hits = index.search(query, 5);
        assert!(hits.is_empty(), "{query}: {hits:?}");
    }
}

fn found(index: &ToolIndex, query: &str, k: usize) -> (Vec<String>, Vec<String>) {
    let found = index.find(&SearchRequest::query(query), k);
    (
        found.hits.iter().map(|h| h.tool.name.clone()).collect(),
        found.siblings.iter().map(|t| t.name.clone()).collect(),
    )
}

#[test]
fn each_part_of_a_compound_request_keeps_its_best_match_near_the_top() {
    let index = index();
    let query = "look at PR 42 and then read the file src/main.rs";
    let (hits, _) = found(&index, query, 3);
    assert!(
        hits.contains(&"mcp__github__get_pull_request".to_string()),
        "{hits:?}"
    );
    assert!(
        hits.contains(&"mcp__filesystem__read_file".to_string()),
        "{hits:?}"
    );
    // Parts given by the model merge the same way; nothing is placed twice.
    let (given, _) = {
        let f = index.find(&SearchRequest::queries(["look at PR 42", "read a file"]), 5);
        let names: Vec<String> = f.hits.iter().map(|h| h.tool.name.clone()).collect();
        (names, ())
    };
    assert_eq!(
        given[..2],
        [
            "mcp__github__get_pull_request",
            "mcp__filesystem__read_file"
        ]
    );
    let mut unique = given.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), given.len(), "{given:?}");
}

#[test]
fn a_single_task_ranks_as_before() {
    let index = index();
    for query in ["open a ticket about the login bug", "search files"] {
        let (hits, _) = found(&index, query, 3);
        assert_eq!(hits, top(&index, query, 3), "{query}");
    }
}

#[test]
fn the_best_matchs_siblings_are_named_not_loaded() {
    let index = index();
    let (hits, siblings) = found(&index, "list the issues of the toolgate repo", 1);
    assert_eq!(hits, ["mcp__github__list_issues"]);
    assert_eq!(siblings, ["mcp__github__create_issue"]);
    // A sibling already among the hits is not named again.
    let (hits, siblings) = found(&index, "list the issues of the toolgate repo", 5);
    assert!(
        hits.contains(&"mcp__github__create_issue".to_string()),
        "{hits:?}"
    );
    assert!(siblings.is_empty(), "{siblings:?}");
}

#[test]
fn a_server_named_once_applies_to_every_part() {
    let gitlab = Arc::new(ServerTools::new(
        "gitlab",
        vec![
            tool(
                "create_issue",
                "Create a new issue in a GitLab project",
                &[],
            ),
            tool("get_pipeline", "Get details of a pipeline", &[]),
        ],
    ));
    let github = Arc::new(ServerTools::new(
        "github",
        vec![tool(
            "create_issue",
            "Create a new issue in a GitHub repository",
            &[],
        )],
    ));
    let index = ToolIndex::new(&[github, gitlab]);
    let (hits, _) = found(
        &index,
        "get the failing pipeline on gitlab and open an issue for it",
        2,
    );
    assert_eq!(
        hits,
        ["mcp__gitlab__get_pipeline", "mcp__gitlab__create_issue"]
    );
}

/// Requests in any script, with accents, emoji and odd punctuation, are ranked without a
/// panic (the text rules look at letters, never at byte positions inside one).
#[test]
fn requests_in_any_script_are_ranked_without_a_panic() {
    let fs = Arc::new(ServerTools::new(
        "filesystem",
        vec![tool(
            "write_file",
            "Write text to a file",
            &[("path", "Path")],
        )],
    ));
    let index = ToolIndex::new(&[fs]);
    for query in [
        "aés",
        "ñés PRs",
        "écris le fichier résumé.md",
        "Ünïcödé/ßtraße and then ✓ it",
        "файл и затем check it out",
        "ファイルを書く; google 東京",
        "🙂s and 🙂🙂 before é",
        "s",
        "",
        "ß/ß",
        "éé-12",
        "check",
        "pull",
        "before and then",
    ] {
        let found = index.find(&super::SearchRequest::query(query), 5);
        assert!(found.hits.len() <= 5, "{query}");
    }
}
