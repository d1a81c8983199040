//! toolgate's own MCP servers (docs, deploy, fs), run as `toolgate serve NAME`.

/// Runs one of toolgate's servers on stdin/stdout until the client closes stdin.
// CONTRACT: implemented by the servers work.
pub async fn serve(name: &str, _args: &[String]) -> anyhow::Result<()> {
    anyhow::bail!("unknown server '{name}' (expected docs, deploy or fs)")
}
