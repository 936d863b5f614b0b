//! The line gate in front of rmcp's stdio transport: every line the client sends gets an
//! answer. rmcp drops some lines silently (not JSON, truncated, a lone surrogate, nesting past
//! serde_json's 128 levels, a line over 16 MiB), and a client waiting for the answer waits
//! forever. Here each line is judged first:
//!
//! - not UTF-8, not JSON, truncated, a lone surrogate: `-32700` (parse error), with the request's
//!   `id` when it can be read, else `null`;
//! - JSON that is not a JSON-RPC 2.0 message (a batch, no `method`, a wrong `jsonrpc`): `-32600`;
//! - a line over [`MAX_LINE`]: `-32600`, the rest of the line skipped, the server stays up;
//! - a `tools/call` whose arguments nest too deeply for rmcp to parse the message: each such
//!   argument is handed on as `face::deep` says: `data` (and `metrics`) as JSON text, which the
//!   verb parses with the CLI's own parser, so the nesting limit is the CLI's (`data` of 127
//!   levels is taken, 128 is refused with `isError`); any other argument as its first levels,
//!   refused as the same value shallow is;
//! - everything else goes to rmcp unchanged.
//!
//! Only one task writes stdout: rmcp's answers and these go through one channel, line by line.

mod judge;

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use super::order::Order;
use crate::face::line::{Line, MAX_LINE, read_line};
use crate::face::top_level_id;
use judge::{INVALID_REQUEST, Verdict, error, judge};

/// The tasks that move lines; see [`Pump::finish`].
pub struct Pump {
    input: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Pump {
    /// Waits until every answer is written (rmcp has stopped, so its side is closed), no longer
    /// reading input.
    pub async fn finish(self) {
        self.input.abort();
        let _ = self.writer.await;
    }
}

/// The gate over `input` and `output`: the pair rmcp serves on, and the pump.
/// Each `tools/call` forwarded takes its ticket in `order` first (see `order.rs`).
pub fn gate<R, W>(input: R, output: W, order: Arc<Order>) -> ((DuplexStream, DuplexStream), Pump)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(1 << 20);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(1 << 20);
    let (tx, mut rx) = unbounded_channel::<Vec<u8>>();
    let answers = tx.clone();
    let input = tokio::spawn(read_input(input, to_rmcp, answers, order));
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        while matches!(lines.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            if tx.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = rx.recv().await {
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    ((rmcp_reads, rmcp_writes), Pump { input, writer })
}

async fn read_input<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    answers: UnboundedSender<Vec<u8>>,
    order: Arc<Order>,
) {
    let mut input = BufReader::new(input);
    loop {
        let line = match read_line(&mut input, MAX_LINE).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("cannot read the MCP client's input: {e}");
                break;
            }
        };
        let verdict = match line {
            Line::Whole(bytes) => judge(&bytes),
            Line::Oversized { prefix, len } => Verdict::Answer(error(
                top_level_id(&prefix),
                INVALID_REQUEST,
                &format!(
                    "Invalid Request: the line is {len} bytes or more, over the {} MiB limit; \
                     nothing in it was run",
                    MAX_LINE / (1024 * 1024)
                ),
            )),
        };
        match verdict {
            Verdict::Skip => {}
            Verdict::Forward(mut text) => {
                order.arrived(&text);
                text.push(b'\n');
                if to_rmcp.write_all(&text).await.is_err() {
                    break;
                }
            }
            Verdict::Answer(answer) => {
                if answers.send(answer.to_string().into_bytes()).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to_rmcp.shutdown().await;
}
