//! The gate's write-back to disk, run where blocking I/O belongs (the gate runs it through
//! `spawn_blocking`): "always" rules go into a config file through settings, the one
//! module that edits configuration files; the trust store and the pins files are written
//! with the one atomic write of [`crate::paths`].

use std::path::Path;

use super::GateError;
use crate::settings::AllowRuleError;

/// Adds `rule` to `[permissions] allow` of the config file at `path`; false when it was
/// already there. See [`crate::settings::append_allow_rule`].
pub fn append_allow_rule(path: &Path, rule: &str) -> Result<bool, GateError> {
    crate::settings::append_allow_rule(path, rule).map_err(|error| match error {
        AllowRuleError::Io { path, source } => GateError::Io { path, source },
        AllowRuleError::Toml { path, message } => GateError::Toml { path, message },
        AllowRuleError::Shape { path, what } => GateError::Shape { path, what },
    })
}

/// [`crate::paths::write_atomically`], its failure as the gate's error.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), GateError> {
    crate::paths::write_atomically(path, text.as_bytes()).map_err(|error| GateError::Io {
        path: error.path,
        source: error.source,
    })
}
