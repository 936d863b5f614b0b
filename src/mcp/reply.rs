//! From the library's answers to MCP tool results: `structuredContent` (typed, in fixed key
//! order), a short text summary for the model, and the serialized JSON beside it for clients that
//! only read text. A failure is a result with `isError: true` carrying the CLI's one-line message.

use std::path::Path;

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

use forgestate::client::Status;
use forgestate::format::Record;
use forgestate::report::Verdict;
use forgestate::resume::Resume;
use forgestate::scan::{Entry, Scan};
use forgestate::{Error, Outcome};

use crate::cli::{errors, output, scrub};

/// A result carrying `value` as `structuredContent`, with `summary` and the JSON as text.
pub fn ok<T: Serialize>(summary: String, value: &T) -> CallToolResult {
    let value = serde_json::to_value(value)
        .unwrap_or_else(|e| json!({ "error": format!("cannot serialize the answer: {e}") }));
    let mut result = CallToolResult::structured(value.clone());
    result.content = vec![
        ContentBlock::text(scrub::scrub(&summary)),
        ContentBlock::text(value.to_string()),
    ];
    result
}

/// A domain failure: `isError: true`, the message the CLI would print (one line, scrubbed), and
/// the CLI's `--json` error document as `structuredContent`.
pub fn failure(code: u8, message: &str) -> CallToolResult {
    let body = errors::ErrorBody::new(code, message);
    let text = body.message.clone();
    let mut result = CallToolResult::structured_error(json!({ "error": body }));
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A library error as a tool failure, with the CLI's exit code for its category.
pub fn error(e: &Error) -> CallToolResult {
    failure(errors::exit_code(e), &e.to_string())
}

/// What `checkpoint` and `health` answer: posted, or safe in the outbox (not an error: the CLI
/// exits 0 too).
#[derive(Debug, Serialize)]
pub struct Saved<'a> {
    /// In the thread now (`false`: waiting in this machine's outbox).
    pub posted: bool,
    /// The record's id.
    pub id: Option<&'a str>,
    /// The store's comment id, once posted.
    pub comment_id: Option<u64>,
    /// The comment's web address, where the store has one.
    pub url: Option<&'a str>,
    /// The store the record went to.
    pub store: Option<&'a str>,
    /// The outbox entry holding the record, when it was spooled.
    pub spooled: Option<&'a Path>,
    /// Why it was spooled.
    pub cause: Option<String>,
    /// The record as stored (after redaction).
    pub record: &'a Record,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// `checkpoint`/`health`: the outcome of [`forgestate::Client::save`] as a tool result.
pub fn saved(outcome: Outcome, mut warnings: Vec<String>) -> CallToolResult {
    match outcome {
        Outcome::Posted(p) => {
            let summary = output::posted_line(&p);
            let doc = Saved {
                posted: true,
                id: p.id.as_deref(),
                comment_id: Some(p.comment_id),
                url: p.url.as_deref(),
                store: Some(&p.store),
                spooled: None,
                cause: None,
                record: &p.record,
                warnings: scrubbed(warnings),
            };
            ok(with_warnings(summary, &doc.warnings), &doc)
        }
        Outcome::Spooled {
            record,
            path,
            cause,
        } => {
            let kind = record.kind().name();
            let id = record.id.as_deref().unwrap_or("(no id)");
            if !cause.retry_may_fix() {
                warnings.push(format!(
                    "{cause}; fix this, then run `forgestate flush`: flushing cannot succeed \
                     until it is fixed"
                ));
            }
            let summary = format!(
                "{kind} {id} spooled to the outbox, not posted yet ({cause}); the next call or \
                 `forgestate flush` posts it"
            );
            let doc = Saved {
                posted: false,
                id: record.id.as_deref(),
                comment_id: None,
                url: None,
                store: None,
                spooled: Some(&path),
                cause: Some(scrub::scrub(&cause.to_string())),
                record: &record,
                warnings: scrubbed(warnings),
            };
            ok(with_warnings(summary, &doc.warnings), &doc)
        }
        Outcome::Failed(e) => error(&e),
    }
}

/// What `resume` answers: where to pick up, from which record, and how sure that is.
#[derive(Debug, Serialize)]
pub struct Resumed<'a> {
    /// Where to pick up: the resume map's answer for the last phase.
    pub resume_point: &'a str,
    /// The last checkpoint's phase, or `fresh_start`.
    pub phase: &'a str,
    /// The last checkpoint's whole data object (empty on a fresh start).
    pub data: &'a Value,
    /// The checkpoint's record id (`null` on a fresh start).
    pub record_id: Option<&'a str>,
    /// The checkpoint's comment id (`null` on a fresh start, or while it is pending).
    pub comment_id: Option<u64>,
    /// When the checkpoint was written.
    pub time: Option<String>,
    /// No checkpoint exists for this agent and session.
    pub fresh_start: bool,
    /// The checkpoint waits in this machine's outbox, not posted yet.
    pub pending: bool,
    /// The store could not be read: the answer comes from this machine's outbox.
    pub offline: bool,
    /// The phase matched no key of the resume map, so `resume_point` is the default.
    pub unmapped: bool,
    /// Things the caller should know (a newer comment that could not be read, say).
    pub warnings: Vec<String>,
}

/// `resume` as a tool result.
pub fn resumed(r: &Resume, agent: &str, session: &str, warnings: Vec<String>) -> CallToolResult {
    let e = r.checkpoint.as_ref();
    let doc = Resumed {
        resume_point: &r.resume_point,
        phase: &r.phase,
        data: &r.data,
        record_id: e.and_then(|e| e.record.id.as_deref()),
        comment_id: e.and_then(|e| e.comment.id),
        time: e.map(|e| forgestate::format::format_time(&e.record.time)),
        fresh_start: e.is_none(),
        pending: e.is_some_and(|e| e.comment.pending),
        offline: r.offline,
        unmapped: r.unmapped,
        warnings: scrubbed(warnings),
    };
    let mut summary = match e {
        None => format!(
            "no checkpoint for agent {agent} in session {session}: fresh start at {}",
            r.resume_point
        ),
        Some(e) => format!(
            "resume at {} (phase {}, checkpoint {} in {})",
            r.resume_point,
            r.phase,
            e.record.id.as_deref().unwrap_or("(version 1.0, no id)"),
            place(e)
        ),
    };
    if r.unmapped {
        summary.push_str(&format!(
            "; phase {} is not in the resume map of {agent}, so this is the default",
            r.phase
        ));
    }
    if r.offline {
        summary.push_str("; offline: the forge could not be read, answered from the outbox");
    }
    ok(with_warnings(summary, &doc.warnings), &doc)
}

/// What `latest` answers.
#[derive(Debug, Serialize)]
pub struct Latest<'a> {
    /// The newest matching record, with the comment that holds it; `null` when none matches.
    pub record: Option<&'a Entry>,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// `latest` as a tool result.
pub fn latest(entry: Option<&Entry>, warnings: Vec<String>) -> CallToolResult {
    let summary = match entry {
        Some(e) => format!("newest matching record: {}", line(e)),
        None => "no matching record found".to_string(),
    };
    let doc = Latest {
        record: entry,
        warnings: scrubbed(warnings),
    };
    ok(with_warnings(summary, &doc.warnings), &doc)
}

/// What `list` answers.
#[derive(Debug, Serialize)]
pub struct List<'a> {
    /// The matching records, oldest first.
    pub records: &'a [Entry],
    /// The store could not be read: only this machine's pending records are listed.
    pub offline: bool,
    /// Comments that are not valid, trusted records (only when asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<Value>,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// `list` as a tool result.
pub fn list(scan: &Scan, with_invalid: bool) -> CallToolResult {
    let mut summary = match scan.entries.len() {
        0 => "no matching records".to_string(),
        n => format!("{n} matching record(s), oldest first:"),
    };
    for e in &scan.entries {
        summary.push_str(&format!("\n{}", line(e)));
    }
    if scan.offline {
        summary.push_str("\noffline: the forge could not be read; only pending records are listed");
    }
    let invalid = with_invalid.then(|| json!(scan.rejected));
    if with_invalid {
        summary.push_str(&format!(
            "\n{} comment(s) are not valid, trusted records",
            scan.rejected.len()
        ));
    }
    let doc = List {
        records: &scan.entries,
        offline: scan.offline,
        invalid,
        warnings: scrubbed(scan.warnings.clone()),
    };
    ok(with_warnings(summary, &doc.warnings), &doc)
}

/// One record on one line: kind, id, agent, session, phase or status, and where it is.
fn line(e: &Entry) -> String {
    let r = &e.record;
    format!(
        "{} {} agent={} session={} {} ({})",
        r.kind().name(),
        r.id.as_deref().unwrap_or("(no id)"),
        r.agent,
        r.session,
        output::what(e),
        place(e)
    )
}

/// Where a record sits: `comment 12`, or pending in the outbox.
fn place(e: &Entry) -> String {
    match e.comment.id {
        Some(id) => format!("comment {id}"),
        None => "the outbox, pending, not posted yet".to_string(),
    }
}

fn scrubbed(warnings: Vec<String>) -> Vec<String> {
    warnings.iter().map(|w| scrub::scrub(w)).collect()
}

fn with_warnings(mut summary: String, warnings: &[String]) -> String {
    for w in warnings {
        summary.push_str(&format!("\nwarning: {w}"));
    }
    summary
}

/// What `status` answers: the rows (the CLI's `status --json` objects) and how many stalled.
pub fn status(answer: &Status) -> CallToolResult {
    let stalled = answer
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Stalled)
        .count();
    let summary = match answer.rows.len() {
        0 => "no matching records".to_string(),
        n => format!("{n} agent session(s), {stalled} stalled"),
    };
    let value = json!({
        "rows": answer.rows,
        "stalled": stalled,
        "offline": answer.offline,
        "warnings": scrubbed(answer.warnings.clone()),
    });
    ok(with_warnings(summary, &answer.warnings), &value)
}
