//! A record on the command line: its time, its place, and the record as a short block of text
//! (what `resume`, `latest` and `list` print).

use serde_json::Value;

use crate::format::{Payload, format_time};
use crate::scan::Entry;
use crate::verbs::cli::{Printer, table};

pub(crate) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A record's time; at a terminal, with its age (`2026-11-29T08:40:58.000123Z, 3m ago`).
pub(crate) fn when(t: &chrono::DateTime<chrono::Utc>, p: &impl Printer) -> String {
    if p.layout() != table::Layout::Piped {
        format!(
            "{}, {}",
            format_time(t),
            table::relative_age(*t, chrono::Utc::now())
        )
    } else {
        format_time(t)
    }
}

/// Where a record sits: `comment 12`, or `pending (not posted yet)`.
pub(crate) fn place(e: &Entry) -> String {
    match e.comment.id {
        Some(id) => format!("comment {id}"),
        None => "pending in the outbox, not posted yet".to_string(),
    }
}

/// A record as a short block of text.
pub(crate) fn entry_text(e: &Entry, p: &impl Printer) -> String {
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
        when(&r.time, p),
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
        Payload::End { reason, note } => {
            text.push_str(&format!("reason:  {reason}\n"));
            if let Some(note) = note {
                text.push_str(&format!("note:    {note}\n"));
            }
        }
        Payload::Takeover { from, by } => {
            let owner = r.writer.as_deref().unwrap_or("unknown");
            text.push_str(&format!("owner:   {owner}\n"));
            if let Some(from) = from {
                text.push_str(&format!("from:    {from}\n"));
            }
            if let Some(by) = by {
                text.push_str(&format!("by:      {by}\n"));
            }
        }
    }
    if let Some(intent) = &r.intent {
        text.push_str(&format!("\nintent:  {}", intent.name));
    }
    if let Some(done) = &r.done {
        text.push_str(&format!("\ndone:    {done}"));
    }
    if let Some(url) = &e.comment.url {
        text.push_str(&format!("\n{url}"));
    }
    p.printable(&text)
}

/// `phase=...` or `status=...`.
pub(crate) fn what(e: &Entry) -> String {
    match &e.record.payload {
        Payload::Checkpoint { phase, .. } => format!("phase={phase}"),
        Payload::Health { status, .. } => format!("status={status}"),
        Payload::End { reason, .. } => format!("reason={reason}"),
        Payload::Takeover { .. } => {
            format!("owner={}", e.record.writer.as_deref().unwrap_or("unknown"))
        }
    }
}
