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
//!   argument is handed on as JSON text, which the verb parses with the CLI's own parser, so the
//!   nesting limit is the CLI's (`data` of 127 levels is taken, 128 is refused with `isError`);
//! - everything else goes to rmcp unchanged.
//!
//! Only one task writes stdout: rmcp's answers and these go through one channel, line by line.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

/// The longest line handed on (rmcp's own limit).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i64 = -32600;
/// The deepest an argument may nest and still be handed to rmcp as JSON: the message, `params`
/// and `arguments` are three more levels, and serde_json stops at 128.
const ARGUMENT_DEPTH: usize = 124;

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
pub fn gate<R, W>(input: R, output: W) -> ((DuplexStream, DuplexStream), Pump)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(1 << 20);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(1 << 20);
    let (tx, mut rx) = unbounded_channel::<Vec<u8>>();
    let answers = tx.clone();
    let input = tokio::spawn(read_input(input, to_rmcp, answers));
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

/// One line as read: whole, or over the limit (its first [`MAX_LINE`] bytes kept).
enum Line {
    Whole(Vec<u8>),
    Oversized { prefix: Vec<u8>, len: usize },
}

async fn read_input<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    answers: UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    loop {
        let line = match read_line(&mut input).await {
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

/// Reads one line (without its `\n`); `None` at the end of input.
async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut len = 0usize;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match len {
                0 => None,
                _ if len > MAX_LINE => Some(Line::Oversized { prefix: line, len }),
                _ => Some(Line::Whole(line)),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        let room = (MAX_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        len = len.saturating_add(chunk.len());
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            return Ok(Some(match len > MAX_LINE {
                true => {
                    line.truncate(MAX_LINE);
                    Line::Oversized { prefix: line, len }
                }
                false => Line::Whole(line),
            }));
        }
    }
}

/// What to do with one line.
#[derive(Debug, PartialEq)]
enum Verdict {
    Skip,
    Forward(Vec<u8>),
    Answer(Value),
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Answer(error(
            top_level_id(line),
            PARSE_ERROR,
            "Parse error: the line is not UTF-8",
        ));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(message) => shape(message, text),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => deep(text),
        Err(e) => Verdict::Answer(error(
            top_level_id(line),
            PARSE_ERROR,
            &format!("Parse error: {e}"),
        )),
    }
}

/// A JSON message: is it a JSON-RPC 2.0 request, notification or response?
fn shape(message: Value, text: &str) -> Verdict {
    let Value::Object(map) = &message else {
        let why = match message.is_array() {
            true => "a batch (a JSON array); send one message per line",
            false => "not a JSON object",
        };
        return Verdict::Answer(error(
            Value::Null,
            INVALID_REQUEST,
            &format!("Invalid Request: {why}"),
        ));
    };
    let id = map.get("id").cloned();
    let id_ok = matches!(
        id,
        None | Some(Value::Null | Value::String(_) | Value::Number(_))
    );
    let shown_id = id.clone().filter(|_| id_ok).unwrap_or(Value::Null);
    let invalid = |why: &str| {
        Verdict::Answer(error(
            shown_id.clone(),
            INVALID_REQUEST,
            &format!("Invalid Request: {why}"),
        ))
    };
    if !id_ok {
        return invalid("`id` must be a string, a number or null");
    }
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    match map.get("method") {
        Some(Value::String(_)) => Verdict::Forward(text.as_bytes().to_vec()),
        Some(_) => invalid("`method` must be a string"),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => {
            Verdict::Forward(text.as_bytes().to_vec())
        }
        None => invalid("no `method` (nor a `result` or `error` answering a request)"),
    }
}

/// A message nested past what serde_json parses whole.
fn deep(text: &str) -> Verdict {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Call<'a> {
        name: String,
        #[serde(borrow, default)]
        arguments: BTreeMap<String, &'a RawValue>,
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    let Ok(head) = serde_json::from_str::<Head>(text) else {
        return Verdict::Answer(error(
            top_level_id(text.as_bytes()),
            INVALID_REQUEST,
            "Invalid Request: nested too deeply to read",
        ));
    };
    let id = head
        .id
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .unwrap_or(Value::Null);
    let call = match (head.method.as_deref(), head.params) {
        (Some("tools/call"), Some(params)) => serde_json::from_str::<Call>(params.get()).ok(),
        _ => None,
    };
    let Some(call) = call else {
        return Verdict::Answer(error(
            id,
            INVALID_REQUEST,
            "Invalid Request: nested deeper than 127 levels; only a tool's arguments may nest \
             that deep",
        ));
    };
    let mut arguments = serde_json::Map::new();
    for (key, raw) in call.arguments {
        let value = match depth(raw.get().as_bytes()) > ARGUMENT_DEPTH {
            // The verb parses it as the CLI parses `--data`, with the same limit.
            true => Value::String(raw.get().to_string()),
            false => match serde_json::from_str(raw.get()) {
                Ok(v) => v,
                Err(_) => Value::String(raw.get().to_string()),
            },
        };
        arguments.insert(key, value);
    }
    let mut params = json!({"name": call.name, "arguments": arguments});
    if let Some(meta) = call
        .meta
        .and_then(|m| serde_json::from_str::<Value>(m.get()).ok())
    {
        params["_meta"] = meta;
    }
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    Verdict::Forward(message.to_string().into_bytes())
}

/// The deepest nesting of arrays and objects in JSON text (strings skipped).
fn depth(text: &[u8]) -> usize {
    let (mut now, mut most, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                now += 1;
                most = most.max(now);
            }
            b']' | b'}' => now = now.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// The `id` of a message that could not be parsed whole (truncated, too long, a bad string
/// somewhere): the value of the top-level key `id`, when it is a string, number or null and comes
/// before the damage. `null` otherwise.
fn top_level_id(text: &[u8]) -> Value {
    let (mut level, mut at) = (0usize, 0usize);
    while at < text.len() {
        match text[at] {
            b'"' => {
                let end = string_end(text, at);
                if level == 1 && &text[at..end] == b"\"id\"" {
                    let rest = &text[end..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace());
                    if colon.is_some_and(|c| rest[c] == b':') {
                        return id_value(&rest[colon.unwrap_or(0) + 1..]);
                    }
                }
                at = end;
                continue;
            }
            b'[' | b'{' => level += 1,
            b']' | b'}' => level = level.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    Value::Null
}

/// Where the string opening at `start` ends (just past its closing quote, or the end).
fn string_end(text: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < text.len() {
        match text[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    text.len()
}

/// The JSON value at the start of `rest`, when it is a plain id (string, number, null).
fn id_value(rest: &[u8]) -> Value {
    let start = rest
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let rest = &rest[start..];
    let end = match rest.first() {
        Some(b'"') => string_end(rest, 0),
        Some(_) => rest
            .iter()
            .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
            .unwrap_or(rest.len()),
        None => 0,
    };
    match serde_json::from_slice::<Value>(&rest[..end]) {
        Ok(v @ (Value::String(_) | Value::Number(_) | Value::Null)) => v,
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Answer(a) => a,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn bad_lines_are_answered_with_the_id_when_it_can_be_read() {
        let a = answer("not json");
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"li"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(7), json!(-32700))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":"x","method":"ping","params":{"s":"\ud800"}}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!("x"), json!(-32700))
        );
        for bad in [
            r#"[]"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2}"#,
            "5",
        ] {
            assert_eq!(answer(bad)["error"]["code"], -32600, "{bad}");
        }
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#)["id"],
            Value::Null
        );
    }

    #[test]
    fn good_lines_and_blank_lines_pass() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(
            judge(ping.as_bytes()),
            Verdict::Forward(ping.as_bytes().to_vec())
        );
        assert_eq!(judge(b"  \r"), Verdict::Skip);
    }

    #[test]
    fn deep_tool_arguments_are_handed_on_as_text() {
        let data = format!("{}1{}", "{\"a\":".repeat(126), "}".repeat(126));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"checkpoint","arguments":{{"agent":"w","data":{data}}}}}}}"#
        );
        let Verdict::Forward(out) = judge(line.as_bytes()) else {
            panic!("not forwarded")
        };
        let message: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(message["params"]["arguments"]["data"], Value::String(data));
        assert_eq!(message["params"]["arguments"]["agent"], "w");
        assert_eq!(message["id"], 3);
    }

    #[test]
    fn the_depth_scanner_skips_strings() {
        assert_eq!(depth(br#"{"a":[1,{"b":"[[[{"}]}"#), 3);
        assert_eq!(top_level_id(br#"{"params":{"id":9},"id":4"#), json!(4));
    }
}
