//! `write_file`: a whole file's new content (see `files.rs`).

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

pub struct WriteFile;

pub const ID: BuiltinId = BuiltinId::new(&WriteFile);

#[async_trait]
impl BuiltinHandler for WriteFile {
    fn name(&self) -> &'static str {
        files::WRITE_FILE
    }

    fn definition(&self, _: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: DESCRIPTION.to_string(),
            input_schema: schema(),
        }
    }

    fn judgement(&self) -> Judgement {
        Judgement::File(FileAccess {
            family: FileFamily::Write,
            locate: Locate::Path,
        })
    }

    async fn run(&self, call: LocalCall<'_>) -> BuiltinOutput {
        files::write_file(call.input, call.workspace, call.target).await
    }

    fn proposed_write(&self, input: &Value, workspace: &Path) -> Result<ProposedWrite, NoPreview> {
        proposed::written(input, workspace)
    }
}

const DESCRIPTION: &str = "Write `content` to a file, replacing it entirely if it \
exists and creating it, and any missing parent directories, if it does not. Returns the number \
of bytes written. To change part of an existing file use edit_file instead. Paths are relative \
to the workspace; absolute paths are accepted.";

fn schema() -> Value {
    object_schema(
        json!({
            "path": path_property("write"),
            "content": string_property("The complete new content of the file.")
        }),
        &["path", "content"],
    )
}
