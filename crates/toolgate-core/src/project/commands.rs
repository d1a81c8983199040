//! File-based slash commands: a Markdown file in `.toolgate/commands/`, `.claude/commands/`
//! (in the workspace, then the project root) or `~/.config/toolgate/commands/` is the
//! command `/NAME`, its text the message sent (subfolders give `dir:name`). Optional front
//! matter between `---` lines sets `description`, `argument-hint` and `model`; `$ARGUMENTS`
//! and `$1`..`$9` in the text take what was typed after the name.
//!
//! A file command never hides another command: one named like a built-in, like an MCP
//! prompt command (`mcp__…`) or like an earlier file command is left out, and said so.

use std::path::{Path, PathBuf};

use crate::beneath::{Beneath, BeneathError};

/// The folders commands are read from, below a project folder, in order.
const PROJECT_FOLDERS: [&str; 2] = [".toolgate/commands", ".claude/commands"];

/// How deep subfolders of a commands folder are read.
const MAX_DEPTH: usize = 4;

pub use crate::protocol::FileCommand;

/// A typed message read as a command: `/NAME args` where NAME is a file command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed<'a> {
    pub command: &'a FileCommand,
    pub args: &'a str,
}

/// The file command a typed message runs, if it starts with one.
pub fn typed<'a>(text: &'a str, commands: &'a [FileCommand]) -> Option<Typed<'a>> {
    let line = text.trim_start().strip_prefix('/')?;
    let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let command = commands.iter().find(|c| c.name == name)?;
    Some(Typed { command, args })
}

/// Where command files are looked for.
enum CommandFolder {
    /// A project's folder, relative to the project root: read beneath the root's handle
    /// (decision 0089), so a folder or file that leads out of the project is refused.
    Project(PathBuf),
    /// The user's own folder: the user's (its links may point anywhere).
    User(PathBuf),
}

/// One `.md` file found: its path (for messages and `/NAME runs …`) and its text, or why
/// it was not read.
type Found = (PathBuf, Result<Option<String>, String>);

/// Reads every command folder. `reserved`: names taken by built-in commands.
pub fn load(
    workspace: &Path,
    user_dir: Option<&Path>,
    reserved: &[&str],
) -> (Vec<FileCommand>, Vec<String>) {
    let root = super::project_root(workspace);
    let below = workspace.strip_prefix(&root).unwrap_or(Path::new(""));
    let mut folders = Vec::new();
    for sub in PROJECT_FOLDERS {
        folders.push(CommandFolder::Project(below.join(sub)));
        if root != workspace {
            folders.push(CommandFolder::Project(PathBuf::from(sub)));
        }
    }
    if let Some(user) = user_dir {
        folders.push(CommandFolder::User(user.join("commands")));
    }
    let project = Beneath::open_root(&root).ok();
    let mut commands: Vec<FileCommand> = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let (base, found) = match &folder {
            CommandFolder::User(dir) => (dir.clone(), user_markdown(dir)),
            CommandFolder::Project(rel) => {
                let Some(project) = &project else { continue };
                match project_markdown(project, rel) {
                    Ok(found) => (root.join(rel), found),
                    Err(why) => {
                        problems.push(format!(
                            "commands: {} was not read: {why}",
                            root.join(rel).display()
                        ));
                        continue;
                    }
                }
            }
        };
        for (path, text) in found {
            let Some(name) = command_name(&base, &path) else {
                continue;
            };
            let shown = path.display();
            if reserved.contains(&name.as_str()) {
                problems.push(format!(
                    "commands: {shown} is named like the built-in /{name}; it is not used (rename the file)"
                ));
                continue;
            }
            if name.starts_with("mcp__") {
                problems.push(format!(
                    "commands: {shown} is named like an MCP prompt command (/mcp__…); it is not used (rename the file)"
                ));
                continue;
            }
            if let Some(first) = commands.iter().find(|c| c.name == name) {
                problems.push(format!(
                    "commands: {shown} is named like {} (/{name}), which is used; it is not (rename one of them)",
                    first.path.display()
                ));
                continue;
            }
            match parse(text, &path, name) {
                Ok(command) => commands.push(command),
                Err(why) => problems.push(format!("commands: {shown}: {why}; it is not used")),
            }
        }
    }
    (commands, problems)
}

/// The `.md` files below the user's `folder`, sorted, at most [`MAX_DEPTH`] folders down.
fn user_markdown(folder: &Path) -> Vec<Found> {
    if !folder.is_dir() {
        return Vec::new();
    }
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(folder)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = super::read_text(&path).map_err(|e| format!("cannot read it: {e}"));
            (path, text)
        })
        .collect()
}

/// The `.md` files below the project's folder `rel`, read beneath the project root: the
/// folders walked through handles (a linked folder is not entered), each file opened
/// beneath the root (a link inside the project is followed, one out of it refused). Err
/// when the folder itself leads out of the project; nothing when it does not exist.
fn project_markdown(project: &Beneath, rel: &Path) -> Result<Vec<Found>, String> {
    let top = match project.dir(rel, false) {
        Ok(dir) => dir,
        Err(e) if e.io_kind().is_some() => return Ok(Vec::new()),
        Err(e) => return Err(format!("it leads outside the project ({e})")),
    };
    let mut found = Vec::new();
    let mut pending = vec![(top, PathBuf::new(), 1usize)];
    while let Some((dir, below, depth)) = pending.pop() {
        let Ok(entries) = dir.entries() else { continue };
        for (name, kind) in entries {
            let sub = below.join(&name);
            if kind.is_dir() {
                if depth < MAX_DEPTH
                    && let Ok(child) = dir.child_dir(&name, false)
                {
                    pending.push((child, sub, depth + 1));
                }
                continue;
            }
            if !(kind.is_file() || kind.is_symlink())
                || Path::new(&name).extension() != Some("md".as_ref())
            {
                continue;
            }
            let path = project.shown().join(rel).join(&sub);
            let text = match project.open_read(&rel.join(&sub)) {
                Ok(file) => super::read_text_from(file).map_err(|e| format!("cannot read it: {e}")),
                Err(e @ BeneathError::Io { .. }) => Err(format!("cannot read it: {e}")),
                Err(e) => Err(format!(
                    "it resolves outside the project, so it is not read ({e})"
                )),
            };
            found.push((path, text));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// `a/b.md` below the folder is `a:b`; a name with white space cannot be typed, so is
/// none.
fn command_name(folder: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(folder).ok()?.with_extension("");
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let name = parts.join(":");
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

fn parse(
    read: Result<Option<String>, String>,
    path: &Path,
    name: String,
) -> Result<FileCommand, String> {
    let text = match read {
        Ok(Some(text)) => text,
        Ok(None) => return Err("not a text file".into()),
        Err(why) => return Err(why),
    };
    let (fields, body) = front_matter(&text);
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    Ok(FileCommand {
        name,
        description: field("description"),
        argument_hint: field("argument-hint"),
        model: field("model"),
        body: body.trim().to_string(),
        path: path.to_path_buf(),
    })
}

/// `key: value` lines between a first line `---` and the next `---`, and the text after
/// them (the whole text when there is no front matter). Quotes around a value go.
fn front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (Vec::new(), text);
    };
    let mut fields = Vec::new();
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end();
        if line == "---" {
            return (fields, &rest[offset..]);
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            fields.push((key.trim().to_ascii_lowercase(), value.to_string()));
        }
    }
    // No closing line: not front matter after all.
    (Vec::new(), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(body: &str) -> FileCommand {
        FileCommand {
            name: "c".into(),
            description: None,
            argument_hint: None,
            model: None,
            body: body.into(),
            path: PathBuf::from("c.md"),
        }
    }

    #[test]
    fn arguments_are_substituted_or_appended() {
        let c = command("Check $1 then $2; all: $ARGUMENTS; cost $5.00 and $x");
        assert_eq!(
            c.expand(r#" web "two words" "#),
            "Check web then two words; all: web \"two words\"; cost .00 and $x"
        );
        assert_eq!(
            command("Review.").expand("a b"),
            "Review.\n\nARGUMENTS: a b"
        );
        assert_eq!(command("Review.").expand(""), "Review.");
    }

    #[test]
    fn front_matter_fields_are_read_and_the_body_follows() {
        let (fields, body) = front_matter(
            "---\ndescription: \"Check a deploy\"\nargument-hint: [service]\n---\nBody $1\n",
        );
        assert_eq!(fields[0], ("description".into(), "Check a deploy".into()));
        assert_eq!(fields[1], ("argument-hint".into(), "[service]".into()));
        assert_eq!(body, "Body $1\n");
        let (fields, body) = front_matter("---\nno end");
        assert!(fields.is_empty());
        assert_eq!(body, "---\nno end");
    }

    #[test]
    fn folders_give_names_and_clashes_are_reported_not_shadowed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let user = dir.path().join("user");
        for (path, text) in [
            ("ws/.toolgate/commands/deploy-check.md", "project"),
            ("ws/.toolgate/commands/ops/restart.md", "restart $1"),
            ("ws/.toolgate/commands/help.md", "mine"),
            ("ws/.toolgate/commands/mcp__x__y.md", "mine"),
            ("ws/.claude/commands/deploy-check.md", "claude"),
            ("user/commands/mine.md", "---\ndescription: Mine\n---\nuser"),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let (commands, problems) = load(&ws, Some(&user), &["help"]);
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["deploy-check", "ops:restart", "mine"]);
        assert_eq!(commands[0].body, "project");
        assert_eq!(commands[2].summary(), "Mine");
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("like the built-in /help"))
        );
        assert!(problems.iter().any(|p| p.contains("MCP prompt command")));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("(/deploy-check), which is used"))
        );
        let typed = typed("/ops:restart web", &commands).unwrap();
        assert_eq!(typed.command.expand(typed.args), "restart web");
        assert_eq!(super::typed("/nope x", &commands), None);
    }
}
