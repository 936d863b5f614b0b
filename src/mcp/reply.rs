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

/// The result of a verb that answered.
pub fn answer(verb: &str, mut value: Value) -> CallToolResult {
    // The one scrub at the answer's boundary: the texts below are made from the scrubbed value.
    scrub_answer(&mut value);
    let mut text = summary(verb, &value);
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

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("-")
}

/// One record on one line: kind, id, agent, session, phase or status, and where it is.
fn line(e: &Value) -> String {
    let kind = str_of(e, "kind");
    let what = match e["phase"].as_str() {
        Some(phase) => format!("phase={phase}"),
        None => format!("status={}", str_of(e, "status")),
    };
    format!(
        "{kind} {} agent={} session={} {what} ({})",
        e["id"].as_str().unwrap_or("(no id)"),
        str_of(e, "agent"),
        str_of(e, "session"),
        place(&e["comment"])
    )
}

/// Where a record sits: `comment 12`, or pending in the outbox.
fn place(comment: &Value) -> String {
    match comment["id"].as_u64() {
        Some(id) => format!("comment {id}"),
        None => "the outbox, pending, not posted yet".to_string(),
    }
}

/// What the model reads first: the answer in a sentence.
fn summary(verb: &str, v: &Value) -> String {
    match verb {
        "checkpoint" | "health" | "fork" | "end" => saved(v),
        "resume" => resumed(v),
        "latest" => match v["record"].is_object() {
            true => format!("newest matching record: {}", line(&v["record"])),
            false => "no matching record found".to_string(),
        },
        "list" => {
            let records = v["records"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let mut s = match records.len() {
                0 => "no matching records".to_string(),
                n => format!("{n} matching record(s), oldest first:"),
            };
            for e in records {
                s.push_str(&format!("\n{}", line(e)));
            }
            if v["offline"] == true {
                s.push_str(
                    "\noffline: the forge could not be read; only pending records are listed",
                );
            }
            if let Some(invalid) = v["invalid"].as_array() {
                s.push_str(&format!(
                    "\n{} comment(s) are not valid, trusted records",
                    invalid.len()
                ));
            }
            s
        }
        "status" => match v["rows"].as_array().map_or(0, Vec::len) {
            0 => "no matching records".to_string(),
            n => format!("{n} agent session(s), {} stalled", v["stalled"]),
        },
        "history" => {
            let records = v["records"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let mut s = format!(
                "session {}: {} record(s) in thread order",
                str_of(v, "session"),
                records.len()
            );
            if let Some(origin) = v["forked_from"].as_object() {
                s.push_str(&format!(
                    "; forked from session {} at record {}",
                    origin.get("session").and_then(Value::as_str).unwrap_or("?"),
                    origin.get("id").and_then(Value::as_str).unwrap_or("?")
                ));
            }
            s
        }
        other => format!("{other}: done"),
    }
}

fn saved(v: &Value) -> String {
    let record = &v["record"];
    let kind = str_of(record, "kind");
    let id = v["id"].as_str().unwrap_or("(no id)");
    let mut s = match v["posted"] == true {
        true => format!(
            "{kind} {id} saved as comment {} in {}",
            v["comment_id"],
            str_of(v, "store")
        ),
        false => format!(
            "{kind} {id} spooled to the outbox, not posted yet ({}); the next call or \
             `forgestate flush` posts it",
            str_of(v, "cause")
        ),
    };
    if let Some(n) = record["redacted"].as_u64() {
        s.push_str(&format!(" ({n} secret value(s) redacted)"));
    }
    if let Some(r) = v["rotation"].as_object() {
        s.push_str(&format!(
            "; the session issue was over its comment limit and was rotated to #{} ({} record(s) \
             carried)",
            r.get("to").cloned().unwrap_or(Value::Null),
            r.get("carried").cloned().unwrap_or(Value::Null)
        ));
    }
    s
}

fn resumed(v: &Value) -> String {
    let mut s = match v["fresh_start"] == true {
        true => format!(
            "no checkpoint yet for this agent in this session: fresh start at {}",
            str_of(v, "resume_point")
        ),
        false => format!(
            "resume at {} (phase {}, checkpoint {} in {})",
            str_of(v, "resume_point"),
            str_of(v, "phase"),
            v["record_id"].as_str().unwrap_or("(version 1.0, no id)"),
            place(&v["checkpoint"]["comment"])
        ),
    };
    if v["unmapped"] == true {
        s.push_str(&format!(
            "; phase {} is not in the resume map, so this is the default",
            str_of(v, "phase")
        ));
    }
    if let Some(next) = v["next"].as_str() {
        s.push_str(&format!("; next: {next}"));
    }
    for b in v["blockers"].as_array().into_iter().flatten() {
        s.push_str(&format!("; blocker: {}", b.as_str().unwrap_or_default()));
    }
    match v["context_drift"].as_bool() {
        Some(true) => s.push_str(
            "; the context file changed since this checkpoint (or it recorded no hash): re-read \
             it before going on",
        ),
        Some(false) => s.push_str("; the context file is unchanged since this checkpoint"),
        None => {}
    }
    if let Some(reason) = v["ended"]["reason"].as_str() {
        s.push_str(&format!("; the session ended ({reason})"));
    }
    if let Some(name) = v["pending_intent"]["name"].as_str() {
        s.push_str(&format!(
            "; intent {name} is pending: check whether it happened before doing it again"
        ));
    }
    if let Some(n) = v["conflicts"].as_array().map(Vec::len).filter(|n| *n > 0) {
        s.push_str(&format!(
            "; {n} record(s) were continued by two writers (see warnings)"
        ));
    }
    if v["offline"] == true {
        s.push_str("; offline: the forge could not be read, answered from this machine's read cache and outbox");
    }
    s
}
