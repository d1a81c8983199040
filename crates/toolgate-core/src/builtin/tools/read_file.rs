//! `read_file`: a text file, numbered like `cat -n` (see `files.rs`).

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::builtin::definitions::{object_schema, path_property};
use crate::builtin::files;
use crate::builtin::handler::{
    BuiltinHandler, Definition, DefinitionContext, FileAccess, FileFamily, Judgement, LocalCall,
    Locate,
};
use crate::builtin::{BuiltinId, BuiltinOutput};

pub struct ReadFile;

pub const ID: BuiltinId = BuiltinId::new(&ReadFile);

#[async_trait]
impl BuiltinHandler for ReadFile {
    fn name(&self) -> &'static str {
        files::READ_FILE
    }

    fn definition(&self, _: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: DESCRIPTION.to_string(),
            input_schema: schema(),
        }
    }

    fn judgement(&self) -> Judgement {
        Judgement::File(FileAccess {
            family: FileFamily::Read,
            locate: Locate::Path,
        })
    }

    async fn run(&self, call: LocalCall<'_>) -> BuiltinOutput {
        files::read_file(call.input, call.workspace, call.target).await
    }
}

const DESCRIPTION: &str = "Read a UTF-8 text file. Each line is returned numbered \
like `cat -n`: the line number right-aligned in 6 columns, a tab, then the line exactly as in \
the file. The numbers and the tab are not part of the file — leave them out of edit_file's \
old_text. Shows up to `limit` lines (default 2000) and at most 50000 characters; when more \
exists a final line in square brackets says so. Binary files and missing files are errors. \
Paths are relative to the workspace; absolute paths are accepted.";

fn schema() -> Value {
    object_schema(
        json!({
            "path": path_property("read"),
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to show from the start (default 2000)."
            }
        }),
        &["path"],
    )
}
