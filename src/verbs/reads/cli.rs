//! How the reading verbs show on the command line: `resume` and `latest` as a block of text,
//! `list` as a table (tab-separated with the store's times when piped, aligned with ages at a
//! terminal).

use serde_json::Value;

use super::{
    LatestAnswer, LatestRequest, LatestVerb, ListAnswer, ListRequest, ListVerb, ResumeAnswer,
    ResumeRequest, ResumeVerb,
};
use crate::error::Result;
use crate::format::{Payload, format_time};
use crate::scan::Entry;
use crate::verbs::cli::{Command, Printer, table};

impl Command for ResumeVerb {
    type Flags = ResumeRequest;

    fn request(flags: &ResumeRequest) -> Result<ResumeRequest> {
        Ok(flags.clone())
    }

    fn show(a: &ResumeRequest, answer: ResumeAnswer, p: &impl Printer) -> u8 {
        p.warn(&answer.warnings);
        match p.json_mode() {
            true => p.json(&answer),
            false => resume_text(&answer, &a.agent, &a.session, p),
        }
        0
    }
}

impl Command for LatestVerb {
    type Flags = LatestRequest;

    fn request(flags: &LatestRequest) -> Result<LatestRequest> {
        Ok(flags.clone())
    }

    fn show(_: &LatestRequest, answer: LatestAnswer, p: &impl Printer) -> u8 {
        p.warn(&answer.warnings);
        match (&answer.record, p.json_mode()) {
            (_, true) => p.json(&answer),
            (Some(e), false) => p.out(&entry_text(e, p)),
            // On stderr, so `forgestate latest | wc -l` counts records.
            (None, false) => p.note("no matching record found"),
        }
        0
    }
}

impl Command for ListVerb {
    type Flags = ListRequest;

    fn request(flags: &ListRequest) -> Result<ListRequest> {
        Ok(flags.clone())
    }

    fn show(a: &ListRequest, scan: ListAnswer, p: &impl Printer) -> u8 {
        p.warn(&scan.warnings);
        if p.json_mode() {
            p.json(&scan);
            return 0;
        }
        let rejected = scan.invalid.as_deref().unwrap_or_default();
        if scan.records.is_empty() && rejected.is_empty() {
            // On stderr, so `forgestate list | wc -l` is 0 when nothing matches.
            p.note("no matching records");
            return 0;
        }
        let text = match p.layout() {
            table::Layout::Piped => table_text(
                &scan,
                a.invalid,
                table::Layout::Piped,
                p.color(),
                format_time,
            ),
            terminal => {
                let now = chrono::Utc::now();
                table_text(&scan, a.invalid, terminal, p.color(), |t| {
                    table::relative_age(*t, now)
                })
            }
        };
        p.out(text.trim_end());
        0
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A record's time; at a terminal, with its age (`2026-11-29T08:40:58.000123Z, 3m ago`).
fn when(t: &chrono::DateTime<chrono::Utc>, p: &impl Printer) -> String {
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
fn place(e: &Entry) -> String {
    match e.comment.id {
        Some(id) => format!("comment {id}"),
        None => "pending in the outbox, not posted yet".to_string(),
    }
}

/// A record as a short block of text.
fn entry_text(e: &Entry, p: &impl Printer) -> String {
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

/// `resume` as text: the resume point, where it comes from, the handoff and the data.
fn resume_text(answer: &ResumeAnswer, agent: &str, session: &str, p: &impl Printer) {
    let facts = answer;
    let r = answer;
    let from = match &r.checkpoint {
        Some(e) => format!(
            "checkpoint {} ({}, {})",
            e.record.id.as_deref().unwrap_or("(version 1.0, no id)"),
            place(e),
            when(&e.record.time, p)
        ),
        None => format!("no checkpoint for agent {agent} in session {session}: fresh start"),
    };
    let offline = if r.offline {
        "\noffline:      the forge could not be read; answered from this machine's read cache and outbox"
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
    let mut handoff = String::new();
    if let Some(next) = &r.next {
        handoff.push_str(&format!("\nnext:         {next}"));
    }
    for b in &r.blockers {
        handoff.push_str(&format!("\nblocker:      {b}"));
    }
    if let Some(end) = &facts.ended {
        handoff.push_str(&format!("\nended:        {} at {}", end.reason, end.at));
        if let Some(note) = &end.note {
            handoff.push_str(&format!(" ({note})"));
        }
    }
    if let Some(end) = &facts.reopened {
        let reason = &end.reason;
        let at = &end.at;
        handoff.push_str(&format!("\nreopened:     after an end ({reason}) at {at}"));
    }
    if let Some(intent) = &facts.pending_intent {
        handoff.push_str(&format!(
            "\nintent:       PENDING {} (since {}): check whether it happened before doing it again",
            intent.name, intent.at
        ));
    }
    match r.context_drift {
        Some(true) => handoff.push_str(
            "\ncontext:      DRIFTED: the context file changed since this checkpoint (or it \
             recorded no Context-Hash); re-read it before going on",
        ),
        Some(false) => handoff.push_str("\ncontext:      unchanged since this checkpoint"),
        None => {}
    }
    p.out(&p.printable(&format!(
        "resume point: {point}\nphase:        {}\nfrom:         {from}{offline}{handoff}\ndata:\n{}",
        r.phase,
        pretty(&r.data)
    )));
}

/// `phase=...` or `status=...`.
fn what(e: &Entry) -> String {
    match &e.record.payload {
        Payload::Checkpoint { phase, .. } => format!("phase={phase}"),
        Payload::Health { status, .. } => format!("status={status}"),
        Payload::End { reason, .. } => format!("reason={reason}"),
        Payload::Takeover { .. } => {
            format!("owner={}", e.record.writer.as_deref().unwrap_or("unknown"))
        }
    }
}

/// `list` as a table: the comment id, the store's time of the comment (`time`: RFC 3339 when
/// piped, an age at a terminal), kind, agent, session and detail.
fn table_text(
    scan: &ListAnswer,
    with_invalid: bool,
    layout: table::Layout,
    color: bool,
    time: impl Fn(&chrono::DateTime<chrono::Utc>) -> String,
) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for e in &scan.records {
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
            time(&e.comment.created_at),
            r.kind().name().to_string(),
            r.agent.clone(),
            r.session.clone(),
            detail,
        ]);
    }
    if with_invalid {
        for rej in scan.invalid.iter().flatten() {
            rows.push(vec![
                rej.comment.id.map_or_else(String::new, |id| id.to_string()),
                time(&rej.comment.created_at),
                "invalid".to_string(),
                format!("by {}", rej.comment.author),
                String::new(),
                format!("{}: {}", rej.code.code(), rej.reason),
            ]);
        }
    }
    use table::{text, whole};
    let header = [
        whole("ID"),
        text("POSTED"),
        whole("KIND"),
        whole("AGENT"),
        whole("SESSION"),
        text("DETAIL"),
    ];
    table::lay_out(&header, &rows, layout, color)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Record;
    use crate::scan::CommentInfo;
    use chrono::{Duration, Utc};
    use serde_json::json;

    pub(super) fn answer(records: Vec<Entry>) -> ListAnswer {
        ListAnswer {
            records,
            invalid: None,
            offline: false,
            complete: true,
            warnings: Vec::new(),
        }
    }

    fn entry(id: u64, agent: &str, phase: &str, age_secs: i64) -> Entry {
        let at = Utc::now() - Duration::seconds(age_secs);
        Entry {
            record: Record::checkpoint(agent, "s1", phase, json!({})).unwrap(),
            fenced: false,
            comment: CommentInfo {
                id: Some(id),
                author: "bot".into(),
                created_at: at,
                updated_at: at,
                url: None,
                issue: None,
                edited: false,
                pending: false,
                unsigned: false,
            },
        }
    }

    #[test]
    fn the_terminal_table_has_a_header_aligned_columns_and_ages() {
        let scan = answer(vec![
            entry(7, "implementation-worker", "clone_complete", 3 * 60 + 10),
            entry(1234, "w", "pr_created", 2),
        ]);
        let now = Utc::now();
        let text = table_text(&scan, false, table::Layout::Terminal(200), false, |t| {
            table::relative_age(*t, now)
        });
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

#[cfg(test)]
mod piped {
    use super::*;
    use crate::format::Record;
    use crate::scan::CommentInfo;
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    #[test]
    fn piped_list_is_tab_separated_with_the_stores_time_not_the_time_line() {
        let stored = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
        let mut record = Record::checkpoint("w", "s1", "clone_complete", json!({})).unwrap();
        record.time = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
        let scan = super::tests::answer(vec![Entry {
            record,
            fenced: false,
            comment: CommentInfo {
                id: Some(7),
                author: "bot".into(),
                created_at: stored,
                updated_at: stored,
                url: None,
                issue: None,
                edited: false,
                pending: false,
                unsigned: false,
            },
        }]);
        let text = table_text(&scan, false, table::Layout::Piped, false, format_time);
        assert_eq!(
            text,
            "7\t2026-12-01T10:00:00.000000Z\tcheckpoint\tw\ts1\tphase=clone_complete\n"
        );
    }
}
