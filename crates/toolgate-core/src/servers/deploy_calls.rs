//! The deploy server's log of the calls it received: `<workspace>/.toolgate/deploy-calls.jsonl`,
//! one JSON line per call, appended and synced to disk as the server's first act on a call,
//! before its arguments are checked or any step runs.
//!
//! The deployment history (`deployments.json`) is written when a deployment ends, so it
//! cannot tell "never sent" from "sent, then cut off": a gate that forwarded a call and
//! then reported a denial would leave no history if the run ended during the steps. This
//! log can: a call that reached the server is in it, whatever happened next.

use std::{
    fs::{File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
    sync::Mutex,
};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The file name under `<workspace>/.toolgate/`.
pub const FILE_NAME: &str = "deploy-calls.jsonl";
/// Past this size the log is moved aside to `deploy-calls.jsonl.1` (replacing an older
/// one) before the next line, so a long-lived workspace does not grow it without bound.
const ROTATE_AT_BYTES: u64 = 1 << 20;

/// One received call, as written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReceivedCall {
    /// 1, 2, … in the order this server process received its calls.
    pub seq: u64,
    /// The server process, so lines of several runs in one workspace stay apart.
    pub pid: u32,
    pub tool: String,
    pub arguments: Value,
    pub received_at: DateTime<Utc>,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot record the call in {path}: {source}")]
pub struct RecordError {
    path: PathBuf,
    source: std::io::Error,
}

/// Appends received calls to the log of one workspace.
pub struct CallLog {
    path: PathBuf,
    /// The last sequence number used; held while a line is written so the file's order
    /// is the sequence's order.
    last_seq: Mutex<u64>,
}

impl CallLog {
    pub fn new(workspace: &Path) -> Self {
        Self {
            path: crate::paths::workspace_dir(workspace).join(FILE_NAME),
            last_seq: Mutex::new(0),
        }
    }

    /// Appends `tool` and `arguments` as one line and syncs it to disk before returning.
    pub fn record(&self, tool: &str, arguments: Value) -> Result<(), RecordError> {
        let mut last_seq = self
            .last_seq
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let call = ReceivedCall {
            seq: *last_seq + 1,
            pid: std::process::id(),
            tool: tool.to_owned(),
            arguments,
            received_at: Utc::now(),
        };
        self.append(&call).map_err(|source| RecordError {
            path: self.path.clone(),
            source,
        })?;
        *last_seq = call.seq;
        Ok(())
    }

    fn append(&self, call: &ReceivedCall) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(call)?;
        line.push(b'\n');
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let existing = match std::fs::metadata(&self.path) {
            Ok(meta) => Some(meta.len()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if existing.is_some_and(|len| len >= ROTATE_AT_BYTES) {
            let mut aside = self.path.clone().into_os_string();
            aside.push(".1");
            std::fs::rename(&self.path, aside)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // One write of the whole line: with O_APPEND, lines of concurrent writers (two
        // servers on one workspace) do not interleave.
        file.write_all(&line)?;
        file.sync_data()?;
        if existing.is_none_or(|len| len >= ROTATE_AT_BYTES) {
            // A new file is only durable once its folder's entry is.
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(path: &Path) -> Vec<ReceivedCall> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn calls_are_appended_in_order_with_their_arguments() {
        let ws = tempfile::tempdir().unwrap();
        let log = CallLog::new(ws.path());
        log.record("trigger", json!({"service": "web"})).unwrap();
        log.record("trigger", json!({"service": "api"})).unwrap();
        let calls = read(&ws.path().join(".toolgate").join(FILE_NAME));
        let seen: Vec<(u64, &str, &Value)> = calls
            .iter()
            .map(|c| (c.seq, c.tool.as_str(), &c.arguments))
            .collect();
        assert_eq!(
            seen,
            [
                (1, "trigger", &json!({"service": "web"})),
                (2, "trigger", &json!({"service": "api"}))
            ]
        );
        assert!(calls.iter().all(|c| c.pid == std::process::id()));
    }

    #[test]
    fn a_full_log_is_moved_aside_and_a_new_one_started() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path().join(".toolgate");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, vec![b'x'; ROTATE_AT_BYTES as usize]).unwrap();
        CallLog::new(ws.path())
            .record("trigger", json!({"service": "web"}))
            .unwrap();
        assert_eq!(read(&path).len(), 1);
        let aside = std::fs::metadata(dir.join(format!("{FILE_NAME}.1"))).unwrap();
        assert_eq!(aside.len(), ROTATE_AT_BYTES);
    }

    #[test]
    fn a_log_that_cannot_be_written_is_an_error_naming_it() {
        let ws = tempfile::tempdir().unwrap();
        // `.toolgate` is a file: nothing can be created under it.
        std::fs::write(ws.path().join(".toolgate"), "").unwrap();
        let err = CallLog::new(ws.path())
            .record("trigger", json!({}))
            .unwrap_err()
            .to_string();
        assert!(err.contains(FILE_NAME), "{err}");
    }
}
