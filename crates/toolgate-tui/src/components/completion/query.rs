//! Completion in the composer, pure: what the word at the cursor asks for (`@server:uri`
//! over the connected servers' resources and templates, a template variable's value from
//! the server's `completion/complete`, `/mcp__server__prompt` over their prompts) and the
//! choices to show. [`super::assist`] keeps the result; the popup widget draws it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::components::commands::PROMPT_PREFIX;
use crate::ids::normalize;
use crate::protocol::{Catalog, CompletionTarget};

/// What the connected servers offer besides tools, by server name.
pub type Catalogs = BTreeMap<String, Arc<Catalog>>;

/// Most choices the popup lists.
pub const MAX_CHOICES: usize = 8;

/// One choice: what replaces the word, and how the popup shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub insert: String,
    pub label: String,
    pub detail: String,
}

/// A value the server has to suggest: a template variable or a prompt argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteQuery {
    pub server: String,
    pub target: CompletionTarget,
    pub argument: String,
    pub value: String,
    pub context: HashMap<String, String>,
    /// What comes before the value in the word (e.g. `@docs:docs://pages/`).
    pub before: String,
}

/// What the word at the cursor asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Choices known locally.
    Local(Vec<Choice>),
    /// Choices from the server (asked once per distinct query).
    Remote(RemoteQuery),
}

/// A URI template's parts (RFC 6570; operators such as `+` or `/` are dropped, which is
/// right for the simple `{name}` form servers use).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

fn template_parts(template: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(rest[..open].to_string()));
        }
        let Some(close) = rest[open..].find('}') else {
            parts.push(Part::Literal(rest[open..].to_string()));
            return parts;
        };
        let name =
            rest[open + 1..open + close].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        // `{a,b}` names two variables; the first is what completion asks about.
        let name = name.split(',').next().unwrap_or_default();
        parts.push(Part::Var(name.to_string()));
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_string()));
    }
    parts
}

/// The text of a template up to its first variable.
pub fn template_prefix(template: &str) -> String {
    match template_parts(template).first() {
        Some(Part::Literal(l)) => l.clone(),
        _ => String::new(),
    }
}

/// If `typed` (the URI after `server:`) is inside a variable of `template`: that variable,
/// the value typed so far, the values of the variables before it, and the text before
/// the value.
fn in_variable(
    template: &str,
    typed: &str,
) -> Option<(String, String, HashMap<String, String>, usize)> {
    let parts = template_parts(template);
    let mut pos = 0;
    let mut context = HashMap::new();
    for (i, part) in parts.iter().enumerate() {
        let rest = &typed[pos..];
        match part {
            Part::Literal(l) => {
                if rest.starts_with(l.as_str()) {
                    pos += l.len();
                } else {
                    return None;
                }
            }
            Part::Var(name) => {
                let next = parts[i + 1..].iter().find_map(|p| match p {
                    Part::Literal(l) => Some(l.as_str()),
                    Part::Var(_) => None,
                });
                match next.and_then(|l| rest.find(l)) {
                    Some(k) => {
                        context.insert(name.clone(), rest[..k].to_string());
                        pos += k;
                    }
                    None => return Some((name.clone(), rest.to_string(), context, pos)),
                }
            }
        }
    }
    None
}

fn matches(haystack: &str, needle: &str) -> bool {
    needle.is_empty() || haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// What an `@…` word asks for.
pub fn resource_query(word: &str, catalogs: &Catalogs) -> Option<Query> {
    let typed = word.strip_prefix('@')?;
    if let Some((server, uri)) = typed.split_once(':')
        && let Some(catalog) = catalogs.get(server)
        && catalog.completions
    {
        for template in &catalog.templates {
            if let Some((argument, value, context, at)) = in_variable(&template.uri_template, uri) {
                return Some(Query::Remote(RemoteQuery {
                    server: server.to_string(),
                    target: CompletionTarget::Template(template.uri_template.clone()),
                    argument,
                    value,
                    context,
                    before: format!("@{server}:{}", &uri[..at]),
                }));
            }
        }
    }
    let mut choices = Vec::new();
    for (server, catalog) in catalogs {
        for r in &catalog.resources {
            let full = format!("{server}:{}", r.uri);
            if matches(&full, typed) || matches(&r.name, typed) {
                choices.push(Choice {
                    insert: format!("@{full} "),
                    label: format!("@{full}"),
                    detail: r
                        .title
                        .clone()
                        .or_else(|| r.description.clone())
                        .unwrap_or_else(|| r.name.clone()),
                });
            }
        }
        for t in &catalog.templates {
            let full = format!("{server}:{}", t.uri_template);
            let prefix = format!("{server}:{}", template_prefix(&t.uri_template));
            if matches(&full, typed) || matches(&t.name, typed) || prefix.starts_with(typed) {
                choices.push(Choice {
                    insert: format!("@{prefix}"),
                    label: format!("@{full}"),
                    detail: format!(
                        "template: {}",
                        t.title
                            .clone()
                            .or_else(|| t.description.clone())
                            .unwrap_or_else(|| t.name.clone())
                    ),
                });
            }
        }
    }
    Some(Query::Local(choices))
}

/// The model-facing-style command name of a prompt: `mcp__{server}__{prompt}`.
pub fn prompt_command(server: &str, prompt: &str) -> String {
    format!(
        "{PROMPT_PREFIX}{}__{}",
        normalize(server),
        normalize(prompt)
    )
}

/// What a `/…` word at the start of the composer asks for: the prompts whose command
/// contains it.
pub fn prompt_query(word: &str, catalogs: &Catalogs) -> Option<Query> {
    let typed = word.strip_prefix('/')?;
    let mut choices = Vec::new();
    for (server, catalog) in catalogs {
        for p in &catalog.prompts {
            let command = prompt_command(server, &p.name);
            if matches(&command, typed) {
                let args: Vec<String> = p
                    .arguments
                    .iter()
                    .map(|a| {
                        if a.required {
                            format!("<{}>", a.name)
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect();
                choices.push(Choice {
                    insert: format!("/{command} "),
                    label: format!("/{command} {}", args.join(" "))
                        .trim_end()
                        .to_string(),
                    detail: p
                        .title
                        .clone()
                        .or_else(|| p.description.clone())
                        .unwrap_or_default(),
                });
            }
        }
    }
    (!choices.is_empty()).then_some(Query::Local(choices))
}

/// Choices from a server's answer to a remote query.
pub fn remote_choices(query: &RemoteQuery, values: &[String]) -> Vec<Choice> {
    values
        .iter()
        .map(|v| Choice {
            insert: format!("{}{v}", query.before),
            label: v.clone(),
            detail: format!("{} of {}", query.argument, query.server),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::catalog::{PromptArg, PromptEntry, ResourceEntry, TemplateEntry};

    fn catalogs() -> Catalogs {
        let catalog = Catalog {
            server: "fx".into(),
            has_resources: true,
            has_prompts: true,
            completions: true,
            resources: vec![ResourceEntry {
                uri: "fixture://readme".into(),
                name: "readme".into(),
                title: Some("Read me".into()),
                description: None,
                mime_type: Some("text/markdown".into()),
                size: None,
            }],
            templates: vec![TemplateEntry {
                uri_template: "fixture://pages/{name}/v{version}".into(),
                name: "page".into(),
                title: None,
                description: Some("A page".into()),
                mime_type: None,
            }],
            prompts: vec![PromptEntry {
                name: "review".into(),
                title: None,
                description: Some("Review code".into()),
                arguments: vec![
                    PromptArg {
                        name: "file".into(),
                        description: None,
                        required: true,
                    },
                    PromptArg {
                        name: "tone".into(),
                        description: None,
                        required: false,
                    },
                ],
            }],
            problems: vec![],
        };
        BTreeMap::from([("fx".to_string(), Arc::new(catalog))])
    }

    #[test]
    fn at_lists_resources_and_templates_that_match() {
        let Some(Query::Local(choices)) = resource_query("@read", &catalogs()) else {
            panic!("local choices")
        };
        assert_eq!(choices.len(), 1);
        assert_eq!(choices[0].insert, "@fx:fixture://readme ");
        let Some(Query::Local(choices)) = resource_query("@", &catalogs()) else {
            panic!("local choices")
        };
        assert_eq!(choices[1].insert, "@fx:fixture://pages/");
        assert_eq!(choices[1].label, "@fx:fixture://pages/{name}/v{version}");
    }

    #[test]
    fn inside_a_template_variable_the_server_is_asked() {
        let Some(Query::Remote(q)) = resource_query("@fx:fixture://pages/in", &catalogs()) else {
            panic!("remote")
        };
        assert_eq!(q.argument, "name");
        assert_eq!(q.value, "in");
        assert_eq!(q.before, "@fx:fixture://pages/");
        let Some(Query::Remote(q)) = resource_query("@fx:fixture://pages/intro/v2", &catalogs())
        else {
            panic!("remote")
        };
        assert_eq!(q.argument, "version");
        assert_eq!(q.value, "2");
        assert_eq!(q.context.get("name").map(String::as_str), Some("intro"));
        assert_eq!(
            remote_choices(&q, &["3".into()])[0].insert,
            "@fx:fixture://pages/intro/v3"
        );
    }

    #[test]
    fn slash_lists_prompts_with_their_arguments() {
        let Some(Query::Local(choices)) = prompt_query("/mcp__fx", &catalogs()) else {
            panic!("prompts")
        };
        assert_eq!(choices[0].label, "/mcp__fx__review <file> [tone]");
        assert_eq!(choices[0].insert, "/mcp__fx__review ");
        assert_eq!(prompt_query("/undo", &catalogs()), None);
    }
}
