//! One line of a face's input (the MCP client's messages, `forgestate call --lines`' requests),
//! read up to a limit: a longer line is skipped to its end, its first bytes kept, so one
//! oversized line is answered and the next one read.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The longest line either face reads (an MCP message, a `call --lines` request, `call`'s one
/// request on stdin): rmcp's own limit. A record is capped far below it (1 MiB).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One line as read: whole, or over the limit (its first `max` bytes kept).
pub enum Line {
    /// The line.
    Whole(Vec<u8>),
    /// A line of `len` bytes or more, and its first bytes.
    Oversized { prefix: Vec<u8>, len: usize },
}

/// Reads one line (without its `\n`) of at most `max` bytes; `None` at the end of input.
pub async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut len = 0usize;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match len {
                0 => None,
                _ if len > max => Some(Line::Oversized { prefix: line, len }),
                _ => Some(Line::Whole(line)),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        let room = (max + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        len = len.saturating_add(chunk.len());
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            return Ok(Some(match len > max {
                true => {
                    line.truncate(max);
                    Line::Oversized { prefix: line, len }
                }
                false => Line::Whole(line),
            }));
        }
    }
}
