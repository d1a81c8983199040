//! Images in the session log. A `message` record would otherwise carry every image as
//! base64 inline, and the log (read whole on resume) would grow by megabytes per
//! screenshot. So the log keeps `{"media_type", "file"}` and the data goes to
//! `sessions/<id>/images/<sha256>.b64`, once per distinct image, up to
//! [`SESSION_IMAGE_BUDGET`] bytes per session. An image over the budget is not kept:
//! its record says `"dropped": true` and a resumed conversation gets a line of text in
//! its place (as it does for a file that has gone missing).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Bytes of image data (base64) one session keeps on disk.
pub const SESSION_IMAGE_BUDGET: u64 = 32 * 1024 * 1024;

/// Where one session's images go, and how much of the budget is used.
#[derive(Debug)]
pub struct ImageStore {
    dir: PathBuf,
    /// Counted from the folder on first use (a resumed session continues its budget).
    used: Option<u64>,
    budget: u64,
}

impl ImageStore {
    pub fn new(files_dir: &Path) -> Self {
        Self::with_budget(files_dir, SESSION_IMAGE_BUDGET)
    }

    pub fn with_budget(files_dir: &Path, budget: u64) -> Self {
        ImageStore {
            dir: files_dir.join("images"),
            used: None,
            budget,
        }
    }

    fn used(&mut self) -> u64 {
        *self.used.get_or_insert_with(|| {
            std::fs::read_dir(&self.dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter_map(|e| e.metadata().ok())
                        .map(|m| m.len())
                        .sum()
                })
                .unwrap_or(0)
        })
    }

    /// Stores the image's data and returns its file name, or None when it is over the
    /// budget or cannot be written (then the log says it was dropped).
    fn keep(&mut self, data: &str) -> Option<String> {
        let name = format!("{}.b64", hex::encode(Sha256::digest(data.as_bytes())));
        let path = self.dir.join(&name);
        if path.is_file() {
            return Some(name);
        }
        let size = data.len() as u64;
        if self.used().saturating_add(size) > self.budget {
            return None;
        }
        match std::fs::create_dir_all(&self.dir).and_then(|()| std::fs::write(&path, data)) {
            Ok(()) => {
                self.used = Some(self.used().saturating_add(size));
                Some(name)
            }
            Err(e) => {
                tracing::warn!("saving an image of the session: {e}");
                None
            }
        }
    }

    /// Replaces the data of every image in a serialized message (`content` blocks of
    /// type `image`, and `images` of `tool_result` blocks) by a file reference.
    pub fn externalize(&mut self, message: &mut Value) {
        for_each_image(message, |image| {
            let Some(data) = image.get("data").and_then(Value::as_str) else {
                return;
            };
            let reference = match self.keep(data) {
                Some(file) => json!({"file": file}),
                None => json!({"dropped": true}),
            };
            if let (Some(object), Value::Object(reference)) = (image.as_object_mut(), reference) {
                object.remove("data");
                object.extend(reference);
            }
        });
    }
}

/// The other way: reads each referenced image back. An image that was dropped or whose
/// file is gone becomes text saying so (in a tool result, a line of its content).
pub fn internalize(message: &mut Value, files_dir: &Path) {
    let dir = files_dir.join("images");
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    for block in blocks.iter_mut() {
        match block.get("type").and_then(Value::as_str) {
            Some("image") => {
                if let Err(note) = restore(block, &dir) {
                    *block = json!({"type": "text", "text": note});
                }
            }
            Some("tool_result") => {
                let Some(images) = block.get_mut("images").and_then(Value::as_array_mut) else {
                    continue;
                };
                let mut notes = Vec::new();
                images.retain_mut(|image| match restore(image, &dir) {
                    Ok(()) => true,
                    Err(note) => {
                        notes.push(note);
                        false
                    }
                });
                if notes.is_empty() {
                    continue;
                }
                let content = block.get("content").and_then(Value::as_str).unwrap_or("");
                let mut text = content.to_string();
                for note in notes {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&note);
                }
                block["content"] = json!(text);
            }
            _ => {}
        }
    }
}

/// Puts the data back into one image object, or says why it cannot.
fn restore(image: &mut Value, dir: &Path) -> Result<(), String> {
    if image.get("data").is_some() {
        return Ok(()); // written inline (by an older version)
    }
    let media_type = image
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("image")
        .to_string();
    let file = image
        .get("file")
        .and_then(Value::as_str)
        .filter(|f| valid_file_name(f));
    let data = file.and_then(|f| std::fs::read_to_string(dir.join(f)).ok());
    let Some(data) = data else {
        let dropped = image.get("dropped").and_then(Value::as_bool) == Some(true);
        let why = if dropped {
            "over the session's image budget"
        } else {
            "its file is missing"
        };
        return Err(format!(
            "[image {media_type} not restored from the saved session: {why}]"
        ));
    };
    if let Some(object) = image.as_object_mut() {
        object.remove("file");
        object.insert("data".into(), json!(data));
    }
    Ok(())
}

/// Only names this module writes (hex and `.b64`), so a log cannot point elsewhere.
fn valid_file_name(name: &str) -> bool {
    name.strip_suffix(".b64")
        .is_some_and(|stem| !stem.is_empty() && stem.chars().all(|c| c.is_ascii_hexdigit()))
}

fn for_each_image(message: &mut Value, mut f: impl FnMut(&mut Value)) {
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    for block in blocks.iter_mut() {
        match block.get("type").and_then(Value::as_str) {
            Some("image") => f(block),
            Some("tool_result") => {
                if let Some(images) = block.get_mut("images").and_then(Value::as_array_mut) {
                    images.iter_mut().for_each(&mut f);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContentBlock, ImageData, Message, Role};

    fn message_with(images: Vec<ImageData>) -> Message {
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "a chart".into(),
                    is_error: false,
                    images: images.clone(),
                },
                ContentBlock::Image(images[0].clone()),
            ],
        }
    }

    fn png(data: &str) -> ImageData {
        ImageData {
            media_type: "image/png".into(),
            data: data.into(),
        }
    }

    #[test]
    fn images_leave_the_log_once_and_come_back_on_resume() {
        let dir = tempfile::tempdir().unwrap();
        let message = message_with(vec![png("AAAA"), png("BBBB")]);
        let mut value = serde_json::to_value(&message).unwrap();
        let mut store = ImageStore::new(dir.path());
        store.externalize(&mut value);
        let text = value.to_string();
        assert!(!text.contains("AAAA") && !text.contains("BBBB"), "{text}");
        // The same image twice is one file.
        assert_eq!(
            std::fs::read_dir(dir.path().join("images"))
                .unwrap()
                .count(),
            2
        );
        internalize(&mut value, dir.path());
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), message);
    }

    #[test]
    fn an_image_over_the_budget_is_dropped_and_resumes_as_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let mut value =
            serde_json::to_value(message_with(vec![png("AAAA"), png("BBBBBBBB")])).unwrap();
        let mut store = ImageStore::with_budget(dir.path(), 6);
        store.externalize(&mut value);
        internalize(&mut value, dir.path());
        let restored: Message = serde_json::from_value(value).unwrap();
        assert_eq!(
            restored.content[0],
            ContentBlock::ToolResult {
                tool_use_id: "t1".into(),
                content: "a chart\n[image image/png not restored from the saved session: over the session's image budget]".into(),
                is_error: false,
                images: vec![png("AAAA")],
            }
        );
        assert_eq!(restored.content[1], ContentBlock::Image(png("AAAA")));
    }

    #[test]
    fn a_missing_file_becomes_text_and_foreign_names_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut value = serde_json::json!({"role": "user", "content": [
            {"type": "image", "media_type": "image/png", "file": "../../etc/passwd"},
        ]});
        internalize(&mut value, dir.path());
        let restored: Message = serde_json::from_value(value).unwrap();
        assert_eq!(
            restored.content,
            vec![ContentBlock::Text {
                text: "[image image/png not restored from the saved session: its file is missing]"
                    .into()
            }]
        );
    }
}
