//! `toolgate audit verify|export`: checks a session file's hash chain against its head
//! (see `journal::chain`), and lists a session's permission decisions as JSONL or CSV.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::error::Failure;
use crate::journal::chain::verify::{Verdict, verify};
use crate::journal::chain::{Chain, head_path, read_head};
use crate::journal::{self, Record, ResumeFrom, SessionError};
use crate::policy::AuditRecord;
use crate::protocol::Event;

#[derive(Debug, Clone, clap::Subcommand)]
pub enum AuditCommand {
    /// Check that a session file is as it was written: every record linked to the one
    /// before it, and the file's end matching the head kept beside it. Exits 1 naming the
    /// first broken line.
    Verify {
        /// The session (default: the latest session of this workspace).
        session: Option<String>,
        /// Check every session.
        #[arg(long, conflicts_with = "session")]
        all: bool,
    },
    /// Print a session's permission decisions: time, tool, input digest, decision, who
    /// decided and by which rule, grant or answer, and whether a managed policy did.
    Export {
        /// The session (default: the latest session of this workspace).
        session: Option<String>,
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Csv,
}

/// Runs an audit command over the sessions in `sessions` (None: no state directory) for
/// `workspace`; returns what to print and the exit code.
pub fn run(
    command: &AuditCommand,
    sessions: Option<&Path>,
    workspace: &Path,
) -> Result<(String, i32), Failure> {
    let sessions = sessions.ok_or_else(|| Failure::Run(SessionError::NoStateDir.to_string()))?;
    match command {
        AuditCommand::Verify { all: true, .. } => Ok(verify_all(sessions)),
        AuditCommand::Verify { session, .. } => {
            let id = pick(sessions, workspace, session.as_deref())?;
            let (line, ok) = verify_one(sessions, &id);
            Ok((line, if ok { 0 } else { 1 }))
        }
        AuditCommand::Export { session, format } => {
            let id = pick(sessions, workspace, session.as_deref())?;
            let records =
                journal::read_records(sessions, &id).map_err(|e| Failure::Run(e.to_string()))?;
            Ok((export(&records, *format), 0))
        }
    }
}

/// The session named, or the latest of the workspace.
fn pick(sessions: &Path, workspace: &Path, id: Option<&str>) -> Result<String, Failure> {
    let from = id.map_or(ResumeFrom::Latest, |id| ResumeFrom::Id(id.to_string()));
    journal::resolve(sessions, workspace, &from).map_err(|e| Failure::Usage(e.to_string()))
}

fn verify_all(sessions: &Path) -> (String, i32) {
    let ids = journal::all_ids(sessions);
    if ids.is_empty() {
        return (format!("No sessions in {}.\n", sessions.display()), 0);
    }
    let mut out = String::new();
    let mut broken = 0;
    for id in &ids {
        let (line, ok) = verify_one(sessions, id);
        out.push_str(&line);
        broken += usize::from(!ok);
    }
    let _ = writeln!(out, "{} session(s) checked, {broken} broken.", ids.len());
    (out, i32::from(broken > 0))
}

/// One line saying how session `id` stands, and whether it holds.
fn verify_one(sessions: &Path, id: &str) -> (String, bool) {
    let path = journal::log_path(sessions, id);
    let read = || -> std::io::Result<(Vec<u8>, _)> {
        use std::io::Read as _;
        let file = std::fs::File::open(&path)?;
        // A writer appends and rewrites the head under this lock: both are read whole.
        let _locked = Chain::lock(&file)?;
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes)?;
        Ok((bytes, read_head(&head_path(sessions, id))))
    };
    let (bytes, head) = match read() {
        Ok(read) => read,
        Err(e) => {
            return (
                format!("{id}: cannot read {}: {e}\n", path.display()),
                false,
            );
        }
    };
    match verify(&bytes, head) {
        Verdict::Intact {
            records,
            unchained_lines,
            cut_lines,
        } => {
            let mut line = format!("{id}: intact ({records} records chained");
            if unchained_lines > 0 {
                let _ = write!(
                    line,
                    "; {unchained_lines} earlier lines unchained, covered as a whole"
                );
            }
            if cut_lines > 0 {
                let _ = write!(line, "; {cut_lines} record(s) cut short by a crash");
            }
            (format!("{line})\n"), true)
        }
        Verdict::Unchained { lines } => (
            format!(
                "{id}: unchained ({lines} lines written before the audit chain; nothing to check)\n"
            ),
            true,
        ),
        Verdict::NotVerifiable { lines, declared_at } => (
            format!(
                "{id}: NOT VERIFIABLE: its audit chain was removed (line {declared_at} says it was written chained, yet none of its {lines} lines carries a link and its head is missing); nothing in it can be trusted as written\n"
            ),
            false,
        ),
        Verdict::Broken(b) => (
            format!("{id}: BROKEN at line {}: {}\n", b.line, b.what),
            false,
        ),
    }
}

/// One exported decision.
#[derive(Debug, Serialize)]
struct Row<'a> {
    time: &'a str,
    /// The tool call's id; empty for a server's sampling request.
    call_id: &'a str,
    tool: &'a str,
    input_digest: &'a str,
    decision: &'static str,
    decider: &'static str,
    detail: String,
    managed: bool,
}

impl<'a> Row<'a> {
    fn new(call_id: &'a str, record: &'a AuditRecord) -> Row<'a> {
        Row {
            time: &record.time,
            call_id,
            tool: &record.tool,
            input_digest: &record.input_digest,
            decision: match record.decision {
                crate::policy::Permit::Allow => "allow",
                crate::policy::Permit::Deny => "deny",
            },
            decider: record.decider.word(),
            detail: record.decider.detail(),
            managed: record.decider.is_managed(),
        }
    }

    fn csv(&self) -> String {
        let managed = if self.managed { "true" } else { "false" };
        [
            self.time,
            self.call_id,
            self.tool,
            self.input_digest,
            self.decision,
            self.decider,
            &self.detail,
            managed,
        ]
        .iter()
        .map(|field| csv_field(field))
        .collect::<Vec<_>>()
        .join(",")
    }
}

const CSV_HEADER: &str = "time,call_id,tool,input_digest,decision,decider,detail,managed";

/// The permission decisions among `records`: tool calls, servers' sampling requests and
/// connections through the network gate's proxy.
fn export(records: &[Record], format: ExportFormat) -> String {
    let rows = records.iter().filter_map(|record| match record {
        Record::Fact(Event::PermissionDecided(line)) => {
            Some(Row::new(line.call_id.as_str(), &line.record))
        }
        Record::Fact(Event::Sampling(report)) => report.decision.as_ref().map(|d| Row::new("", d)),
        Record::Fact(Event::NetworkDecided(line)) => Some(Row::new(
            line.client.call_id().map(|id| id.as_str()).unwrap_or(""),
            &line.record,
        )),
        _ => None,
    });
    let mut out = String::new();
    match format {
        ExportFormat::Jsonl => {
            for row in rows {
                // Strings and booleans: serializing cannot fail.
                out.push_str(&serde_json::to_string(&row).unwrap_or_default());
                out.push('\n');
            }
        }
        ExportFormat::Csv => {
            out.push_str(CSV_HEADER);
            out.push('\n');
            for row in rows {
                out.push_str(&row.csv());
                out.push('\n');
            }
        }
    }
    out
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, with
/// quotes doubled.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"no\""), "\"say \"\"no\"\"\"");
    }
}
