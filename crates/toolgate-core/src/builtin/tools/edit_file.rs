//! `edit_file`: one exact replacement in an existing file (see `files.rs`).

use std::path::Path;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::builtin::definitions::{object_schema, path_property, string_property};
use crate::builtin::handler::{
    BuiltinHandler, Definition, DefinitionContext, FileAccess, FileFamily, Judgement, LocalCall,
    Locate,
};
use crate::builtin::proposed::{self, NoPreview, ProposedWrite};
use crate::builtin::{BuiltinId, BuiltinOutput, files};

pub struct EditFile;

pub const ID: BuiltinId = BuiltinId::new(&EditFile);

#[async_trait]
impl BuiltinHandler for EditFile {
    fn name(&self) -> &'static str {
        files::EDIT_FILE
    }

    fn definition(&self, _: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: DESCRIPTION.to_string(),
            input_schema: schema(),
        }
    }

    fn judgement(&self) -> Judgement {
        Judgement::File(FileAccess {
            family: FileFamily::Edit,
            locate: Locate::Path,
        })
    }

    async fn run(&self, call: LocalCall<'_>) -> BuiltinOutput {
        files::edit_file(call.input, call.workspace, call.target).await
    }

    fn proposed_write(&self, input: &Value, workspace: &Path) -> Result<ProposedWrite, NoPreview> {
        proposed::edited(input, workspace)
    }
}

const DESCRIPTION: &str = "Replace one exact piece of text in an existing text file. \
`old_text` must occur exactly once in the file, matching character for character including \
whitespace and indentation (copy it from read_file output without the line-number prefix). \
If it occurs 0 times or more than once the file is left unchanged and the error says how many \
times it occurs; then read the file again or include more surrounding lines to make it unique. \
Paths are relative to the workspace; absolute paths are accepted.";

fn schema() -> Value {
    object_schema(
        json!({
            "path": path_property("edit"),
            "old_text": string_property("The exact text to replace; must occur exactly once."),
            "new_text": string_property("The text to put in its place (may be empty to delete).")
        }),
        &["path", "old_text", "new_text"],
    )
}
