//! `glob`: workspace files whose relative path matches a pattern (see `../glob.rs`).

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::builtin::definitions::{object_schema, string_property};
use crate::builtin::handler::{
    BuiltinHandler, Definition, DefinitionContext, FileAccess, FileFamily, Judgement, LocalCall,
    Locate,
};
use crate::builtin::{BuiltinId, BuiltinOutput};

pub struct Glob;

pub const ID: BuiltinId = BuiltinId::new(&Glob);

#[async_trait]
impl BuiltinHandler for Glob {
    fn name(&self) -> &'static str {
        "glob"
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
            locate: Locate::GlobPattern,
        })
    }

    async fn run(&self, call: LocalCall<'_>) -> BuiltinOutput {
        crate::builtin::glob::run_glob(call.input, call.workspace, call.cancel).await
    }
}

const DESCRIPTION: &str = "Find files in the workspace whose path, relative to the \
workspace root, matches a glob pattern. `*` and `?` do not cross `/`; `**` matches any number \
of directories (`**/*.rs` finds Rust files at any depth, `src/*.rs` only directly in src); \
`{a,b}` and `[abc]` work too. Returns matching file paths (not directories), one per line, \
sorted, at most 200; when there are more, a final line says how many matched. Searches only \
inside the workspace, never follows symbolic links into other directories and skips `.git` \
and `target` directories.";

fn schema() -> Value {
    object_schema(
        json!({
            "pattern": string_property("Glob pattern relative to the workspace root, e.g. `**/*.toml`.")
        }),
        &["pattern"],
    )
}
