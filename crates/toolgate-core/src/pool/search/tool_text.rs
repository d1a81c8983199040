//! The texts the index reads from one tool definition: the words its meaning is taken from,
//! term counts of each field, the names and descriptions of its parameters (nested ones
//! too), and the one-line summary a hit carries.

use serde_json::Value;
use std::collections::HashMap;

use super::text;

/// Longest one-line description a hit carries.
pub const SUMMARY_LEN: usize = 160;

/// The text a tool's meaning is taken from: its server's and its name's words, then its
/// description (`github create issue: Create a new issue in a GitHub repository`).
pub(super) fn meaning_text(server: &str, name: &str, description: &str) -> String {
    let mut out = String::new();
    for part in [server, name] {
        text::words(part, |w| {
            out.push_str(&w.to_lowercase());
            out.push(' ');
        });
    }
    out.push_str(": ");
    out.push_str(description);
    out
}

/// Term counts of a text and its length in terms.
pub(super) fn count(text: &str) -> (HashMap<String, f32>, f32) {
    let mut counts: HashMap<String, f32> = HashMap::new();
    let mut len = 0.0;
    for term in text::terms(text) {
        *counts.entry(term).or_default() += 1.0;
        len += 1.0;
    }
    (counts, len)
}

/// The top-level parameter names and their descriptions, each joined into one text.
pub(super) fn parameters(schema: &Value) -> (String, String) {
    let mut names = String::new();
    let mut descriptions = String::new();
    collect_parameters(schema, 0, &mut names, &mut descriptions);
    (names, descriptions)
}

/// How deep nested parameters are read: `entities[].observations` is depth 2.
const PARAMETER_DEPTH: usize = 3;

/// Names and descriptions of a schema's properties, and of the properties of objects nested
/// in them (directly or as array items): many tools take a list of objects
/// (`relations: [{from, to, relationType}]`) whose fields say what the tool is about.
fn collect_parameters(schema: &Value, depth: usize, names: &mut String, descriptions: &mut String) {
    if depth >= PARAMETER_DEPTH {
        return;
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            names.push_str(name);
            names.push(' ');
            if let Some(Value::String(d)) = property.get("description") {
                descriptions.push_str(d);
                descriptions.push(' ');
            }
            collect_parameters(property, depth + 1, names, descriptions);
        }
    }
    if let Some(items) = schema.get("items") {
        collect_parameters(items, depth, names, descriptions);
    }
}

/// The first sentence (or line) of a description, cut at a word boundary past
/// [`SUMMARY_LEN`] characters.
pub fn summary(description: &str) -> String {
    let line = description.trim().lines().next().unwrap_or_default().trim();
    let sentence = match line.find(". ") {
        Some(end) => &line[..=end],
        None => line,
    };
    if sentence.chars().count() <= SUMMARY_LEN {
        return sentence.trim_end().to_string();
    }
    let mut cut: String = sentence.chars().take(SUMMARY_LEN - 1).collect();
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.push('…');
    cut
}
