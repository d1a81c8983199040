//! `"oauth"` in an HTTP entry of `.mcp.json`, spelled as Claude Code spells it:
//! `{"clientId", "clientSecret", "callbackPort", "scopes"}`, plus toolgate's
//! `"clientMetadataUrl"` (a client ID metadata document this client is known by). Every
//! string is `${VAR}`-expanded like the rest of the entry, so a secret can stay in the
//! environment.

use super::expand::expand;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How toolgate signs in to one HTTP server. All optional: with none of them set,
/// toolgate registers itself dynamically (RFC 7591) when the server asks for a sign-in.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, for a confidential pre-registered client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// A fixed port for the loopback redirect (the one registered with the client);
    /// otherwise a free port is picked for every sign-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// An HTTPS URL of a client ID metadata document describing toolgate; used as the
    /// client ID when the authorization server supports such documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for instead of the ones the server names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

/// What `{:?}` shows of a secret: whether there is one, never what it is.
pub(crate) fn redacted<T>(secret: &Option<T>) -> Option<&'static str> {
    secret.as_ref().map(|_| "[redacted]")
}

// The secret never reaches a log or an error message through `{:?}`.
impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &redacted(&self.client_secret))
            .field("callback_port", &self.callback_port)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Reads the entry's `"oauth"` object (absent or null: defaults).
pub(super) fn parse(
    entry: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthSettings, String> {
    let obj = match entry.get("oauth") {
        None | Some(Value::Null) => return Ok(OAuthSettings::default()),
        Some(Value::Object(obj)) => obj,
        Some(_) => {
            return Err(
                "\"oauth\" must be an object such as {\"clientId\": \"…\", \"callbackPort\": 8080}"
                    .into(),
            );
        }
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let value = expand(s, env).map_err(|e| e.to_string())?;
                Ok((!value.is_empty()).then_some(value))
            }
            Some(_) => Err(format!("\"oauth\".{key} must be a string")),
        }
    };
    let callback_port = match obj.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|port| u16::try_from(port).ok())
                .filter(|port| *port > 0)
                .ok_or("\"oauth\".callbackPort must be a port number between 1 and 65535")?,
        ),
    };
    let scopes = text("scopes")?.map(|list| list.split_whitespace().map(str::to_string).collect());
    let settings = OAuthSettings {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        callback_port,
        client_metadata_url: text("clientMetadataUrl")?,
        scopes,
    };
    if settings.client_secret.is_some() && settings.client_id.is_none() {
        return Err("\"oauth\".clientSecret needs \"oauth\".clientId beside it".into());
    }
    if let Some(url) = &settings.client_metadata_url
        && !url.starts_with("https://")
    {
        return Err(format!(
            "\"oauth\".clientMetadataUrl must be an https:// URL, got {url:?}"
        ));
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "SECRET").then(|| "s3cret".to_string())
    }

    fn entry(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn reads_claude_code_spelling_and_expands_variables() {
        let settings = parse(
            &entry(
                r#"{"oauth": {"clientId": "abc", "clientSecret": "${SECRET}", "callbackPort": 8976,
                    "scopes": "read write", "clientMetadataUrl": "https://example.com/client.json"}}"#,
            ),
            &env,
        )
        .unwrap();
        assert_eq!(settings.client_id.as_deref(), Some("abc"));
        assert_eq!(settings.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(settings.callback_port, Some(8976));
        assert_eq!(
            settings.scopes,
            Some(vec!["read".to_string(), "write".to_string()])
        );
        assert!(
            !format!("{settings:?}").contains("s3cret"),
            "the secret never appears in debug output"
        );
        assert_eq!(parse(&entry("{}"), &env).unwrap(), OAuthSettings::default());
    }

    #[test]
    fn says_what_is_wrong() {
        let err = |json: &str| parse(&entry(json), &env).unwrap_err();
        assert!(err(r#"{"oauth": "x"}"#).contains("must be an object"));
        assert!(err(r#"{"oauth": {"callbackPort": 70000}}"#).contains("between 1 and 65535"));
        assert!(err(r#"{"oauth": {"clientId": 5}}"#).contains("\"oauth\".clientId must be"));
        assert!(err(r#"{"oauth": {"clientSecret": "x"}}"#).contains("needs \"oauth\".clientId"));
        assert!(err(r#"{"oauth": {"clientId": "${NOPE}"}}"#).contains("NOPE is not set"));
        assert!(err(r#"{"oauth": {"clientMetadataUrl": "http://x/y"}}"#).contains("https:// URL"));
    }
}
