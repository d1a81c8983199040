//! The system prompt, rebuilt before every model call so it names the servers connected now.

use std::path::Path;

pub fn system_prompt(
    workspace: &Path,
    configured: &[String],
    connected: &[String],
    deferred_tools: usize,
) -> String {
    let mut prompt = format!(
        "You are the agent inside toolgate, a terminal console. You work in the workspace {}.\n\
         Use the tools to act; every call passes the host's permission gate, and a call may be \
         denied — then explain what you could not do instead of retrying the same call.\n\
         Built-in tools: bash, read_file, write_file, edit_file, glob. connect_mcp starts an MCP \
         server; its tools then appear as mcp__<server>__<tool> from your next step on. \
         disconnect_mcp removes them again.",
        workspace.display()
    );
    if !configured.is_empty() {
        prompt.push_str(&format!(
            "\nMCP servers you can connect: {}.",
            configured.join(", ")
        ));
    }
    if !connected.is_empty() {
        prompt.push_str(&format!(
            "\nConnected MCP servers: {}",
            connected.join(", ")
        ));
        if deferred_tools > 0 {
            prompt.push_str(&format!(
                "\nNot all of their tools are in your tool list: {deferred_tools} are deferred. To find \
                 one, call search_tools with what you want to do in a few words (or exact tool \
                 names); the tools it finds are loaded and can be called from your next step on, \
                 for the rest of the session."
            ));
        }
    }
    prompt
}
