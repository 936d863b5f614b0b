//! `list` as text: stable lines when piped, a table with ages at a terminal.

use std::io::IsTerminal;

use forgestate::format::{Payload, format_time};
use forgestate::scan::{Entry, Scan};

use super::{note, out, table};

pub fn list(scan: &Scan, with_invalid: bool, as_json: bool) {
    if as_json {
        return super::json(&forgestate::verbs::ListAnswer {
            records: scan.entries.clone(),
            invalid: with_invalid.then(|| scan.rejected.clone()),
            offline: scan.offline,
            warnings: scan.warnings.clone(),
        });
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
pub fn what(e: &Entry) -> String {
    match &e.record.payload {
        Payload::Checkpoint { phase, .. } => format!("phase={phase}"),
        Payload::Health { status, .. } => format!("status={status}"),
        Payload::End { reason, .. } => format!("reason={reason}"),
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
    use forgestate::format::Record;
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
                issue: None,
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
