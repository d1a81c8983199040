//! One server's tokens as rmcp's OAuth client sees them: an in-memory copy of its entry in
//! the token file, written through on every change. Reading is a memory access (rmcp asks
//! for the token before every request); a refresh re-reads the file under its lock first,
//! so when two toolgate processes share a sign-in, the second uses the first one's fresh
//! token instead of spending an already-rotated refresh token.

use super::AuthStatus;
use super::store::{ClientRecord, Entry, FileLock, StoreError, TokenFile};
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a sign-in learned besides the tokens, written with them.
#[derive(Debug, Clone)]
pub struct Staged {
    pub client: ClientRecord,
    pub metadata: AuthorizationMetadata,
    pub resource: String,
}

struct Inner {
    file: TokenFile,
    server: String,
    url: String,
    entry: Mutex<Option<Entry>>,
    staged: Mutex<Option<Staged>>,
    /// Bumped whenever the stored tokens change: a caller that saw a 401 can tell whether
    /// someone signed in (or refreshed) since it sent its request.
    generation: AtomicU64,
    /// Set while rmcp holds the refresh guard, whose file lock writes then reuse.
    refreshing: Arc<AtomicBool>,
}

#[derive(Clone)]
pub struct ServerCredentials {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ServerCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCredentials")
            .field("server", &self.inner.server)
            .field("url", &self.inner.url)
            .finish_non_exhaustive()
    }
}

fn store_error(e: StoreError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

impl ServerCredentials {
    /// Reads the server's entry (blocking: call from a blocking context or at start-up).
    pub fn open(file: TokenFile, server: &str, url: &str) -> Result<ServerCredentials, StoreError> {
        let entry = file.entry(server, url)?;
        Ok(ServerCredentials {
            inner: Arc::new(Inner {
                file,
                server: server.to_string(),
                url: url.to_string(),
                entry: Mutex::new(entry),
                staged: Mutex::new(None),
                generation: AtomicU64::new(0),
                refreshing: Arc::default(),
            }),
        })
    }

    pub fn server(&self) -> &str {
        &self.inner.server
    }

    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The entry as last read or written.
    pub fn entry(&self) -> Option<Entry> {
        lock(&self.inner.entry).clone()
    }

    pub fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::SeqCst)
    }

    /// None when the server never asked for a sign-in.
    pub fn status(&self) -> Option<AuthStatus> {
        lock(&self.inner.entry).as_ref().map(Entry::status)
    }

    /// The scopes the current token was granted.
    pub fn granted_scopes(&self) -> Vec<String> {
        lock(&self.inner.entry)
            .as_ref()
            .and_then(|e| e.credentials.as_ref())
            .map(|c| c.granted_scopes.clone())
            .unwrap_or_default()
    }

    /// Remembers what goes into the entry with the tokens the running sign-in will save.
    /// None drops what a failed sign-in staged.
    pub fn stage(&self, staged: Option<Staged>) {
        *lock(&self.inner.staged) = staged;
    }

    /// Records that the server wants a sign-in (so `mcp list` says so), keeping any
    /// tokens: a refused token is not necessarily a useless refresh token.
    pub async fn mark_sign_in_needed(&self) -> Result<(), StoreError> {
        self.change(|entry, _| {
            if entry.is_none() {
                *entry = Some(Entry::new("", ""));
            }
        })
        .await
    }

    pub async fn mark_refresh_failed(&self, reason: &str) -> Result<(), StoreError> {
        let reason = reason.to_string();
        self.change(move |entry, _| {
            if let Some(entry) = entry {
                entry.refresh_failed = Some(reason);
            }
        })
        .await
    }

    /// Changes the entry in memory and in the file, on a blocking thread.
    async fn change(
        &self,
        edit: impl FnOnce(&mut Option<Entry>, Option<Staged>) + Send + 'static,
    ) -> Result<(), StoreError> {
        let inner = self.inner.clone();
        let staged = lock(&inner.staged).take();
        let apply = move || {
            let (server, url) = (inner.server.clone(), inner.url.clone());
            let write = |entry: &mut Option<Entry>| {
                edit(entry, staged);
                if let Some(entry) = entry {
                    // Entries created by `edit` know nothing of where they belong yet.
                    entry.server = server.clone();
                    entry.url = url.clone();
                }
                *lock(&inner.entry) = entry.clone();
            };
            if inner.refreshing.load(Ordering::SeqCst) {
                inner.file.update_locked(&server, &url, write)
            } else {
                inner.file.update(&server, &url, write)
            }
        };
        tokio::task::spawn_blocking(apply)
            .await
            .map_err(|e| StoreError::Io {
                action: "write",
                path: self.inner.file.path().to_path_buf(),
                source: std::io::Error::other(e),
            })?
    }

    fn tokens_changed(&self) {
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
    }

    async fn reload(&self) -> Result<(), StoreError> {
        let inner = self.inner.clone();
        let entry =
            tokio::task::spawn_blocking(move || inner.file.entry(&inner.server, &inner.url))
                .await
                .map_err(|e| StoreError::Io {
                    action: "read",
                    path: self.inner.file.path().to_path_buf(),
                    source: std::io::Error::other(e),
                })??;
        let mut current = lock(&self.inner.entry);
        let changed = current.as_ref().map(token_of) != entry.as_ref().map(token_of);
        *current = entry;
        if changed {
            self.inner.generation.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// The access token, to compare entries without comparing every field.
fn token_of(entry: &Entry) -> Option<String> {
    use oauth2::TokenResponse;
    entry
        .credentials
        .as_ref()?
        .token_response
        .as_ref()
        .map(|t| t.access_token().secret().clone())
}

/// Released on drop: the file lock closes, writes go back to taking it themselves.
struct RefreshGuard {
    _lock: FileLock,
    refreshing: Arc<AtomicBool>,
}

impl Drop for RefreshGuard {
    fn drop(&mut self) {
        self.refreshing.store(false, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(lock(&self.inner.entry)
            .as_ref()
            .and_then(|e| e.credentials.clone()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.change(move |entry, staged| {
            let entry = entry.get_or_insert_with(|| Entry::new("", ""));
            if let Some(staged) = staged {
                entry.client = Some(staged.client);
                entry.metadata = Some(staged.metadata);
                entry.resource = Some(staged.resource);
            }
            entry.credentials = Some(credentials);
            entry.refresh_failed = None;
        })
        .await
        .map_err(store_error)?;
        self.tokens_changed();
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.change(|entry, _| {
            if let Some(entry) = entry {
                entry.credentials = None;
            }
        })
        .await
        .map_err(store_error)?;
        self.tokens_changed();
        Ok(())
    }

    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.mark_refresh_failed("the authorization server rejected the refresh token")
            .await
            .map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let file = self.inner.file.clone();
        let lock = tokio::task::spawn_blocking(move || file.lock())
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(store_error)?;
        self.inner.refreshing.store(true, Ordering::SeqCst);
        let guard = RefreshGuard {
            _lock: lock,
            refreshing: self.inner.refreshing.clone(),
        };
        // Another process may have refreshed while we waited for the lock.
        self.reload().await.map_err(store_error)?;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}
