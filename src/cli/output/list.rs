//! `list` as text: tab-separated lines with the store's times when piped, a table with ages at
//! a terminal.

use forgestate::format::{Payload, format_time};
use forgestate::scan::Entry;
use forgestate::verbs::ListAnswer;

use super::{note, out, table};

pub fn list(scan: &ListAnswer, with_invalid: bool, as_json: bool) {
    if as_json {
        return super::json(scan);
    }
    let rejected = scan.invalid.as_deref().unwrap_or_default();
    if scan.records.is_empty() && rejected.is_empty() {
        // On stderr, so `forgestate list | wc -l` is 0 when nothing matches.
        return note("no matching records");
    }
    let text = match table::stdout_layout() {
        table::Layout::Piped => table_text(scan, with_invalid, table::Layout::Piped, format_time),
        terminal => {
            let now = chrono::Utc::now();
            table_text(scan, with_invalid, terminal, |t| {
                table::relative_age(*t, now)
            })
        }
    };
    out(text.trim_end());
}

/// `phase=...` or `status=...`.
pub fn what(e: &Entry) -> String {
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
    table::lay_out(&header, &rows, layout, table::stdout_color())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Utc};
    use forgestate::format::Record;
    use forgestate::scan::CommentInfo;
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
        let text = table_text(&scan, false, table::Layout::Terminal(200), |t| {
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
    use chrono::{TimeZone, Utc};
    use forgestate::format::Record;
    use forgestate::scan::CommentInfo;
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
        let text = table_text(&scan, false, table::Layout::Piped, format_time);
        assert_eq!(
            text,
            "7\t2026-12-01T10:00:00.000000Z\tcheckpoint\tw\ts1\tphase=clone_complete\n"
        );
    }
}
