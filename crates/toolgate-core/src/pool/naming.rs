//! Model-facing names: `mcp__{server}__{tool}` with every character outside
//! `[a-zA-Z0-9_-]` replaced by `_`, shortened deterministically past 64 characters.

use sha2::{Digest, Sha256};

/// Anthropic and OpenAI both cap tool names at 64 characters.
pub const MAX_NAME_LEN: usize = 64;

/// Length of the hex hash suffix that keeps shortened names unique.
const HASH_LEN: usize = 8;

pub use crate::ids::normalize;

/// Returns the model-facing name and whether it had to be shortened. The hash covers the
/// *raw* server and tool names, so two tools that normalize alike but differ raw still get
/// different shortened names, and the same tool gets the same name in every session.
pub fn model_facing_name(server: &str, tool: &str) -> (String, bool) {
    let full = format!("mcp__{}__{}", normalize(server), normalize(tool));
    if full.len() <= MAX_NAME_LEN {
        return (full, false);
    }
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0u8]);
    hasher.update(tool.as_bytes());
    let digest = hex::encode(hasher.finalize());
    let keep = MAX_NAME_LEN - HASH_LEN - 1;
    // `full` is ASCII after normalization, so byte slicing is on char boundaries.
    (format!("{}_{}", &full[..keep], &digest[..HASH_LEN]), true)
}
