//! What an `elicitation/create` asks, read from its params: a form from the
//! `requestedSchema`, or a web page to open. Anything toolgate cannot show is an error
//! that says why.

use crate::mcp::form::{Field, FieldKind, Form, Input, Item, TextFormat};
use serde_json::{Map, Value};

/// What the server asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAsk {
    Form {
        message: String,
        form: Form,
    },
    Url {
        message: String,
        url: String,
        /// The URL's host, shown apart from it.
        domain: String,
    },
}

/// The question an `elicitation/create`'s params ask, or why it cannot be asked.
pub fn read_request(params: &Value) -> Result<ElicitationAsk, String> {
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .ok_or("it has no message")?
        .to_string();
    match params.get("mode").and_then(Value::as_str) {
        Some("url") => {
            let raw = params
                .get("url")
                .and_then(Value::as_str)
                .ok_or("url mode without a url")?;
            let url = reqwest::Url::parse(raw).map_err(|e| format!("the url '{raw}': {e}"))?;
            if !matches!(url.scheme(), "https" | "http") {
                return Err(format!(
                    "the url '{raw}' is not an http(s) address; toolgate opens only web pages"
                ));
            }
            let domain = url.host_str().ok_or("the url has no host")?.to_string();
            Ok(ElicitationAsk::Url {
                message,
                url: url.to_string(),
                domain,
            })
        }
        None | Some("form") => {
            let schema = params
                .get("requestedSchema")
                .ok_or("a form request without a requestedSchema")?;
            Ok(ElicitationAsk::Form {
                message,
                form: form_from_schema(schema)?,
            })
        }
        Some(other) => Err(format!("unknown mode '{other}'")),
    }
}

/// A form from a `requestedSchema`: an object of flat properties (strings with length
/// limits and formats, numbers and integers with bounds, booleans, single and multiple
/// choices, titled or not). Defaults are entered into the form (SEP-1034). Anything else
/// is an error that names the property and what is wrong with it.
pub fn form_from_schema(schema: &Value) -> Result<Form, String> {
    let object = schema
        .as_object()
        .ok_or("the requestedSchema is not an object")?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the requestedSchema's type is not \"object\"".into());
    }
    let properties = match object.get("properties") {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err("its properties are not an object".into()),
    };
    let required: Vec<String> = match object.get("required") {
        None => Vec::new(),
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| n.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("its required list holds something other than names")?,
        Some(_) => return Err("its required list is not an array".into()),
    };
    if let Some(missing) = required.iter().find(|n| !properties.contains_key(*n)) {
        return Err(format!("'{missing}' is required but not a property"));
    }
    let mut fields = Vec::with_capacity(properties.len());
    for (name, property) in &properties {
        let mut field =
            field_from(name, property).map_err(|why| format!("property '{name}': {why}"))?;
        field.required = required.contains(name);
        fields.push(field);
    }
    Ok(Form { fields })
}

fn text_of(property: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match property.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("its {key} is not a string")),
    }
}

/// A number the property may give under `key`, read with `read` ("its {key} is not
/// {kind}" when `read` finds none).
fn number_of<T>(
    property: &Map<String, Value>,
    key: &str,
    read: fn(&Value) -> Option<T>,
    kind: &str,
) -> Result<Option<T>, String> {
    match property.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v)
            .map(Some)
            .ok_or_else(|| format!("its {key} is not {kind}")),
    }
}

fn count_of(property: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    number_of(property, key, Value::as_u64, "a whole number ≥ 0")
}

fn bound_of(property: &Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    number_of(property, key, Value::as_f64, "a number")
}

/// Reads one limit of a property ([`count_of`], [`bound_of`]).
type ReadLimit<T> = fn(&Map<String, Value>, &str) -> Result<Option<T>, String>;

/// A property's lower and upper limit, each read with `read`; when both are given, the
/// lower must not be above the upper.
fn range_of<T: PartialOrd + std::fmt::Display>(
    property: &Map<String, Value>,
    (low, high): (&str, &str),
    read: ReadLimit<T>,
) -> Result<(Option<T>, Option<T>), String> {
    let (min, max) = (read(property, low)?, read(property, high)?);
    if let (Some(min), Some(max)) = (&min, &max)
        && min > max
    {
        return Err(format!("{low} {min} is above {high} {max}"));
    }
    Ok((min, max))
}

fn strings(list: &Value, what: &str) -> Result<Vec<String>, String> {
    list.as_array()
        .ok_or_else(|| format!("its {what} is not an array"))?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("its {what} holds something other than strings"))
}

/// `[{"const": "r", "title": "Red"}, …]`
fn titled(list: &Value, what: &str) -> Result<Vec<Item>, String> {
    list.as_array()
        .ok_or_else(|| format!("its {what} is not an array"))?
        .iter()
        .map(|option| {
            let value = option.get("const").and_then(Value::as_str)?;
            let label = option.get("title").and_then(Value::as_str).unwrap_or(value);
            Some(Item {
                value: value.to_string(),
                label: label.to_string(),
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("an option of its {what} has no string const"))
}

fn untitled(values: Vec<String>, names: Option<Vec<String>>) -> Result<Vec<Item>, String> {
    if let Some(names) = &names
        && names.len() != values.len()
    {
        return Err(format!(
            "it has {} enumNames for {} enum values",
            names.len(),
            values.len()
        ));
    }
    Ok(values
        .into_iter()
        .enumerate()
        .map(|(i, value)| Item {
            label: names
                .as_ref()
                .and_then(|n| n.get(i).cloned())
                .unwrap_or_else(|| value.clone()),
            value,
        })
        .collect())
}

fn field_from(name: &str, property: &Value) -> Result<Field, String> {
    let property = property.as_object().ok_or("it is not an object")?;
    let kind_name = property
        .get("type")
        .and_then(Value::as_str)
        .ok_or("it has no type")?;
    let default = property.get("default").filter(|d| !d.is_null());
    let kind = match kind_name {
        "string" if property.contains_key("enum") || property.contains_key("oneOf") => {
            let items = match (property.get("oneOf"), property.get("enum")) {
                (Some(options), _) => titled(options, "oneOf")?,
                (None, Some(values)) => {
                    let names = property
                        .get("enumNames")
                        .map(|n| strings(n, "enumNames"))
                        .transpose()?;
                    untitled(strings(values, "enum")?, names)?
                }
                (None, None) => Vec::new(),
            };
            FieldKind::OneOf { items }
        }
        "string" => {
            let format = match text_of(property, "format")?.as_deref() {
                None => None,
                Some("email") => Some(TextFormat::Email),
                Some("uri") => Some(TextFormat::Uri),
                Some("date") => Some(TextFormat::Date),
                Some("date-time") => Some(TextFormat::DateTime),
                Some(other) => return Err(format!("unknown string format '{other}'")),
            };
            let (min_length, max_length) =
                range_of(property, ("minLength", "maxLength"), count_of)?;
            let limit = |n: Option<u64>| n.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
            FieldKind::Text {
                format,
                min_length: limit(min_length),
                max_length: limit(max_length),
            }
        }
        "number" | "integer" => {
            let (minimum, maximum) = range_of(property, ("minimum", "maximum"), bound_of)?;
            FieldKind::Number {
                integer: kind_name == "integer",
                minimum,
                maximum,
            }
        }
        "boolean" => FieldKind::Boolean,
        "array" => {
            let items = property.get("items").ok_or("an array without items")?;
            let options = match (items.get("anyOf").or(items.get("oneOf")), items.get("enum")) {
                (Some(options), _) => titled(options, "items")?,
                (None, Some(values)) => untitled(strings(values, "items' enum")?, None)?,
                (None, None) => {
                    return Err("an array whose items are not a list of options".into());
                }
            };
            let (min_items, max_items) = range_of(property, ("minItems", "maxItems"), count_of)?;
            FieldKind::ManyOf {
                items: options,
                min_items,
                max_items,
            }
        }
        other => {
            return Err(format!(
                "type '{other}' cannot be asked in a form (only string, number, integer, \
                 boolean and arrays of options)"
            ));
        }
    };
    if let FieldKind::OneOf { items } | FieldKind::ManyOf { items, .. } = &kind
        && items.is_empty()
    {
        return Err("a choice without options".into());
    }
    let mut field = Field::new(name, kind);
    field.title = text_of(property, "title")?;
    field.description = text_of(property, "description")?;
    if let Some(default) = default {
        enter_default(&mut field, default)?;
    }
    Ok(field)
}

/// Enters a default as if the person had typed or picked it; one that does not fit the
/// field's own limits is a malformed schema.
fn enter_default(field: &mut Field, default: &Value) -> Result<(), String> {
    let mismatch = || format!("its default {default} does not fit its type");
    let position = |items: &[Item], value: &Value| {
        let value = value.as_str()?;
        items.iter().position(|item| item.value == value)
    };
    field.input = match (&field.kind, default) {
        (FieldKind::Text { .. }, Value::String(s)) => Input::Text(s.clone()),
        (FieldKind::Number { .. }, Value::Number(n)) => Input::Text(n.to_string()),
        (FieldKind::Boolean, Value::Bool(b)) => Input::Bool(Some(*b)),
        (FieldKind::OneOf { items }, value) => {
            let at = position(items, value)
                .ok_or_else(|| format!("its default {default} is not one of its options"))?;
            field.cursor = at;
            Input::One(Some(at))
        }
        (FieldKind::ManyOf { items, .. }, Value::Array(values)) => {
            let mut flags = vec![false; items.len()];
            for value in values {
                let at = position(items, value)
                    .ok_or_else(|| format!("its default {value} is not one of its options"))?;
                flags[at] = true;
            }
            Input::Many(flags)
        }
        _ => return Err(mismatch()),
    };
    field.caret_to_end();
    if let Some(problem) = field.problem() {
        return Err(format!("its default {default} is invalid: {problem}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_sep1034_defaults_are_entered_and_sent_untouched() {
        let form = form_from_schema(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "tags": {"type": "array", "items": {"anyOf": [
                    {"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
                    "default": ["b"]},
                "note": {"type": "string"}
            },
            "required": []
        }))
        .unwrap();
        assert_eq!(
            Value::Object(form.content().unwrap()),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                   "verified": true, "tags": ["b"]})
        );
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["name", "age", "score", "status", "verified", "tags", "note"],
            "the server's order"
        );
    }

    #[test]
    fn titled_and_legacy_enums_show_titles_and_send_values() {
        let form = form_from_schema(&json!({
            "type": "object",
            "properties": {
                "size": {"type": "string", "oneOf": [
                    {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "tier": {"type": "string", "enum": ["f", "p"], "enumNames": ["Free", "Pro"]}
            },
            "required": ["size"]
        }))
        .unwrap();
        assert!(form.fields[0].required);
        let FieldKind::OneOf { items } = &form.fields[1].kind else {
            panic!("{:?}", form.fields[1].kind)
        };
        assert_eq!(items[1].label, "Pro");
        assert_eq!(items[1].value, "p");
    }

    #[test]
    fn malformed_schemas_are_refused_with_the_reason() {
        let cases = [
            (json!({"type": "array"}), "type is not \"object\""),
            (
                json!({"type": "object", "properties": {"a": {"type": "object"}}}),
                "property 'a': type 'object' cannot be asked",
            ),
            (
                json!({"type": "object", "properties": {}, "required": ["x"]}),
                "'x' is required but not a property",
            ),
            (
                json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}}}),
                "minimum 5 is above maximum 1",
            ),
            (
                json!({"type": "object", "properties": {"e": {"type": "string", "enum": []}}}),
                "a choice without options",
            ),
            (
                json!({"type": "object", "properties": {"e": {"type": "string", "enum": ["a"], "default": "b"}}}),
                "not one of its options",
            ),
            (
                json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 2, "default": "abc"}}}),
                "its default \"abc\" is invalid: at most 2 characters",
            ),
        ];
        for (schema, expected) in cases {
            let error = form_from_schema(&schema).unwrap_err();
            assert!(error.contains(expected), "{schema}: {error}");
        }
    }

    #[test]
    fn urls_must_be_web_pages_and_name_their_domain() {
        let ask = read_request(&json!({"mode": "url", "message": "m",
            "url": "https://pay.example.com/checkout?id=1", "elicitationId": "e1"}))
        .unwrap();
        assert_eq!(
            ask,
            ElicitationAsk::Url {
                message: "m".into(),
                url: "https://pay.example.com/checkout?id=1".into(),
                domain: "pay.example.com".into()
            }
        );
        let error =
            read_request(&json!({"mode": "url", "message": "m", "url": "file:///etc/passwd"}))
                .unwrap_err();
        assert!(error.contains("not an http(s) address"), "{error}");
        // A look-alike domain shows as what it is.
        let ask = read_request(&json!({"mode": "url", "message": "m",
            "url": "https://\u{0430}pple.com/login"}))
        .unwrap();
        let ElicitationAsk::Url { domain, .. } = ask else {
            panic!("{ask:?}")
        };
        assert_eq!(domain, "xn--pple-43d.com");
    }
}
