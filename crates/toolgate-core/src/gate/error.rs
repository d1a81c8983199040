//! What can go wrong where the gate reads or writes its files (the config file "always"
//! rules go to, the trust store, the pins files), and a rule that cannot be written.

use std::path::PathBuf;

use crate::policy::PolicyError;

#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid TOML, left unchanged: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}: {what} is not a table/array as expected, left unchanged")]
    Shape { path: PathBuf, what: String },
    #[error("{path}: not a valid trust store: {message}")]
    TrustStore { path: PathBuf, message: String },
    #[error(transparent)]
    Rule(#[from] PolicyError),
    #[error("no state directory to keep trusted folders in (set TOOLGATE_STATE_DIR)")]
    NoStateDir,
    #[error("{path}: not a valid pins file, left unchanged: {message}")]
    PinsFile { path: PathBuf, message: String },
}
