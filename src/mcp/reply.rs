//! From a verb's answer to an MCP tool result: the answer object as `structuredContent`, the
//! answer as the CLI shows it in text (captured by [`Text`]) for the model first, and the
//! serialized answer beside it for clients that read only text. A failure is a result with `isError: true` carrying the one-line message and the
//! error document every face shares ([`crate::face::ErrorBody`]), both as text. Everything is
//! scrubbed.

use std::sync::Mutex;

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

use forgestate::Error;
use forgestate::verbs::cli::Printer;

use crate::face::scrub::{scrub, scrub_answer};
use crate::face::{self, ErrorBody};

/// The result of a verb that answered: the CLI's text of the answer first, as `text` captured it.
pub fn answer(verb: &str, mut value: Value, text: Text) -> CallToolResult {
    // The one scrub at the answer's boundary.
    scrub_answer(&mut value);
    let lines = text.0.into_inner().unwrap_or_else(|e| e.into_inner());
    let text = match lines.join("\n") {
        empty if empty.is_empty() => format!("{verb}: done"),
        text => scrub(&text),
    };
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

/// What the CLI would print for an answer in text, captured line by line in the order it is
/// shown: the verb's `show` on a pipe, uncoloured, its notes (warnings, "no matching record
/// found") as the verb words them, without the `forgestate: ` the CLI's stderr puts before them.
#[derive(Default)]
pub struct Text(Mutex<Vec<String>>);

impl Text {
    fn push(&self, text: String) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(text);
    }
}

impl Printer for Text {
    fn json<T: Serialize>(&self, value: &T) {
        self.push(serde_json::to_string_pretty(value).unwrap_or_default());
    }

    fn json_line<T: Serialize>(&self, value: &T) {
        self.push(serde_json::to_string(value).unwrap_or_default());
    }

    fn out(&self, text: &str) {
        self.push(text.to_string());
    }

    fn note(&self, text: &str) {
        self.push(text.to_string());
    }

    fn printable(&self, text: &str) -> String {
        crate::face::scrub::printable(text)
    }

    fn error_object(&self, e: &Error) -> forgestate::verbs::FlushError {
        ErrorBody::new(face::exit_code(e), &e.to_string()).into()
    }
}
