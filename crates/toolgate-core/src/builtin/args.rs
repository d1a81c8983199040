//! Argument checking for the built-ins. Models send malformed input now and then; the
//! error must name the field so the model can fix its next call.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgError {
    #[error("the input must be a JSON object, got {0}")]
    NotAnObject(String),
    #[error("missing required field '{0}'")]
    Missing(&'static str),
    #[error("field '{field}' must be {expected}, got {found}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
        found: String,
    },
    #[error("unknown field '{field}' (allowed fields: {allowed})")]
    Unknown { field: String, allowed: String },
}

/// A validated view of one call's input object.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Checks that `input` is an object with no fields beyond `allowed` (the schemas say
    /// `additionalProperties: false`, so a stray field is a mistake worth reporting).
    pub fn new(input: &'a Value, allowed: &[&str]) -> Result<Self, ArgError> {
        let map = input
            .as_object()
            .ok_or_else(|| ArgError::NotAnObject(describe(input)))?;
        if let Some(field) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ArgError::Unknown {
                field: field.clone(),
                allowed: allowed.join(", "),
            });
        }
        Ok(Args { map })
    }

    /// `null` counts as absent: some models send it for optional fields they leave out.
    fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.get(field).filter(|v| !v.is_null())
    }

    pub fn string(&self, field: &'static str) -> Result<&'a str, ArgError> {
        match self.get(field) {
            None => Err(ArgError::Missing(field)),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(ArgError::WrongType {
                field,
                expected: "a string",
                found: describe(other),
            }),
        }
    }

    /// An optional integer of at least 1.
    pub fn positive_integer(&self, field: &'static str) -> Result<Option<u64>, ArgError> {
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        let wrong = || ArgError::WrongType {
            field,
            expected: "a positive integer",
            found: describe(value),
        };
        let n = match value {
            Value::Number(n) => match (n.as_u64(), n.as_f64()) {
                (Some(u), _) => u,
                // 5000.0 is an integer too; JSON does not tell them apart.
                (None, Some(f)) if f.fract() == 0.0 && f >= 1.0 && f <= u64::MAX as f64 => f as u64,
                _ => return Err(wrong()),
            },
            _ => return Err(wrong()),
        };
        if n == 0 {
            return Err(wrong());
        }
        Ok(Some(n))
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            if short.len() < s.len() {
                format!("string \"{short}…\"")
            } else {
                format!("string \"{short}\"")
            }
        }
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_missing_and_mistyped_fields() {
        let input = json!({"path": 3});
        let args = Args::new(&input, &["path", "limit"]).unwrap();
        assert_eq!(
            args.string("path").unwrap_err().to_string(),
            "field 'path' must be a string, got number 3"
        );
        let input = json!({});
        let args = Args::new(&input, &["path"]).unwrap();
        assert_eq!(
            args.string("path").unwrap_err().to_string(),
            "missing required field 'path'"
        );
    }

    #[test]
    fn rejects_unknown_fields_and_non_objects() {
        let input = json!({"path": "a", "offset": 3});
        let err = Args::new(&input, &["path", "limit"]).err().unwrap();
        assert_eq!(
            err.to_string(),
            "unknown field 'offset' (allowed fields: path, limit)"
        );
        let input = json!(["a"]);
        let err = Args::new(&input, &["path"]).err().unwrap();
        assert_eq!(
            err.to_string(),
            "the input must be a JSON object, got an array"
        );
    }

    #[test]
    fn positive_integers() {
        let input = json!({"a": 5, "b": 5000.0, "c": 0, "d": -1, "e": "5", "f": 1.5, "g": null});
        let args = Args::new(&input, &["a", "b", "c", "d", "e", "f", "g"]).unwrap();
        assert_eq!(args.positive_integer("a").unwrap(), Some(5));
        assert_eq!(args.positive_integer("b").unwrap(), Some(5000));
        assert_eq!(args.positive_integer("g").unwrap(), None);
        assert_eq!(args.positive_integer("missing").unwrap(), None);
        for field in ["c", "d", "e", "f"] {
            let err = args.positive_integer(field).unwrap_err().to_string();
            assert!(err.starts_with(&format!("field '{field}' must be a positive integer")));
        }
    }
}
