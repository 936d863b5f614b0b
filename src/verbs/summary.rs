//! What a model reads first of a verb's answer over MCP, in a sentence: the parts the verbs'
//! own summaries share (one record on a line, where it sits, a save). Each verb's summary is in
//! its file, named by its spec; the MCP face puts it before the structured answer.

use serde_json::Value;

/// A string field of `v`, `-` when it is not one.
pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("-")
}

/// One record on one line: kind, id, agent, session, phase or status, and where it is.
pub(super) fn line(e: &Value) -> String {
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
pub(super) fn place(comment: &Value) -> String {
    match comment["id"].as_u64() {
        Some(id) => format!("comment {id}"),
        None => "the outbox, pending, not posted yet".to_string(),
    }
}

/// A saved record: posted (where), or spooled to the outbox; its redactions and rotation.
pub(super) fn saved(v: &Value) -> Option<String> {
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
    Some(s)
}
