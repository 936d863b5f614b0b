//! From a verb's answer to an MCP tool result: the answer object as `structuredContent`, a short
//! text summary for the model first, and the serialized answer beside it for clients that read
//! only text. A failure is a result with `isError: true` carrying the one-line message and the
//! error document every face shares ([`crate::face::ErrorBody`]), both as text. Everything is
//! scrubbed.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use forgestate::Error;

use crate::face::scrub::scrub_answer;
use crate::face::{self, ErrorBody};

/// The result of a verb that answered: its spec's summary first (the answer in a sentence).
pub fn answer(verb: &str, mut value: Value) -> CallToolResult {
    // The one scrub at the answer's boundary: the texts below are made from the scrubbed value.
    scrub_answer(&mut value);
    let mut text = forgestate::verbs::spec(verb)
        .and_then(|s| (s.summary)(&value))
        .unwrap_or_else(|| format!("{verb}: done"));
    for w in value["warnings"].as_array().into_iter().flatten() {
        text.push_str(&format!("\nwarning: {}", w.as_str().unwrap_or_default()));
    }
    let mut result = CallToolResult::structured(value.clone());
    result.content = vec![
        ContentBlock::text(text),
        ContentBlock::text(value.to_string()),
    ];
    result
}

/// A domain failure: `isError: true`, the message (one line, scrubbed) as the first text, and
/// the error document (`{"error": {"code", "category", "message"}}`) as a second text. No
/// `structuredContent`: the tool's output schema describes its answer, and a client checks
/// structured content against it (the TypeScript SDK refuses a result that does not match, so
/// the model would never see the message).
pub fn failure(code: u8, message: &str) -> CallToolResult {
    let body = ErrorBody::new(code, message);
    let text = body.message.clone();
    let document = json!({ "error": body }).to_string();
    CallToolResult::error(vec![ContentBlock::text(text), ContentBlock::text(document)])
}

/// A library error as a tool failure, with the exit code of its category.
pub fn error(e: &Error) -> CallToolResult {
    failure(face::exit_code(e), &e.to_string())
}

/// The first text of a result.
pub fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}
