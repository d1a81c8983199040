//! `toolgate serve fs ROOT`: file access confined to one directory tree.
//!
//! Every path is resolved against ROOT and refused when it leaves it: by `..`, by an
//! absolute path elsewhere, or through a symbolic link whose target is outside.
//! Files are also resources with `fs://relative/path` URIs (`file://` URIs of paths
//! inside ROOT are accepted too).

use std::{
    ffi::OsStr,
    path::{Component, Path, PathBuf},
};

use rmcp::{
    ErrorData as McpError,
    model::{Implementation, JsonObject, Resource, ResourceContents, ToolAnnotations},
};
use serde_json::{Value, json};

use super::common::{Backend, CallContext, SetupError, ToolOutput, ToolSpec, read_only};

/// `read_file` shows at most this many characters.
pub const READ_LIMIT_CHARS: usize = 4000;
/// Larger files are refused rather than loaded to show 4000 characters of them.
const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
/// `resources/list` stops after this many files.
const MAX_RESOURCES: usize = 500;
/// Directories not listed as resources: noisy, large or private.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules", ".toolgate"];

/// A path that could not be used, phrased for the caller.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("path '{0}' is outside the allowed root {1}")]
    Outside(String, String),
    #[error("path '{0}' is a symbolic link that points outside the allowed root {1}")]
    LinkOutside(String, String),
    #[error("path '{0}' is a broken symbolic link")]
    DanglingLink(String),
    #[error("cannot resolve '{0}': {1}")]
    Io(String, std::io::Error),
}

/// The confinement rule, separate from I/O on file contents so it can be tested alone.
pub struct Jail {
    root: PathBuf,
}

impl Jail {
    pub fn new(root: &Path) -> Result<Self, SetupError> {
        let root = root.canonicalize().map_err(|e| {
            SetupError::Invalid(format!("fs root {} is not usable: {e}", root.display()))
        })?;
        if !root.is_dir() {
            return Err(SetupError::Invalid(format!(
                "fs root {} is not a directory",
                root.display()
            )));
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `requested` to a real path inside the root. The path need not exist (for
    /// writes), but every part of it that does exist is resolved through symlinks.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, PathError> {
        let root_text = self.root.display().to_string();
        let outside = || PathError::Outside(requested.to_owned(), root_text.clone());
        let given = Path::new(requested);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        // Lexical normalisation first: `..` may not climb above the root at any point.
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    if !normal.pop() || !normal.starts_with(&self.root) {
                        return Err(outside());
                    }
                }
                Component::CurDir => {}
                other => normal.push(other.as_os_str()),
            }
        }
        if !normal.starts_with(&self.root) {
            return Err(outside());
        }
        // Then resolve the longest existing prefix through the file system.
        let mut existing = normal.clone();
        let mut missing: Vec<&OsStr> = Vec::new();
        let relative = normal.strip_prefix(&self.root).map_err(|_| outside())?;
        let parts: Vec<&OsStr> = relative.iter().collect();
        let mut keep = parts.len();
        loop {
            match std::fs::symlink_metadata(&existing) {
                Ok(meta) => {
                    let real = match existing.canonicalize() {
                        Ok(real) => real,
                        Err(_) if meta.file_type().is_symlink() => {
                            return Err(PathError::DanglingLink(requested.to_owned()));
                        }
                        Err(e) => return Err(PathError::Io(requested.to_owned(), e)),
                    };
                    if !real.starts_with(&self.root) {
                        return Err(if meta.file_type().is_symlink() || real != existing {
                            PathError::LinkOutside(requested.to_owned(), root_text)
                        } else {
                            outside()
                        });
                    }
                    let mut full = real;
                    for part in missing.iter().rev() {
                        full.push(part);
                    }
                    return Ok(full);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && keep > 0 => {
                    keep -= 1;
                    missing.push(parts[keep]);
                    existing = self.root.join(parts[..keep].iter().collect::<PathBuf>());
                }
                Err(e) => return Err(PathError::Io(requested.to_owned(), e)),
            }
        }
    }

    /// The root-relative display form (`.` for the root itself).
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// The fs server.
pub struct FsBackend {
    jail: Jail,
}

impl FsBackend {
    /// Arguments: `ROOT`.
    pub fn from_args(args: &[String]) -> Result<Self, SetupError> {
        match args {
            [root] => Self::new(Path::new(root)),
            [] => Err(SetupError::Invalid("usage: toolgate serve fs ROOT".into())),
            _ => Err(SetupError::Invalid(format!(
                "expected one ROOT directory, got {} arguments (usage: toolgate serve fs ROOT)",
                args.len()
            ))),
        }
    }

    pub fn new(root: &Path) -> Result<Self, SetupError> {
        Ok(Self {
            jail: Jail::new(root)?,
        })
    }

    fn read_file(&self, path: &str) -> Result<ToolOutput, String> {
        let real = self.jail.resolve(path).map_err(|e| e.to_string())?;
        let text = read_text(&real, path)?;
        let total = text.chars().count();
        if total <= READ_LIMIT_CHARS {
            return Ok(ToolOutput::text(text));
        }
        let shown: String = text.chars().take(READ_LIMIT_CHARS).collect();
        Ok(ToolOutput::text(format!(
            "{shown}\n\n[truncated: showing the first {READ_LIMIT_CHARS} of {total} characters of {path}]"
        )))
    }

    fn list_dir(&self, path: &str) -> Result<ToolOutput, String> {
        let real = self.jail.resolve(path).map_err(|e| e.to_string())?;
        let entries = std::fs::read_dir(&real).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("directory '{path}' does not exist"),
            _ if real.is_file() => format!("'{path}' is a file, not a directory"),
            _ => format!("cannot list '{path}': {e}"),
        })?;
        let mut lines = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list '{path}': {e}"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // Follow links for the kind, so a link to a directory reads as a directory.
            let is_dir = std::fs::metadata(entry.path())
                .map(|m| m.is_dir())
                .unwrap_or(false);
            lines.push((!is_dir, name));
        }
        lines.sort();
        if lines.is_empty() {
            return Ok(ToolOutput::text(format!(
                "(directory {} is empty)",
                self.jail.relative(&real)
            )));
        }
        let text: Vec<String> = lines
            .into_iter()
            .map(|(is_file, name)| format!("{} {name}", if is_file { "FILE" } else { "DIR" }))
            .collect();
        Ok(ToolOutput::text(text.join("\n")))
    }

    fn write_file(&self, path: &str, content: &str) -> Result<ToolOutput, String> {
        let real = self.jail.resolve(path).map_err(|e| e.to_string())?;
        if real.is_dir() {
            return Err(format!("'{path}' is a directory"));
        }
        if let Some(parent) = real.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create the directory for '{path}': {e}"))?;
        }
        let existed = real.exists();
        std::fs::write(&real, content).map_err(|e| format!("cannot write '{path}': {e}"))?;
        Ok(ToolOutput::text(format!(
            "{} {} ({} bytes)",
            if existed { "Overwrote" } else { "Created" },
            self.jail.relative(&real),
            content.len()
        )))
    }

    fn uri_to_path(&self, uri: &str) -> Result<PathBuf, McpError> {
        let not_found = |why: String| McpError::resource_not_found(why, None);
        let requested = if let Some(rel) = uri.strip_prefix("fs://") {
            rel.to_owned()
        } else if let Some(abs) = uri.strip_prefix("file://") {
            abs.to_owned()
        } else {
            return Err(not_found(format!("'{uri}' is not an fs:// or file:// URI")));
        };
        self.jail
            .resolve(&requested)
            .map_err(|e| not_found(e.to_string()))
    }
}

fn read_text(real: &Path, shown: &str) -> Result<String, String> {
    let meta = std::fs::metadata(real).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("file '{shown}' does not exist"),
        _ => format!("cannot read '{shown}': {e}"),
    })?;
    if meta.is_dir() {
        return Err(format!("'{shown}' is a directory; use list_dir"));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(format!(
            "'{shown}' is {} bytes, too large to read",
            meta.len()
        ));
    }
    let bytes = std::fs::read(real).map_err(|e| format!("cannot read '{shown}': {e}"))?;
    String::from_utf8(bytes)
        .map_err(|_| format!("'{shown}' is not UTF-8 text ({} bytes)", meta.len()))
}

fn mime_for(path: &Path) -> &'static str {
    match path.extension().and_then(OsStr::to_str) {
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("toml") => "application/toml",
        Some("rs") => "text/x-rust",
        Some("html") => "text/html",
        _ => "text/plain",
    }
}

impl Backend for FsBackend {
    fn implementation(&self) -> Implementation {
        Implementation::new("toolgate-fs", env!("CARGO_PKG_VERSION")).with_title("toolgate files")
    }

    fn instructions(&self) -> String {
        format!(
            "Reads and writes files under {} only. Paths are relative to that root; paths \
             leaving it (.., absolute paths elsewhere, symlinks to outside) are refused.",
            self.jail.root().display()
        )
    }

    fn tools(&self) -> Result<Vec<ToolSpec>, SetupError> {
        let path_prop = |what: &str| json!({ "type": "string", "description": format!("{what}, relative to the root (e.g. \"src/main.rs\"); \".\" is the root.") });
        Ok(vec![
            ToolSpec::new(
                "read_file",
                "Read a UTF-8 text file under the root. Files longer than 4000 characters are \
                 truncated and the output says so and gives the full length.",
                json!({
                    "type": "object",
                    "properties": { "path": path_prop("File to read") },
                    "required": ["path"],
                    "additionalProperties": false
                }),
                read_only("Read file"),
            )?,
            ToolSpec::new(
                "list_dir",
                "List a directory under the root, one entry per line as `DIR name` or \
                 `FILE name`, directories first, sorted by name.",
                json!({
                    "type": "object",
                    "properties": { "path": path_prop("Directory to list") },
                    "required": ["path"],
                    "additionalProperties": false
                }),
                read_only("List directory"),
            )?,
            ToolSpec::new(
                "get_time",
                "Return the current date and time (local time with UTC offset, and UTC) in \
                 RFC 3339 format.",
                json!({ "type": "object", "properties": {}, "additionalProperties": false }),
                read_only("Current time"),
            )?,
            ToolSpec::new(
                "write_file",
                "Create or overwrite a text file under the root with exactly `content`, \
                 creating missing parent directories. Replaces the whole file.",
                json!({
                    "type": "object",
                    "properties": {
                        "path": path_prop("File to write"),
                        "content": { "type": "string", "description": "The complete new file content." }
                    },
                    "required": ["path", "content"],
                    "additionalProperties": false
                }),
                ToolAnnotations::with_title("Write file")
                    .read_only(false)
                    .destructive(true),
            )?,
        ])
    }

    async fn call(
        &self,
        tool: &str,
        args: JsonObject,
        _ctx: CallContext,
    ) -> Result<ToolOutput, String> {
        let text_arg = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default();
        match tool {
            "read_file" => self.read_file(text_arg("path")),
            "list_dir" => self.list_dir(text_arg("path")),
            "write_file" => self.write_file(text_arg("path"), text_arg("content")),
            "get_time" => {
                let local = chrono::Local::now();
                let utc = local.with_timezone(&chrono::Utc);
                Ok(ToolOutput::text(format!(
                    "Local time: {}\nUTC: {}",
                    local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
                    utc.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )))
            }
            other => Err(format!(
                "tool '{other}' is not implemented by the fs server"
            )),
        }
    }

    fn has_resources(&self) -> bool {
        true
    }

    fn resources(&self) -> Result<Vec<Resource>, McpError> {
        let walker = walkdir::WalkDir::new(self.jail.root())
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                entry.depth() == 0
                    || !(entry.file_type().is_dir()
                        && SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()))
            });
        let mut out = Vec::new();
        for entry in walker.filter_map(Result::ok) {
            if !entry.file_type().is_file() {
                continue;
            }
            let relative = self.jail.relative(entry.path());
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            out.push(
                Resource::new(format!("fs://{relative}"), relative.clone())
                    .with_mime_type(mime_for(entry.path()))
                    .with_size(size),
            );
            if out.len() >= MAX_RESOURCES {
                tracing::info!(limit = MAX_RESOURCES, "resource list truncated");
                break;
            }
        }
        Ok(out)
    }

    fn read_resource(&self, uri: &str) -> Result<ResourceContents, McpError> {
        let real = self.uri_to_path(uri)?;
        let text = read_text(&real, uri).map_err(|e| McpError::resource_not_found(e, None))?;
        Ok(ResourceContents::text(text, uri).with_mime_type(mime_for(&real)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_keeps_paths_inside_and_refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.txt"), "a").unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        let root = jail.root().to_path_buf();
        assert_eq!(jail.resolve("sub/a.txt").unwrap(), root.join("sub/a.txt"));
        assert_eq!(
            jail.resolve("sub/../sub/a.txt").unwrap(),
            root.join("sub/a.txt")
        );
        assert_eq!(
            jail.resolve("new/dir/b.txt").unwrap(),
            root.join("new/dir/b.txt")
        );
        assert_eq!(jail.resolve(".").unwrap(), root);
        for escape in ["../x", "sub/../../x", "/etc/passwd"] {
            assert!(
                matches!(jail.resolve(escape), Err(PathError::Outside(..))),
                "{escape}"
            );
        }
        let inside_abs = root.join("sub/a.txt").display().to_string();
        assert!(jail.resolve(&inside_abs).is_ok());
    }

    #[test]
    fn resolve_refuses_symlinks_leaving_the_root() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/zzz", dir.path().join("dangling")).unwrap();
        std::os::unix::fs::symlink("sub", dir.path().join("in")).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        for leaving in ["out", "out/new.txt"] {
            assert!(
                matches!(jail.resolve(leaving), Err(PathError::LinkOutside(..))),
                "{leaving}"
            );
        }
        assert!(matches!(
            jail.resolve("dangling"),
            Err(PathError::DanglingLink(..))
        ));
        assert_eq!(jail.resolve("in/x").unwrap(), jail.root().join("sub/x"));
    }
}
