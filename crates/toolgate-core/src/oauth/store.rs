//! The token file: every server's sign-in in one JSON file in the state directory, readable
//! by its owner only (0600, in a 0700 folder), replaced atomically and changed under an
//! advisory lock, so two toolgate processes never lose each other's tokens.
//!
//! One entry per server *and* URL: the tokens were issued for that resource, and a changed
//! URL in the configuration must not receive them.

use crate::oauth::AuthStatus;
use chrono::{DateTime, Utc};
use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthorizationMetadata, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

const FILE_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a toolgate token file ({reason}); move it away to sign in again")]
    Malformed { path: PathBuf, reason: String },
    #[error("no state directory: set $TOOLGATE_STATE_DIR or $HOME")]
    NoStateDir,
}

/// How toolgate is known to the authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRecord {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub redirect_uri: String,
    pub registration: Registration,
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("registration", &self.registration)
            .finish()
    }
}

/// Which of the spec's ways gave toolgate its client ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Registration {
    /// `oauth.clientId` in the configuration.
    Preregistered,
    /// A client ID metadata document URL.
    MetadataDocument,
    /// RFC 7591 dynamic registration.
    Dynamic,
}

/// One server's sign-in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub server: String,
    /// The configured URL this entry belongs to.
    pub url: String,
    /// What the tokens are for (RFC 8707): the protected resource metadata's `resource`,
    /// else the URL. Sent again on every refresh.
    #[serde(default)]
    pub resource: Option<String>,
    #[serde(default)]
    pub client: Option<ClientRecord>,
    /// The authorization server's metadata, so a refresh needs no discovery.
    #[serde(default)]
    pub metadata: Option<AuthorizationMetadata>,
    #[serde(default)]
    pub credentials: Option<StoredCredentials>,
    /// Why the last refresh failed; cleared by the next successful one.
    #[serde(default)]
    pub refresh_failed: Option<String>,
}

impl Entry {
    pub fn new(server: &str, url: &str) -> Entry {
        Entry {
            server: server.to_string(),
            url: url.to_string(),
            resource: None,
            client: None,
            metadata: None,
            credentials: None,
            refresh_failed: None,
        }
    }

    pub fn has_token(&self) -> bool {
        self.credentials
            .as_ref()
            .is_some_and(|c| c.token_response.is_some())
    }

    /// When the access token runs out, if the server said.
    pub fn expires_at(&self) -> Option<DateTime<Utc>> {
        let credentials = self.credentials.as_ref()?;
        let lifetime = credentials.token_response.as_ref()?.expires_in()?;
        let received = credentials.token_received_at?;
        let seconds = received.checked_add(lifetime.as_secs())?;
        DateTime::from_timestamp(i64::try_from(seconds).ok()?, 0)
    }

    pub fn status(&self) -> AuthStatus {
        match (&self.refresh_failed, self.has_token()) {
            (Some(reason), _) => AuthStatus::RefreshFailed {
                reason: reason.clone(),
            },
            (None, true) => AuthStatus::SignedIn {
                expires_at: self.expires_at(),
            },
            (None, false) => AuthStatus::SignInNeeded,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Contents {
    version: u32,
    #[serde(default)]
    servers: Vec<Entry>,
}

/// The token file at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// `state_dir/oauth/tokens.json`.
    pub fn in_state_dir() -> Result<TokenFile, StoreError> {
        let dir = crate::paths::state_dir().ok_or(StoreError::NoStateDir)?;
        Ok(TokenFile::at(dir.join("oauth").join("tokens.json")))
    }

    pub fn at(path: PathBuf) -> TokenFile {
        TokenFile { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry of `server` for `url`, if there is one.
    pub fn entry(&self, server: &str, url: &str) -> Result<Option<Entry>, StoreError> {
        let contents = self.read()?;
        Ok(contents
            .servers
            .into_iter()
            .find(|e| e.server == server && e.url == url))
    }

    /// Changes the entry of `server` for `url` (None: there is none yet; set it to None
    /// to remove it) under the file lock, and writes the file back.
    pub fn update<R>(
        &self,
        server: &str,
        url: &str,
        change: impl FnOnce(&mut Option<Entry>) -> R,
    ) -> Result<R, StoreError> {
        let _lock = self.lock()?;
        self.update_locked(server, url, change)
    }

    /// [`update`](Self::update) for a caller that already holds the lock.
    pub(super) fn update_locked<R>(
        &self,
        server: &str,
        url: &str,
        change: impl FnOnce(&mut Option<Entry>) -> R,
    ) -> Result<R, StoreError> {
        let mut contents = self.read()?;
        let at = contents
            .servers
            .iter()
            .position(|e| e.server == server && e.url == url);
        let mut entry = at.map(|i| contents.servers.remove(i));
        let result = change(&mut entry);
        if let Some(entry) = entry {
            contents
                .servers
                .insert(at.unwrap_or(contents.servers.len()), entry);
        }
        self.write(&contents)?;
        Ok(result)
    }

    /// Forgets every entry of `server` (whatever its URL). True if there was one.
    pub fn remove_server(&self, server: &str) -> Result<bool, StoreError> {
        let _lock = self.lock()?;
        let mut contents = self.read()?;
        let before = contents.servers.len();
        contents.servers.retain(|e| e.server != server);
        let removed = contents.servers.len() != before;
        if removed {
            self.write(&contents)?;
        }
        Ok(removed)
    }

    fn read(&self) -> Result<Contents, StoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Contents {
                    version: FILE_VERSION,
                    servers: Vec::new(),
                });
            }
            Err(source) => {
                return Err(StoreError::Io {
                    action: "read",
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let contents: Contents =
            serde_json::from_str(&text).map_err(|e| StoreError::Malformed {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
        if contents.version != FILE_VERSION {
            return Err(StoreError::Malformed {
                path: self.path.clone(),
                reason: format!("version {} (expected {FILE_VERSION})", contents.version),
            });
        }
        Ok(contents)
    }

    fn dir(&self) -> Result<&Path, StoreError> {
        let dir = self.path.parent().ok_or_else(|| StoreError::Malformed {
            path: self.path.clone(),
            reason: "the path has no folder".into(),
        })?;
        if !dir.is_dir() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                action: "create",
                path: dir.to_path_buf(),
                source,
            })?;
            // Only the owner may list or enter the folder the tokens live in.
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
        Ok(dir)
    }

    /// Writes a temporary file created 0600, then renames it over the old one: a reader
    /// sees the old or the new contents, never half, and the tokens are never readable by
    /// others, not even for a moment.
    fn write(&self, contents: &Contents) -> Result<(), StoreError> {
        let dir = self.dir()?;
        let io = |action, source| StoreError::Io {
            action,
            path: self.path.clone(),
            source,
        };
        let text = serde_json::to_vec_pretty(contents)
            .map_err(|e| io("serialize", std::io::Error::other(e)))?;
        let temp = dir.join(format!(".tokens.{}.tmp", std::process::id()));
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)
            .map_err(|e| io("write", e))?;
        // A file left behind by a crash may have other permissions; `mode` only applies
        // to files it creates.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io("protect", e))?;
        file.write_all(&text).map_err(|e| io("write", e))?;
        file.sync_all().map_err(|e| io("write", e))?;
        std::fs::rename(&temp, &self.path).map_err(|e| io("replace", e))
    }

    /// An exclusive advisory lock on `tokens.json.lock`, held until the value is dropped.
    pub(super) fn lock(&self) -> Result<FileLock, StoreError> {
        self.dir()?;
        let path = self.path.with_extension("json.lock");
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|source| StoreError::Io {
                action: "open",
                path: path.clone(),
                source,
            })?;
        FileLock::exclusive(file).map_err(|source| StoreError::Io {
            action: "lock",
            path,
            source,
        })
    }
}

/// An exclusive advisory lock (`flock(2)` on Unix); closing the file releases it.
#[derive(Debug)]
pub(super) struct FileLock {
    _file: File,
}

impl FileLock {
    fn exclusive(file: File) -> std::io::Result<FileLock> {
        crate::paths::lock_exclusive(&file)?;
        Ok(FileLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn credentials(expires_in: Option<u64>, received_at: u64) -> StoredCredentials {
        let mut json = serde_json::json!({"access_token": "at-1", "token_type": "Bearer"});
        if let Some(seconds) = expires_in {
            json["expires_in"] = seconds.into();
        }
        let token = serde_json::from_value(json).unwrap();
        StoredCredentials::new("client".into(), Some(token), vec![], Some(received_at))
    }

    #[test]
    fn file_is_owner_only_and_entries_are_per_server_and_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::at(dir.path().join("oauth").join("tokens.json"));
        assert!(file.entry("a", "http://x/mcp").unwrap().is_none());
        file.update("a", "http://x/mcp", |e| {
            let mut entry = Entry::new("a", "http://x/mcp");
            entry.credentials = Some(credentials(Some(3600), 1_000));
            *e = Some(entry);
        })
        .unwrap();
        file.update("b", "http://y/mcp", |e| {
            *e = Some(Entry::new("b", "http://y/mcp"))
        })
        .unwrap();

        let meta = std::fs::metadata(file.path()).unwrap();
        assert_eq!(
            meta.mode() & 0o777,
            0o600,
            "tokens readable by the owner only"
        );
        let folder = std::fs::metadata(file.path().parent().unwrap()).unwrap();
        assert_eq!(folder.mode() & 0o777, 0o700);

        let a = file.entry("a", "http://x/mcp").unwrap().unwrap();
        assert!(a.has_token());
        assert!(
            file.entry("a", "http://other/mcp").unwrap().is_none(),
            "a changed URL does not get the old tokens"
        );
        assert_eq!(
            file.entry("b", "http://y/mcp").unwrap().unwrap().status(),
            AuthStatus::SignInNeeded
        );
        assert!(file.remove_server("a").unwrap());
        assert!(!file.remove_server("a").unwrap());
        assert!(file.entry("a", "http://x/mcp").unwrap().is_none());
        assert!(file.entry("b", "http://y/mcp").unwrap().is_some());
    }

    #[test]
    fn expiry_and_status() {
        let mut entry = Entry::new("a", "u");
        entry.credentials = Some(credentials(Some(60), 1_700_000_000));
        assert_eq!(
            entry.expires_at(),
            DateTime::from_timestamp(1_700_000_060, 0),
            "received time plus lifetime"
        );
        assert!(matches!(entry.status(), AuthStatus::SignedIn { .. }));
        entry.refresh_failed = Some("invalid_grant".into());
        assert!(matches!(entry.status(), AuthStatus::RefreshFailed { .. }));
        entry.credentials = Some(credentials(None, 1));
        entry.refresh_failed = None;
        assert_eq!(entry.status(), AuthStatus::SignedIn { expires_at: None });
    }

    #[test]
    fn a_foreign_file_is_reported_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        std::fs::write(&path, "not json").unwrap();
        let file = TokenFile::at(path.clone());
        let err = file.update("a", "u", |_| ()).unwrap_err();
        assert!(
            err.to_string().contains("is not a toolgate token file"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json");
    }
}
