//! Where a server stands with its sign-in, as `toolgate mcp list` and the console's `/mcp`
//! say it: "sign in needed", "signed in (expires …)", "refresh failed".

use chrono::{DateTime, Local, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AuthStatus {
    /// The server asked for a sign-in and toolgate holds no token for it.
    SignInNeeded,
    SignedIn {
        /// When the access token runs out (None: the server did not say). A refresh
        /// token, when there is one, renews it before then.
        expires_at: Option<DateTime<Utc>>,
    },
    /// The token ran out and renewing it failed; the next use asks to sign in again.
    RefreshFailed { reason: String },
}

impl AuthStatus {
    /// One line, with the expiry in local time.
    pub fn describe(&self) -> String {
        match self {
            AuthStatus::SignInNeeded => "sign in needed".to_string(),
            AuthStatus::SignedIn {
                expires_at: Some(at),
            } => format!(
                "signed in (expires {})",
                at.with_timezone(&Local).format("%Y-%m-%d %H:%M")
            ),
            AuthStatus::SignedIn { expires_at: None } => "signed in (no expiry given)".to_string(),
            AuthStatus::RefreshFailed { reason } => format!("refresh failed: {reason}"),
        }
    }
}

impl std::fmt::Display for AuthStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_it_in_words() {
        assert_eq!(AuthStatus::SignInNeeded.describe(), "sign in needed");
        let at = DateTime::parse_from_rfc3339("2030-01-02T03:04:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let local = at
            .with_timezone(&Local)
            .format("%Y-%m-%d %H:%M")
            .to_string();
        assert_eq!(
            AuthStatus::SignedIn {
                expires_at: Some(at)
            }
            .describe(),
            format!("signed in (expires {local})")
        );
        assert_eq!(
            AuthStatus::RefreshFailed {
                reason: "invalid_grant".into()
            }
            .describe(),
            "refresh failed: invalid_grant"
        );
    }
}
