//! A form from an `elicitation/create`'s `requestedSchema` (the console draws it, the
//! core reads the request; both use this).

use crate::form::{Field, FieldKind, Form, Input, Item, TextFormat};
use serde_json::{Map, Value};

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
