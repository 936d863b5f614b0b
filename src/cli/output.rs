//! Everything the CLI prints: one JSON document with `--json`, readable text without.
//!
//! Only this module writes to stdout. Writes ignore a closed pipe (`forgestate list | head`).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use serde_json::{Value, json};

use forgestate::format::Record;
use forgestate::format::{Payload, format_time};
use forgestate::resume::Resume;
use forgestate::scan::{Entry, Scan};
use forgestate::{Error, FlushReport, Posted};

use super::errors::{self, ErrorBody};
use super::table;

/// Set once a JSON document is on stdout, so a later failure does not print a second one.
static PRINTED: AtomicBool = AtomicBool::new(false);

/// Prints a value as one pretty JSON document on stdout.
pub fn json<T: Serialize>(value: &T) {
    let text = serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    PRINTED.store(true, Ordering::Relaxed);
    out(&text);
}

/// Whether a JSON document was already printed.
pub fn printed() -> bool {
    PRINTED.load(Ordering::Relaxed)
}

/// Writes text and a newline to stdout.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// A human message on stderr, prefixed like every forgestate message. A text that starts with
/// `error: ` or `warning: ` gets that level's prefix (coloured when stderr may be).
pub fn note(text: &str) {
    for level in ["error", "warning"] {
        if let Some(rest) = text.strip_prefix(level).and_then(|t| t.strip_prefix(": ")) {
            return leveled(level, rest);
        }
    }
    let _ = writeln!(std::io::stderr().lock(), "forgestate: {text}");
}

/// `forgestate: error: {text}` on stderr.
pub fn error(text: &str) {
    leveled("error", text);
}

fn leveled(level: &str, text: &str) {
    let prefix = table::prefix(level, table::stderr_color());
    let _ = writeln!(std::io::stderr().lock(), "{prefix}{text}");
}

/// Text on stderr as it is (clap's usage lines after its error line).
pub fn raw_err(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

pub fn initialized(location: &str, author: &str, as_json: bool) {
    if as_json {
        return json(&json!({ "thread": location, "author": author }));
    }
    out(&format!(
        "session thread ready: {location} (records are posted as {author})"
    ));
}

pub fn posted(p: &Posted, as_json: bool) {
    if as_json {
        return json(p);
    }
    let kind = p.record.kind().name();
    let id = p.id.as_deref().unwrap_or("(no id)");
    let mut line = format!(
        "{kind} {id} saved as comment {} in {}",
        p.comment_id, p.store
    );
    if let Some(url) = &p.url {
        line.push_str(&format!("\n{url}"));
    }
    out(&line);
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Where a record sits: `comment 12`, or `pending (not posted yet)`.
fn place(e: &Entry) -> String {
    match e.comment.id {
        Some(id) => format!("comment {id}"),
        None => "pending in the outbox, not posted yet".to_string(),
    }
}

/// A record spooled to the outbox. `fail` is the exit code when that counts as a failure
/// (`--strict`); the JSON document then carries the `error` object too.
pub fn spooled(
    record: &Record,
    path: &Path,
    cause: &Error,
    as_json: bool,
    quiet: bool,
    fail: Option<u8>,
) {
    let id = record.id.as_deref().unwrap_or("(no id)");
    if as_json {
        let error = fail.map(|code| {
            let message = format!(
                "{} {id} was spooled to the outbox, not posted (--strict); `forgestate flush` \
                 posts it",
                record.kind().name()
            );
            ErrorBody::new(code, &message)
        });
        json(&SpooledDoc {
            cause: cause.to_string(),
            comment_id: None,
            error,
            id,
            record,
            spooled: path,
            url: None,
        });
    }
    if !quiet {
        note(&format!(
            "warning: {} {id} spooled to {} ({cause}); the next forgestate command or `forgestate flush` posts it",
            record.kind().name(),
            path.display()
        ));
    }
}

/// `checkpoint`/`health --json` when the record waits in the outbox. Keys in alphabetical
/// order, as they always were; `error` (in its fixed key order) only when that is a failure.
#[derive(Serialize)]
struct SpooledDoc<'a> {
    cause: String,
    comment_id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody>,
    id: &'a str,
    record: &'a Record,
    spooled: &'a Path,
    url: Option<String>,
}

/// `flush --json`; `error` is `null` unless the flush failed.
#[derive(Serialize)]
struct FlushedDoc<'a> {
    already_posted: usize,
    busy: bool,
    error: Option<ErrorBody>,
    left: usize,
    outbox: Option<&'a Path>,
    posted: Vec<Value>,
}

pub fn flushed(report: &FlushReport, dir: Option<&Path>, as_json: bool) {
    let posted: Vec<Value> = report
        .posted
        .iter()
        .map(|(path, c)| json!({"spooled": path, "comment_id": c.id, "url": c.url}))
        .collect();
    if as_json {
        let failure = errors::flush_failure(report);
        let error = failure
            .as_ref()
            .map(|(code, message)| ErrorBody::new(*code, message));
        return json(&FlushedDoc {
            already_posted: report.already_posted,
            busy: report.busy,
            error,
            left: report.left,
            outbox: dir,
            posted,
        });
    }
    let dir = dir.map_or_else(
        || "(no outbox: not a forge)".to_string(),
        |d| d.display().to_string(),
    );
    let mut text = format!("flushed {} record(s) from {dir}", report.posted.len());
    if report.already_posted > 0 {
        text.push_str(&format!(
            "; {} were already in the thread",
            report.already_posted
        ));
    }
    if report.busy {
        text.push_str("; another process is flushing");
    }
    text.push_str(&format!("; {} left", report.left));
    out(&text);
}

/// A record as a short block of text.
fn entry_text(e: &Entry) -> String {
    let r = &e.record;
    let mut text = format!(
        "{} {} ({}{}{})\nagent:   {}\nsession: {}\ntime:    {}\n",
        r.kind().name(),
        r.id.as_deref().unwrap_or("(version 1.0, no id)"),
        place(e),
        if e.comment.author.is_empty() {
            String::new()
        } else {
            format!(" by {}", e.comment.author)
        },
        if e.comment.edited { ", edited" } else { "" },
        r.agent,
        r.session,
        format_time(&r.time),
    );
    match &r.payload {
        Payload::Checkpoint { phase, data } => {
            text.push_str(&format!("phase:   {phase}\ndata:\n{}", pretty(data)));
        }
        Payload::Health {
            status,
            metrics,
            next_check,
        } => {
            text.push_str(&format!("status:  {status}\n"));
            if let Some(next) = next_check {
                text.push_str(&format!("next:    {next}\n"));
            }
            text.push_str(&format!("metrics:\n{}", pretty(metrics)));
        }
    }
    if let Some(url) = &e.comment.url {
        text.push_str(&format!("\n{url}"));
    }
    text
}

pub fn latest(entry: Option<&Entry>, as_json: bool) {
    match (entry, as_json) {
        (e, true) => json(&e),
        (Some(e), false) => out(&entry_text(e)),
        // On stderr, so `forgestate latest | wc -l` counts records.
        (None, false) => note("no matching record found"),
    }
}

pub fn resume(r: &Resume, agent: &str, session: &str, as_json: bool) {
    if as_json {
        return json(r);
    }
    let from = match &r.checkpoint {
        Some(e) => format!(
            "checkpoint {} ({}, {})",
            e.record.id.as_deref().unwrap_or("(version 1.0, no id)"),
            place(e),
            format_time(&e.record.time)
        ),
        None => format!("no checkpoint for agent {agent} in session {session}: fresh start"),
    };
    let offline = if r.offline {
        "\noffline:      the forge could not be read; answered from the outbox"
    } else {
        ""
    };
    let point = if r.unmapped {
        format!(
            "{} (the default: phase {} is not in the resume map of {agent})",
            r.resume_point, r.phase
        )
    } else {
        r.resume_point.clone()
    };
    out(&format!(
        "resume point: {point}\nphase:        {}\nfrom:         {from}{offline}\ndata:\n{}",
        r.phase,
        pretty(&r.data)
    ));
}

pub fn list(scan: &Scan, with_invalid: bool, as_json: bool) {
    if as_json {
        let mut doc = json!({ "records": scan.entries });
        if scan.offline {
            doc["offline"] = json!(true);
        }
        if with_invalid {
            doc["invalid"] = json!(scan.rejected);
        }
        return json(&doc);
    }
    if scan.entries.is_empty() && (!with_invalid || scan.rejected.is_empty()) {
        // On stderr, so `forgestate list | wc -l` is 0 when nothing matches.
        return note("no matching records");
    }
    if std::io::stdout().is_terminal() {
        return out(table_text(scan, with_invalid, chrono::Utc::now()).trim_end());
    }
    let mut text = String::new();
    for e in &scan.entries {
        let r = &e.record;
        text.push_str(&format!(
            "{:>6}  {}  {:<10}  {}  {}  {}{}\n",
            e.comment
                .id
                .map_or_else(|| "queued".to_string(), |id| id.to_string()),
            format_time(&r.time),
            r.kind().name(),
            r.agent,
            r.session,
            what(e),
            if e.comment.edited {
                "  (edited)"
            } else if e.comment.pending {
                "  (pending)"
            } else {
                ""
            },
        ));
    }
    if with_invalid {
        for rej in &scan.rejected {
            text.push_str(&format!(
                "{:>6}  invalid     by {}: {}: {}\n",
                rej.comment.id.unwrap_or(0),
                rej.comment.author,
                rej.code.code(),
                rej.reason
            ));
        }
    }
    out(text.trim_end());
}

/// `phase=...` or `status=...`.
fn what(e: &Entry) -> String {
    match &e.record.payload {
        Payload::Checkpoint { phase, .. } => format!("phase={phase}"),
        Payload::Health { status, .. } => format!("status={status}"),
    }
}

/// `list` at a terminal: a header, aligned columns, and ages instead of timestamps.
fn table_text(scan: &Scan, with_invalid: bool, now: chrono::DateTime<chrono::Utc>) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for e in &scan.entries {
        let r = &e.record;
        let mut detail = what(e);
        if e.comment.edited {
            detail.push_str(" (edited)");
        } else if e.comment.pending {
            detail.push_str(" (pending)");
        }
        rows.push(vec![
            e.comment
                .id
                .map_or_else(|| "queued".to_string(), |id| id.to_string()),
            table::relative_age(e.comment.created_at, now),
            r.kind().name().to_string(),
            r.agent.clone(),
            r.session.clone(),
            detail,
        ]);
    }
    if with_invalid {
        for rej in &scan.rejected {
            rows.push(vec![
                rej.comment.id.map_or_else(String::new, |id| id.to_string()),
                table::relative_age(rej.comment.created_at, now),
                "invalid".to_string(),
                format!("by {}", rej.comment.author),
                String::new(),
                format!("{}: {}", rej.code.code(), rej.reason),
            ]);
        }
    }
    let header = ["ID", "POSTED", "KIND", "AGENT", "SESSION", "DETAIL"];
    table::render(&header, &rows, table::stdout_color())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Utc};
    use forgestate::scan::CommentInfo;
    use serde_json::json;

    fn entry(id: u64, agent: &str, phase: &str, age_secs: i64) -> Entry {
        let at = Utc::now() - Duration::seconds(age_secs);
        Entry {
            record: Record::checkpoint(agent, "s1", phase, json!({})).unwrap(),
            comment: CommentInfo {
                id: Some(id),
                author: "bot".into(),
                created_at: at,
                updated_at: at,
                url: None,
                edited: false,
                pending: false,
            },
        }
    }

    #[test]
    fn the_terminal_table_has_a_header_aligned_columns_and_ages() {
        let scan = Scan {
            entries: vec![
                entry(7, "implementation-worker", "clone_complete", 3 * 60 + 10),
                entry(1234, "w", "pr_created", 2),
            ],
            ..Scan::default()
        };
        let text = table_text(&scan, false, Utc::now());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("ID    POSTED    KIND"), "{text}");
        assert!(
            lines[1].starts_with("7     3m ago    checkpoint  implementation-worker  s1"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("1234  just now  checkpoint  w                      s1"),
            "{text}"
        );
        let col = |l: &str| l.find("phase=");
        assert_eq!(col(lines[1]), col(lines[2]), "{text}");
        assert_eq!(col(lines[1]), lines[0].find("DETAIL"), "{text}");
    }
}
