//! Everything the CLI prints: one JSON document with `--json`, readable text without.
//!
//! Only this module writes to stdout. Writes ignore a closed pipe (`forgestate list | head`).

use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use std::path::Path;

use forgestate::format::Record;
use forgestate::format::{Payload, format_time};
use forgestate::resume::Resume;
use forgestate::scan::{Entry, Scan};
use forgestate::{Error, Posted};

/// Prints a value as one pretty JSON document on stdout.
pub fn json<T: Serialize>(value: &T) {
    let text = serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    out(&text);
}

/// Writes text and a newline to stdout.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// A human message on stderr, prefixed like every forgestate message.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "forgestate: {text}");
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
    if let Some(n) = p.record.redacted {
        line.push_str(&format!(" ({n} secret value(s) redacted)"));
    }
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

pub fn spooled(record: &Record, path: &Path, cause: &Error, as_json: bool, quiet: bool) {
    let id = record.id.as_deref().unwrap_or("(no id)");
    if as_json {
        json(&json!({
            "id": id, "comment_id": null, "url": null, "spooled": path, "cause": cause.to_string(),
            "record": record,
        }));
    }
    if !quiet {
        note(&format!(
            "warning: {} {id} spooled to {} ({cause}); the next forgestate command or `forgestate flush` posts it{}",
            record.kind().name(),
            path.display(),
            record
                .redacted
                .map(|n| format!(" ({n} secret value(s) redacted)"))
                .unwrap_or_default()
        ));
    }
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
        (None, false) => out("no matching record found"),
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
    out(&format!(
        "resume point: {}\nphase:        {}\nfrom:         {from}{offline}\ndata:\n{}",
        r.resume_point,
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
    let mut text = String::new();
    for e in &scan.entries {
        let r = &e.record;
        let what = match &r.payload {
            Payload::Checkpoint { phase, .. } => format!("phase={phase}"),
            Payload::Health { status, .. } => format!("status={status}"),
        };
        text.push_str(&format!(
            "{:>6}  {}  {:<10}  {}  {}  {what}{}\n",
            e.comment
                .id
                .map_or_else(|| "queued".to_string(), |id| id.to_string()),
            format_time(&r.time),
            r.kind().name(),
            r.agent,
            r.session,
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
    if text.is_empty() {
        text.push_str("no matching records\n");
    }
    out(text.trim_end());
}
