//! `forgestate mcp`: load the configuration once, open the store once, and serve it as MCP tools
//! on stdin/stdout until the client closes stdin.

use forgestate::report::StatusPolicy;

use super::args::Cli;
use super::failure::Failure;
use crate::face::EX_IOERR;

/// Runs the server. A configuration that cannot be used is still served: every tool call then
/// answers with the error (and what to do), which the model can relay, where a server that exits
/// at start would only show as a missing tool.
pub async fn mcp(cli: &Cli) -> Result<u8, Failure> {
    let (client, policy) = match super::open::store(cli, true) {
        Ok((client, policy)) => (Ok(client), policy),
        Err(f) => {
            super::output::error(&f.message);
            (Err((f.code, f.message)), StatusPolicy::default())
        }
    };
    crate::mcp::serve(client, policy)
        .await
        .map_err(|message| Failure::new(EX_IOERR, message))?;
    Ok(0)
}
