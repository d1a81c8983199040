//! The project's context in the console: `/memory` lists the instruction files the model
//! reads (imports under the file that imports them) and the command files; `/init` and a
//! command file's `/NAME` are sent as messages, which the agent expands.

use crate::protocol::ProjectView;
use crate::sanitize::for_terminal;

/// Whether a typed `/command` (the text after the slash) goes to the agent as a message:
/// `/init`, or the name of a command file.
pub fn sends_as_message(project: &ProjectView, command: &str) -> bool {
    let name = command.split_whitespace().next().unwrap_or_default();
    name == "init" || project.commands.iter().any(|c| c.name == name)
}

/// What `/memory` shows: one line per file, with its full path (to open it in an editor).
pub fn lines(project: &ProjectView) -> String {
    let mut out = Vec::new();
    if project.files.is_empty() {
        out.push(
            "No instruction files: AGENTS.md (or CLAUDE.md) from the project's root down to \
             the working folder, and ~/.config/toolgate/AGENTS.md, are read when a session \
             starts. /init drafts one."
                .to_string(),
        );
    } else {
        out.push(
            "Instruction files, in the order the model reads them (/memory N opens one in $EDITOR):"
                .to_string(),
        );
        for (number, file) in project.files.iter().enumerate() {
            let indent = if file.imported_by.is_some() {
                "    └ "
            } else {
                "  "
            };
            let by = file
                .imported_by
                .as_ref()
                .and_then(|p| p.file_name())
                .map(|name| format!(", imported by {}", name.to_string_lossy()))
                .unwrap_or_default();
            out.push(format!(
                "{indent}{}. {} ({} characters{by})",
                number + 1,
                file.path.display(),
                file.chars
            ));
        }
    }
    if let Some(cut) = &project.cut {
        out.push(format!("Cut: {cut}"));
    }
    if !project.commands.is_empty() {
        out.push("Command files:".to_string());
        for command in &project.commands {
            out.push(format!("  /{} {}", command.name, command.path.display()));
        }
    }
    for_terminal(&out.join("\n"))
}

/// The path of the `number`th file `/memory` lists (1-based), if there is one.
pub fn nth_file(project: &ProjectView, number: usize) -> Option<std::path::PathBuf> {
    let index = number.checked_sub(1)?;
    project.files.get(index).map(|file| file.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{FileCommand, InstructionFile};
    use std::path::PathBuf;

    #[test]
    fn memory_lists_files_imports_and_commands() {
        let project = ProjectView {
            files: vec![
                InstructionFile {
                    path: PathBuf::from("/p/AGENTS.md"),
                    imported_by: None,
                    chars: 12,
                },
                InstructionFile {
                    path: PathBuf::from("/p/docs/style.md"),
                    imported_by: Some(PathBuf::from("/p/AGENTS.md")),
                    chars: 3,
                },
            ],
            cut: None,
            commands: vec![FileCommand {
                name: "deploy-check".into(),
                description: None,
                argument_hint: None,
                model: None,
                body: "x".into(),
                path: PathBuf::from("/p/.toolgate/commands/deploy-check.md"),
            }],
        };
        assert_eq!(
            lines(&project),
            "Instruction files, in the order the model reads them (/memory N opens one in $EDITOR):\n  1. /p/AGENTS.md (12 characters)\n    └ 2. /p/docs/style.md (3 characters, imported by AGENTS.md)\nCommand files:\n  /deploy-check /p/.toolgate/commands/deploy-check.md"
        );
        assert_eq!(
            nth_file(&project, 2),
            Some(PathBuf::from("/p/docs/style.md"))
        );
        assert_eq!(nth_file(&project, 0), None);
        assert_eq!(nth_file(&project, 3), None);
        assert!(sends_as_message(&project, "deploy-check web"));
        assert!(sends_as_message(&project, "init"));
        assert!(!sends_as_message(&project, "help"));
    }
}
