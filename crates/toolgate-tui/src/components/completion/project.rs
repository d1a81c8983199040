//! Completion of what the project brings, pure: `@path` over the workspace's files and
//! `/NAME` over the command files, each beside what the servers offer.

use super::query::{Choice, MAX_CHOICES, Query};
use crate::protocol::FileCommand;
use crate::sanitize::for_terminal;

/// The workspace files an `@…` word matches: those whose path starts with it first, then
/// those whose name does, then those that contain it.
pub fn file_choices(word: &str, files: &[String]) -> Vec<Choice> {
    let Some(typed) = word.strip_prefix('@') else {
        return Vec::new();
    };
    let typed = typed.to_lowercase();
    let rank = |path: &str| {
        let lower = path.to_lowercase();
        let name = lower.rsplit('/').next().unwrap_or_default();
        if lower.starts_with(&typed) {
            Some(0)
        } else if name.starts_with(&typed) {
            Some(1)
        } else if lower.contains(&typed) {
            Some(2)
        } else {
            None
        }
    };
    let mut ranked: Vec<(u8, &String)> = files
        .iter()
        .filter_map(|f| rank(f).map(|r| (r, f)))
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(MAX_CHOICES)
        .map(|(_, path)| {
            let path = for_terminal(path);
            Choice {
                insert: format!("@{path} "),
                label: format!("@{path}"),
                detail: "file".into(),
            }
        })
        .collect()
}

/// The command files a `/…` word at the start of the composer matches, with their
/// description (or first line) and argument hint.
pub fn command_choices(word: &str, commands: &[FileCommand]) -> Vec<Choice> {
    let Some(typed) = word.strip_prefix('/') else {
        return Vec::new();
    };
    let typed = typed.to_lowercase();
    commands
        .iter()
        .filter(|c| c.name.to_lowercase().contains(&typed))
        .map(|c| Choice {
            insert: format!("/{} ", c.name),
            label: for_terminal(&format!("/{}", c.name)),
            detail: for_terminal(&c.summary()),
        })
        .collect()
}

/// `/model NAME`: the names the provider offers (`offered`, its own list, full names
/// first) and those the model table knows, that the word (the second one on the line, at
/// `start`) begins; None elsewhere.
pub fn model_choices(
    text: &str,
    start: usize,
    word: &str,
    offered: &[String],
) -> Option<Vec<Choice>> {
    let before: String = text.chars().take(start).collect();
    if !text.starts_with("/model ") || before.trim() != "/model" {
        return None;
    }
    let typed = word.to_lowercase();
    let from_provider = offered.iter().map(|m| (m.as_str(), "offered"));
    let from_table = crate::protocol::window::known_models().map(|m| (m, "model"));
    let mut choices: Vec<Choice> = Vec::new();
    for (name, detail) in from_provider.chain(from_table) {
        let lower = name.to_lowercase();
        if !lower.starts_with(&typed) || lower == typed {
            continue;
        }
        // A name's beginning (`claude-`) is completed to be typed on.
        let insert = if name.ends_with('-') {
            name.to_string()
        } else {
            format!("{name} ")
        };
        if choices.iter().any(|c| c.insert == insert) {
            continue;
        }
        choices.push(Choice {
            insert: for_terminal(&insert),
            label: for_terminal(name),
            detail: detail.into(),
        });
    }
    Some(choices)
}

/// The servers' query with the project's choices added (commands before prompts, files
/// after resources); a query the server answers stays as it is.
pub fn with(query: Option<Query>, extra: Vec<Choice>) -> Option<Query> {
    match query {
        Some(Query::Remote(remote)) => Some(Query::Remote(remote)),
        Some(Query::Local(mut choices)) => {
            let commands = extra.first().is_some_and(|c| c.insert.starts_with('/'));
            if commands {
                choices.splice(0..0, extra);
            } else {
                choices.extend(extra);
            }
            Some(Query::Local(choices))
        }
        None if extra.is_empty() => None,
        None => Some(Query::Local(extra)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_commands_complete_with_their_details() {
        let files = vec![
            "README.md".to_string(),
            "docs/notes.txt".into(),
            "src/no.rs".into(),
        ];
        let choices = file_choices("@no", &files);
        let labels: Vec<&str> = choices.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["@docs/notes.txt", "@src/no.rs"]);
        assert_eq!(choices[0].insert, "@docs/notes.txt ");
        let commands = vec![FileCommand {
            name: "deploy-check".into(),
            description: Some("Check a deploy".into()),
            argument_hint: Some("[service]".into()),
            model: None,
            body: "x".into(),
            path: "d.md".into(),
        }];
        let choices = command_choices("/dep", &commands);
        assert_eq!(choices[0].insert, "/deploy-check ");
        assert_eq!(choices[0].detail, "[service] · Check a deploy");
        assert!(command_choices("/zzz", &commands).is_empty());
        assert!(matches!(with(None, choices), Some(Query::Local(c)) if c.len() == 1));
        let models = model_choices("/model gpt-4", 7, "gpt-4", &[]).unwrap();
        let labels: Vec<&str> = models.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["gpt-4.1", "gpt-4o", "gpt-4-turbo"]);
        assert_eq!(
            model_choices("/model cl", 7, "cl", &[]).unwrap()[0].insert,
            "claude-"
        );
        assert_eq!(model_choices("say gpt", 4, "gpt", &[]), None);
        // The provider's own names come first, each name once.
        let offered = ["gpt-4o-2024-08-06".to_string(), "gpt-4o".to_string()];
        let models = model_choices("/model gpt-4o", 7, "gpt-4o", &offered).unwrap();
        let shown: Vec<(&str, &str)> = models
            .iter()
            .map(|c| (c.label.as_str(), c.detail.as_str()))
            .collect();
        assert_eq!(shown, [("gpt-4o-2024-08-06", "offered")]);
    }
}
