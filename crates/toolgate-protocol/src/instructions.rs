//! An instruction file the session loaded, as the front ends and the JSONL output report
//! it (issue 41): which file, whose, whether its project is trusted, what it imported and
//! what it was refused.

use serde::{Deserialize, Serialize};

use crate::InstructionScope;

/// One top-level instruction file (AGENTS.md / CLAUDE.md, or the user's own) that went
/// into the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionsLoaded {
    /// Relative to the project root for a project's file; absolute for the user's.
    pub path: String,
    pub scope: InstructionScope,
    /// Whether the project was trusted (`--trust-project`, or the person's yes in the
    /// console). A project's instruction files are read either way; this says which.
    pub project_trusted: bool,
    /// The files its `@path` lines pulled in (and theirs), in order.
    pub imports: Vec<String>,
    /// Its imports that were not read, and why.
    pub refused: Vec<RefusedImport>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedImport {
    /// As written after `@`.
    pub path: String,
    pub why: String,
}
