//! Which changes are a turn's own: the files its tool calls changed, each with the state
//! to put back (as it was when the first call that touched it started) and the state the
//! turn left (when the last one ended). Pure: the calls come from the log.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::log::{Blob, CallFile, CallInfo, Change, FileChange};

/// One file the turn changed, as undo sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnChange {
    pub path: PathBuf,
    /// The snapshot holding the file as it was before the turn touched it (the start of
    /// the first call that changed it); undo restores from there.
    pub origin: String,
    /// The file then; None: it did not exist (the turn created it).
    pub from: Option<Blob>,
    /// The file as the turn left it; None: the turn deleted it.
    pub to: Option<Blob>,
    /// Someone else changed it between two of the turn's calls that both changed it:
    /// restoring `from` would undo their change too.
    pub interleaved: bool,
}

impl OwnChange {
    pub fn change(&self) -> Change {
        match (&self.from, &self.to) {
            (None, _) => Change::Created,
            (Some(_), None) => Change::Deleted,
            (Some(from), Some(to)) if from.kind() != to.kind() => Change::TypeChanged,
            (Some(_), Some(_)) => Change::Modified,
        }
    }

    pub fn file_change(&self) -> FileChange {
        FileChange {
            path: self.path.clone(),
            change: self.change(),
        }
    }
}

/// The turn's own changes from its ended calls, in path order. A file a later call put
/// back exactly as it was is no change at all.
pub(super) fn own_changes(calls: &[(String, Vec<CallFile>)]) -> Vec<OwnChange> {
    let mut by_path: BTreeMap<PathBuf, OwnChange> = BTreeMap::new();
    for (before, files) in calls {
        for file in files {
            match by_path.get_mut(&file.path) {
                Some(own) => {
                    own.interleaved |= own.to != file.from;
                    own.to = file.to.clone();
                }
                None => {
                    by_path.insert(
                        file.path.clone(),
                        OwnChange {
                            path: file.path.clone(),
                            origin: before.clone(),
                            from: file.from.clone(),
                            to: file.to.clone(),
                            interleaved: false,
                        },
                    );
                }
            }
        }
    }
    by_path
        .into_values()
        .filter(|own| own.from != own.to)
        .collect()
}

/// The calls of a checkpoint that ended, with their start state.
pub(super) fn ended_calls(calls: &[CallInfo]) -> Vec<(String, Vec<CallFile>)> {
    calls
        .iter()
        .filter_map(|c| {
            c.ended
                .as_ref()
                .map(|(_, files)| (c.before.clone(), files.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(oid: &str) -> Option<Blob> {
        Some(Blob {
            mode: 0o100644,
            oid: oid.into(),
        })
    }

    fn file(path: &str, from: Option<Blob>, to: Option<Blob>) -> CallFile {
        CallFile {
            path: path.into(),
            from,
            to,
        }
    }

    #[test]
    fn each_file_goes_back_to_before_its_first_call_and_a_gap_between_calls_is_flagged() {
        let calls = vec![
            (
                "c1".to_string(),
                vec![
                    file("a", None, blob("a1")),
                    file("b", blob("b0"), blob("b1")),
                ],
            ),
            (
                "c2".to_string(),
                vec![
                    file("a", blob("a1"), blob("a2")),
                    // Someone changed b to bX between the calls.
                    file("b", blob("bX"), blob("b2")),
                    file("c", blob("c0"), None),
                ],
            ),
            // A later call put d back: no change of the turn.
            ("c3".to_string(), vec![file("d", blob("d0"), blob("d1"))]),
            ("c4".to_string(), vec![file("d", blob("d1"), blob("d0"))]),
        ];
        let own = own_changes(&calls);
        let got: Vec<(&str, &str, Change, bool)> = own
            .iter()
            .map(|o| {
                (
                    o.path.to_str().unwrap(),
                    o.origin.as_str(),
                    o.change(),
                    o.interleaved,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", "c1", Change::Created, false),
                ("b", "c1", Change::Modified, true),
                ("c", "c2", Change::Deleted, false),
            ]
        );
        assert_eq!(own[0].to, blob("a2"));
    }
}
