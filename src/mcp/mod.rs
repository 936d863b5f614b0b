//! `forgestate mcp`: a Model Context Protocol server on stdin/stdout (rmcp), so LLM agents reach
//! the verbs as tools.
//!
//! `server.rs` generates the tools from the library's verb table and runs them through it,
//! `reply.rs` turns answers into tool results, `extras.rs` is the resume resource and prompt,
//! `lines.rs` the line gate in front of rmcp's transport (every line gets an answer), `order.rs`
//! one client's calls for one session run in arrival order.
//! Nothing here imports the CLI: what both faces share is in `crate::face`. Only protocol
//! messages go to stdout; logs go to stderr.

mod extras;
mod lines;
mod order;
mod reply;
mod server;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::report::StatusPolicy;

/// Serves the tools over stdin/stdout until the client closes stdin. `client` is the opened store,
/// or the exit code and message of why it could not be opened, which every tool call then
/// answers with. `Err` says why the session could not run.
pub async fn serve(
    client: Result<Client<AnyThread>, (u8, String)>,
    policy: StatusPolicy,
) -> Result<(), String> {
    let order = std::sync::Arc::new(order::Order::default());
    let (transport, pump) = lines::gate(tokio::io::stdin(), tokio::io::stdout(), order.clone());
    let server = server::Server::new(client, policy, order);
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // Stdin closed before the handshake: nothing to serve, not a failure.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            pump.finish().await;
            return Ok(());
        }
        Err(e) => return Err(format!("cannot start the MCP session on stdin/stdout: {e}")),
    };
    tracing::debug!("MCP session started");
    let ended = running.waiting().await;
    pump.finish().await;
    match ended {
        Ok(reason) => {
            tracing::debug!("MCP session ended: {reason:?}");
            Ok(())
        }
        Err(e) => Err(format!("the MCP session stopped unexpectedly: {e}")),
    }
}
