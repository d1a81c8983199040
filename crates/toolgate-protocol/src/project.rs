//! The project's context as the front ends show it (`/memory`, `/help`, completion): the
//! instruction files the model reads and the file commands. The core loads them.

use std::path::PathBuf;

/// What a front end shows of the project's context (`/memory`, `/help`, completion).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectView {
    /// The instruction files in the order the model reads them (imports after the file
    /// that imports them).
    pub files: Vec<InstructionFile>,
    /// Why the instructions were cut, when they were.
    pub cut: Option<String>,
    pub commands: Vec<FileCommand>,
}

/// One file that was read: a top-level instruction file, or one it imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    /// The file whose `@path` line imported it.
    pub imported_by: Option<PathBuf>,
    /// Characters of its own text (imports not counted).
    pub chars: usize,
}

/// Whose instruction file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionScope {
    /// The user's own `~/.config/toolgate/AGENTS.md` (its links and imports may point
    /// anywhere: the person wrote it).
    User,
    /// A file of the project (kept inside the project root).
    Project,
}

/// One command file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCommand {
    /// What follows the slash: the file's path below its commands folder, without `.md`,
    /// folders joined by `:`.
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    /// The model this command's turn runs on.
    pub model: Option<String>,
    /// The text after the front matter.
    pub body: String,
    pub path: PathBuf,
}

impl FileCommand {
    /// The message this command sends with `args` (what was typed after its name).
    pub fn expand(&self, args: &str) -> String {
        let args = args.trim();
        let words = split_args(args);
        let mut out = String::with_capacity(self.body.len() + args.len());
        let mut used = false;
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(args);
                used = true;
                rest = tail;
            } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
                let n = (digit as usize) - ('1' as usize);
                out.push_str(words.get(n).map_or("", String::as_str));
                used = true;
                rest = &after[1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        // A command that does not say where its arguments go still gets them.
        if !used && !args.is_empty() {
            out.push_str(&format!("\n\nARGUMENTS: {args}"));
        }
        out
    }

    /// What completion and /help show beside the name.
    pub fn summary(&self) -> String {
        let mut text = self.description.clone().unwrap_or_else(|| {
            let first = self.body.lines().find(|l| !l.trim().is_empty());
            first.unwrap_or_default().trim().chars().take(60).collect()
        });
        if let Some(hint) = &self.argument_hint {
            text = format!("{hint} · {text}");
        }
        text
    }
}

/// Arguments as words; a double-quoted stretch is one word.
fn split_args(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in args.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}
