//! Canonical JSON: object keys sorted at every level and no whitespace, so that a hash over
//! a value does not depend on key order (tool definitions, call inputs in the audit record).

use serde_json::Value;

/// JSON with object keys sorted at every level and no whitespace, so that key order does
/// not change a hash over it (definitions here, call inputs in the audit record).
pub fn canonical_json(value: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(value, &mut canonical);
    canonical
}

/// JSON with object keys sorted at every level (serde_json keeps insertion order here).
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
