//! OAuth 2.1 for HTTP MCP servers, as the MCP authorization spec says, on rmcp's OAuth
//! client (`rmcp::transport::auth`): metadata discovery, registration, PKCE, resource
//! indicators, refresh. This module adds what a host needs around it: the token file
//! ([`store`], 0600), rmcp's credential store over it ([`credentials`]), the loopback
//! redirect listener, the browser, and the sign-in in two steps ([`flow`]) so a person can
//! be asked between finding the authorization server and going there.
//!
//! It knows nothing of the UI: the hub decides when to sign in and whom to ask.

mod browser;
mod credentials;
mod flow;
mod loopback;

mod store;

pub use crate::protocol::AuthStatus;
pub use browser::Opener;
pub use credentials::{ServerCredentials, Staged};
pub use flow::{
    CLIENT_NAME, Discovered, OAuthError, SignInRequest, authorize, describe, discover,
    restored_manager,
};
pub use loopback::{CALLBACK_PATH, Callback, CallbackError, Loopback};
pub use store::{ClientRecord, Entry, Registration, StoreError, TokenFile};
