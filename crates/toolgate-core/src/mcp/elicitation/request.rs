//! What an `elicitation/create` asks, read from its params: a form from the
//! `requestedSchema`, or a web page to open. Anything toolgate cannot show is an error
//! that says why.

#[cfg(test)]
use crate::mcp::form::FieldKind;
use crate::mcp::form::Form;
pub use crate::protocol::form_schema::form_from_schema;
use serde_json::Value;

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
