//! A form to fill in: the typed fields an MCP server's elicitation asks for, with what the
//! person has entered so far, checked as they type. Pure data: the console edits it field
//! by field, `toolgate mcp call` fills it from prompts, and both take its [`Form::content`]
//! once it has no problems left. Defaults are entered up front (SEP-1034), so a form
//! submitted untouched sends them.

use serde_json::{Map, Number, Value};

/// What a text field's value must look like (the formats MCP elicitation allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl TextFormat {
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Email => "e-mail address",
            TextFormat::Uri => "URL",
            TextFormat::Date => "date, YYYY-MM-DD",
            TextFormat::DateTime => "date and time, e.g. 2026-07-28T09:30:00Z",
        }
    }

    fn accepts(self, text: &str) -> bool {
        match self {
            TextFormat::Email => text.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty()
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !text.chars().any(char::is_whitespace)
                    && !domain.contains('@')
            }),
            TextFormat::Uri => url::Url::parse(text).is_ok(),
            TextFormat::Date => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok(),
            TextFormat::DateTime => chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        }
    }
}

/// One option of a choice: the value sent and the label shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub value: String,
    pub label: String,
}

/// What a field holds, with its limits.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text {
        format: Option<TextFormat>,
        min_length: Option<u32>,
        max_length: Option<u32>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// Exactly one of the items.
    OneOf {
        items: Vec<Item>,
    },
    /// Any number of the items, within the bounds.
    ManyOf {
        items: Vec<Item>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// What the person entered so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Text and number fields: the characters as typed.
    Text(String),
    /// None: not answered.
    Bool(Option<bool>),
    /// Index into the items; None: none picked.
    One(Option<usize>),
    /// One flag per item.
    Many(Vec<bool>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name the server gets the value under.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    pub input: Input,
    /// Where the keys act: the highlighted item of a choice, or the caret (in characters)
    /// of a text or number field.
    pub cursor: usize,
}

impl Field {
    /// A field with nothing entered.
    pub fn new(name: impl Into<String>, kind: FieldKind) -> Field {
        let input = match &kind {
            FieldKind::Text { .. } | FieldKind::Number { .. } => Input::Text(String::new()),
            FieldKind::Boolean => Input::Bool(None),
            FieldKind::OneOf { .. } => Input::One(None),
            FieldKind::ManyOf { items, .. } => Input::Many(vec![false; items.len()]),
        };
        Field {
            name: name.into(),
            title: None,
            description: None,
            required: false,
            kind,
            input,
            cursor: 0,
        }
    }

    /// The title when the server gave one, else the property name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    fn items(&self) -> &[Item] {
        match &self.kind {
            FieldKind::OneOf { items } | FieldKind::ManyOf { items, .. } => items,
            _ => &[],
        }
    }

    /// What is wrong with the input as it stands; None when it can be sent.
    pub fn problem(&self) -> Option<String> {
        let missing = || self.required.then(|| "required".to_string());
        match (&self.kind, &self.input) {
            (
                FieldKind::Text {
                    format,
                    min_length,
                    max_length,
                },
                Input::Text(text),
            ) => {
                if text.is_empty() {
                    return missing();
                }
                let length = text.chars().count();
                if let Some(min) = min_length
                    && length < *min as usize
                {
                    return Some(format!("at least {min} characters ({length} now)"));
                }
                if let Some(max) = max_length
                    && length > *max as usize
                {
                    return Some(format!("at most {max} characters ({length} now)"));
                }
                match format {
                    Some(format) if !format.accepts(text) => {
                        Some(format!("not a valid {}", format.name()))
                    }
                    _ => None,
                }
            }
            (
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                },
                Input::Text(text),
            ) => {
                let text = text.trim();
                if text.is_empty() {
                    return missing();
                }
                let value = match parse_number(text, *integer) {
                    Ok(n) => n,
                    Err(problem) => return Some(problem),
                };
                let n = value.as_f64().unwrap_or(f64::NAN);
                if let Some(min) = minimum
                    && n < *min
                {
                    return Some(format!("at least {}", show_number(*min)));
                }
                if let Some(max) = maximum
                    && n > *max
                {
                    return Some(format!("at most {}", show_number(*max)));
                }
                None
            }
            (FieldKind::Boolean, Input::Bool(None)) => missing(),
            (FieldKind::OneOf { .. }, Input::One(None)) => {
                self.required.then(|| "pick one".to_string())
            }
            (
                FieldKind::ManyOf {
                    min_items,
                    max_items,
                    ..
                },
                Input::Many(flags),
            ) => {
                let picked = flags.iter().filter(|f| **f).count() as u64;
                if let Some(min) = min_items
                    && picked < *min
                {
                    return Some(format!("pick at least {min}"));
                }
                if let Some(max) = max_items
                    && picked > *max
                {
                    return Some(format!("pick at most {max}"));
                }
                None
            }
            _ => None,
        }
    }

    /// The value to send; None: left out (an optional field left empty).
    pub fn value(&self) -> Option<Value> {
        match (&self.kind, &self.input) {
            (FieldKind::Text { .. }, Input::Text(text)) => {
                (!text.is_empty()).then(|| Value::String(text.clone()))
            }
            (FieldKind::Number { integer, .. }, Input::Text(text)) => {
                parse_number(text.trim(), *integer).ok().map(Value::Number)
            }
            (_, Input::Bool(b)) => b.map(Value::Bool),
            (_, Input::One(picked)) => picked
                .and_then(|i| self.items().get(i))
                .map(|item| Value::String(item.value.clone())),
            (_, Input::Many(flags)) => {
                let picked: Vec<Value> = self
                    .items()
                    .iter()
                    .zip(flags)
                    .filter(|(_, on)| **on)
                    .map(|(item, _)| Value::String(item.value.clone()))
                    .collect();
                (self.required || !picked.is_empty()).then_some(Value::Array(picked))
            }
            _ => None,
        }
    }

    /// The input as one line of text ("yes", "Red, Blue", what was typed).
    pub fn shown(&self) -> String {
        match &self.input {
            Input::Text(text) => text.clone(),
            Input::Bool(Some(true)) => "yes".into(),
            Input::Bool(Some(false)) => "no".into(),
            Input::Bool(None) => String::new(),
            Input::One(picked) => picked
                .and_then(|i| self.items().get(i))
                .map(|item| item.label.clone())
                .unwrap_or_default(),
            Input::Many(flags) => self
                .items()
                .iter()
                .zip(flags)
                .filter(|(_, on)| **on)
                .map(|(item, _)| item.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// A short note on what the field takes ("integer, 1–10", "e-mail address").
    pub fn hint(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        match &self.kind {
            FieldKind::Text {
                format,
                min_length,
                max_length,
            } => {
                if let Some(format) = format {
                    parts.push(format.name().into());
                }
                match (min_length, max_length) {
                    (Some(min), Some(max)) => parts.push(format!("{min}–{max} characters")),
                    (Some(min), None) => parts.push(format!("at least {min} characters")),
                    (None, Some(max)) => parts.push(format!("at most {max} characters")),
                    (None, None) => {}
                }
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                parts.push(if *integer { "whole number" } else { "number" }.into());
                match (minimum, maximum) {
                    (Some(min), Some(max)) => {
                        parts.push(format!("{}–{}", show_number(*min), show_number(*max)))
                    }
                    (Some(min), None) => parts.push(format!("≥ {}", show_number(*min))),
                    (None, Some(max)) => parts.push(format!("≤ {}", show_number(*max))),
                    (None, None) => {}
                }
            }
            FieldKind::Boolean => parts.push("yes or no".into()),
            FieldKind::OneOf { .. } => parts.push("pick one".into()),
            FieldKind::ManyOf { .. } => parts.push("pick any".into()),
        }
        if self.required {
            parts.push("required".into());
        }
        parts.join(", ")
    }

    /// Typing into a text or number field, at the caret; ignored by the others.
    pub fn type_char(&mut self, c: char) {
        if let Input::Text(text) = &mut self.input
            && !c.is_control()
        {
            let at = byte_index(text, self.cursor);
            text.insert(at, c);
            self.cursor = (self.cursor + 1).min(text.chars().count());
        }
    }

    /// Deletes the character before the caret.
    pub fn backspace(&mut self) {
        if let Input::Text(text) = &mut self.input
            && self.cursor > 0
        {
            let at = byte_index(text, self.cursor - 1);
            text.remove(at);
            self.cursor -= 1;
        }
    }

    /// Puts the caret after the last character (for text entered as a whole).
    pub fn caret_to_end(&mut self) {
        if let Input::Text(text) = &self.input {
            self.cursor = text.chars().count();
        }
    }

    /// Space: flips a yes/no, or the highlighted item of a multiple choice, or picks the
    /// highlighted item of a single choice.
    pub fn toggle(&mut self) {
        let cursor = self.cursor;
        match &mut self.input {
            Input::Bool(b) => *b = Some(!b.unwrap_or(false)),
            Input::One(picked) => *picked = Some(cursor),
            Input::Many(flags) => {
                if let Some(flag) = flags.get_mut(cursor) {
                    *flag = !*flag;
                }
            }
            Input::Text(text) => text.push(' '),
        }
    }

    /// ←/→: moves the caret of a text, moves through the items (a single choice picks as
    /// it moves), flips a yes/no.
    pub fn step(&mut self, forward: bool) {
        let count = self.items().len();
        match &mut self.input {
            Input::Text(text) => {
                self.cursor = if forward {
                    (self.cursor + 1).min(text.chars().count())
                } else {
                    self.cursor.saturating_sub(1)
                };
            }
            Input::Bool(b) => *b = Some(!b.unwrap_or(!forward)),
            Input::One(picked) if count > 0 => {
                let at = picked.unwrap_or(if forward { count - 1 } else { 0 });
                let next = if forward {
                    (at + 1) % count
                } else {
                    (at + count - 1) % count
                };
                *picked = Some(next);
                self.cursor = next;
            }
            Input::Many(_) if count > 0 => {
                self.cursor = if forward {
                    (self.cursor + 1).min(count - 1)
                } else {
                    self.cursor.saturating_sub(1)
                };
            }
            _ => {}
        }
    }

    /// Pastes text into a text or number field at the caret (newlines become spaces).
    pub fn paste(&mut self, pasted: &str) {
        for c in pasted.chars().map(|c| if c == '\n' { ' ' } else { c }) {
            self.type_char(c);
        }
    }
}

/// The byte offset of the `chars`-th character (the end when there are fewer).
fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(at, _)| at)
}

fn parse_number(text: &str, integer: bool) -> Result<Number, String> {
    if integer {
        return text
            .parse::<i64>()
            .map(Number::from)
            .map_err(|_| "a whole number, please".to_string());
    }
    text.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .and_then(Number::from_f64)
        .ok_or_else(|| "a number, please".to_string())
}

/// 3 rather than 3.0; 2.5 as it is.
pub fn show_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// A field that cannot be sent, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Form {
    pub fields: Vec<Field>,
}

impl Form {
    pub fn problems(&self) -> Vec<Problem> {
        self.fields
            .iter()
            .enumerate()
            .filter_map(|(field, f)| f.problem().map(|message| Problem { field, message }))
            .collect()
    }

    /// The object to send: every field with a value, under its property name.
    pub fn content(&self) -> Result<Map<String, Value>, Vec<Problem>> {
        let problems = self.problems();
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(self
            .fields
            .iter()
            .filter_map(|f| f.value().map(|v| (f.name.clone(), v)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(min: Option<u32>, max: Option<u32>, format: Option<TextFormat>) -> Field {
        Field::new(
            "t",
            FieldKind::Text {
                format,
                min_length: min,
                max_length: max,
            },
        )
    }

    fn typed(mut field: Field, s: &str) -> Field {
        for c in s.chars() {
            field.type_char(c);
        }
        field
    }

    #[test]
    fn text_lengths_and_formats_are_checked_as_typed() {
        let f = typed(text(Some(3), Some(5), None), "ab");
        assert_eq!(
            f.problem().as_deref(),
            Some("at least 3 characters (2 now)")
        );
        let f = typed(f, "cdef");
        assert_eq!(f.problem().as_deref(), Some("at most 5 characters (6 now)"));
        let email = text(None, None, Some(TextFormat::Email));
        assert_eq!(
            typed(email.clone(), "bob@").problem().as_deref(),
            Some("not a valid e-mail address")
        );
        assert_eq!(typed(email, "bob@example.com").problem(), None);
        let date = text(None, None, Some(TextFormat::Date));
        assert!(typed(date.clone(), "2026-02-30").problem().is_some());
        assert_eq!(typed(date, "2026-02-28").problem(), None);
        let uri = text(None, None, Some(TextFormat::Uri));
        assert!(typed(uri.clone(), "not a url").problem().is_some());
        assert_eq!(typed(uri, "https://example.com/x").problem(), None);
        // The caret moves and edits in the middle, by characters.
        let mut f = typed(text(None, None, None), "näe");
        f.step(false);
        f.backspace();
        f.type_char('ü');
        f.step(true);
        f.type_char('!');
        assert_eq!(f.shown(), "nüe!");
        let when = text(None, None, Some(TextFormat::DateTime));
        assert_eq!(typed(when, "2026-07-28T09:30:00Z").problem(), None);
    }

    #[test]
    fn numbers_parse_and_respect_bounds() {
        let kind = FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(10.0),
        };
        let f = typed(Field::new("n", kind), "2.5");
        assert_eq!(f.problem().as_deref(), Some("a whole number, please"));
        let f = typed(Field::new("n", f.kind.clone()), "11");
        assert_eq!(f.problem().as_deref(), Some("at most 10"));
        let f = typed(Field::new("n", f.kind.clone()), "7");
        assert_eq!(f.value(), Some(Value::from(7)));
        let real = FieldKind::Number {
            integer: false,
            minimum: Some(0.5),
            maximum: None,
        };
        let f = typed(Field::new("x", real), "0.25");
        assert_eq!(f.problem().as_deref(), Some("at least 0.5"));
    }

    #[test]
    fn required_empty_fields_block_and_optional_ones_are_left_out() {
        let mut name = text(None, None, None);
        name.required = true;
        let note = Field::new(
            "note",
            FieldKind::Text {
                format: None,
                min_length: None,
                max_length: None,
            },
        );
        let mut form = Form {
            fields: vec![name, note],
        };
        assert_eq!(
            form.content(),
            Err(vec![Problem {
                field: 0,
                message: "required".into()
            }])
        );
        form.fields[0].type_char('x');
        let content = form.content().unwrap();
        assert_eq!(Value::Object(content), serde_json::json!({"t": "x"}));
    }

    #[test]
    fn choices_move_toggle_and_send_values_not_labels() {
        let items = vec![
            Item {
                value: "r".into(),
                label: "Red".into(),
            },
            Item {
                value: "g".into(),
                label: "Green".into(),
            },
        ];
        let mut one = Field::new(
            "colour",
            FieldKind::OneOf {
                items: items.clone(),
            },
        );
        one.required = true;
        assert_eq!(one.problem().as_deref(), Some("pick one"));
        one.step(true);
        assert_eq!(one.value(), Some(Value::from("r")));
        one.step(true);
        assert_eq!(one.shown(), "Green");
        let mut many = Field::new(
            "colours",
            FieldKind::ManyOf {
                items,
                min_items: Some(1),
                max_items: Some(1),
            },
        );
        assert_eq!(many.problem().as_deref(), Some("pick at least 1"));
        many.toggle();
        many.step(true);
        many.toggle();
        assert_eq!(many.problem().as_deref(), Some("pick at most 1"));
        many.toggle();
        assert_eq!(many.value(), Some(serde_json::json!(["r"])));
        let mut flag = Field::new("ok", FieldKind::Boolean);
        assert_eq!(flag.value(), None);
        flag.toggle();
        assert_eq!(flag.value(), Some(Value::Bool(true)));
    }
}
