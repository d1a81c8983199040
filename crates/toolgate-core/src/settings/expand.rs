//! `${VAR}` and `${VAR:-default}` expansion, as in Claude Code's `.mcp.json`.

/// Where [`expand`] finds a variable's value (the process environment, or a test's map).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Expands every `${…}` in `input` using `lookup`. A variable that is unset and has no
/// default is an error naming it (the caller reports it and skips the entry, rather than
/// starting a server with a silently empty argument).
pub fn expand(input: &str, lookup: Env<'_>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unterminated(input.to_string()));
        };
        let body = &after[..end];
        let (name, default) = match body.find(":-") {
            Some(i) => (&body[..i], Some(&body[i + 2..])),
            None => (body, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ExpandError::InvalidName {
                name: name.to_string(),
                input: input.to_string(),
            });
        }
        match (lookup(name), default) {
            // `:-` also applies to a set-but-empty variable, as in the shell.
            (Some(v), None) => out.push_str(&v),
            (Some(v), Some(_)) if !v.is_empty() => out.push_str(&v),
            (_, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(ExpandError::Unset(name.to_string()));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Why a `${…}` could not be expanded (the entry holding it is skipped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("unterminated '${{' in {0:?}")]
    Unterminated(String),
    #[error("invalid variable name {name:?} in {input:?}")]
    InvalidName { name: String, input: String },
    #[error("environment variable {0} is not set (write ${{{0}:-default}} to give a default)")]
    Unset(String),
}

#[cfg(test)]
mod tests {
    use super::expand;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_plain_and_default() {
        assert_eq!(expand("${HOME}/x", &env).unwrap(), "/home/u/x");
        assert_eq!(expand("${NOPE:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand("${HOME:-x}", &env).unwrap(), "/home/u");
        assert_eq!(expand("${EMPTY:-d}", &env).unwrap(), "d");
        assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
        assert_eq!(expand("a${HOME}b${NOPE:-}c", &env).unwrap(), "a/home/ubc");
        assert_eq!(expand("no vars", &env).unwrap(), "no vars");
    }

    #[test]
    fn missing_and_malformed_are_errors() {
        assert!(
            expand("${NOPE}", &env)
                .unwrap_err()
                .to_string()
                .contains("NOPE is not set")
        );
        assert!(
            expand("${HOME", &env)
                .unwrap_err()
                .to_string()
                .contains("unterminated")
        );
        assert!(
            expand("${A B}", &env)
                .unwrap_err()
                .to_string()
                .contains("invalid variable")
        );
    }
}
