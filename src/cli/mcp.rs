//! `forgestate mcp`: load the configuration once, open the store once, and serve it as MCP tools
//! on stdin/stdout until the client closes stdin.

use super::args::Cli;
use super::{EX_IOERR, Failure};

/// Runs the server. A configuration that cannot be used is still served: every tool call then
/// answers with the error (and what to do), which the model can relay, where a server that exits
/// at start would only show as a missing tool.
pub async fn mcp(cli: &Cli) -> Result<u8, Failure> {
    let client = super::open(cli).map_err(|f| (f.code, f.message));
    if let Err((_, message)) = &client {
        super::output::error(message);
    }
    crate::mcp::serve(client).await.map_err(|message| Failure {
        code: EX_IOERR,
        message,
    })?;
    Ok(0)
}
