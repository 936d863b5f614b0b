//! `list`: matching records, oldest first; on the command line a table (tab-separated with the
//! store's times when piped, aligned with ages at a terminal).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::filter::{FilterRequest, by_phase};
use super::{Context, Run, Spec, Verb, input};
use crate::ListQuery;
use crate::error::Result;
use crate::scan::{Entry, Rejected};

/// `list`: matching records, oldest first.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
// Closed, though serde cannot refuse an unknown key beside a flattened part: `request_of`
// refuses what the schema has no property for.
#[schemars(deny_unknown_fields)]
pub struct ListRequest {
    /// Which records count.
    #[serde(flatten)]
    #[cfg_attr(feature = "cli", command(flatten))]
    pub filter: FilterRequest,
    /// Only records posted at or after this time: RFC 3339 ("2026-11-29T08:00:00Z") or an age
    /// such as "90m", "24h" or "7d".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TIME"))]
    pub since: Option<String>,
    /// Only the newest N matching records (still returned oldest first). Default: all.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub limit: Option<usize>,
    /// Also return comments that are not valid, trusted records, with the reason.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub invalid: bool,
    /// Read the thread's whole history: every earlier session issue it continues (rotated away),
    /// not only the current one and what was carried from them.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
}

/// What `list` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListAnswer {
    /// The matching records, oldest first.
    pub records: Vec<Entry>,
    /// With `invalid`: the comments that are not valid, trusted records, with the reason (null
    /// without it).
    pub invalid: Option<Vec<Rejected>>,
    /// The store could not be read: the records come from this machine's read cache and outbox.
    pub offline: bool,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    pub complete: bool,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// List.
pub struct ListVerb;

impl Verb for ListVerb {
    type Request = ListRequest;
    type Answer = ListAnswer;
    const DECLARED: Spec = Spec {
        name: "list",
        title: "List records",
        description: "List records matching the filters (agent and session globs, kind, phase \
            glob, since a time or an age such as \"24h\"), oldest first; `limit` keeps only the \
            newest N. Use it to review what agents recorded. Returns `records`, and with \
            `invalid: true` also the comments that are not valid, trusted records, with the \
            reason.",
        example: r#"{"session": "s1", "limit": 5}"#,
        about: "List records, oldest first",
        examples: "  forgestate list --session s1
  forgestate list --agent 'implementation-*' --since 24h --limit 20
  forgestate list --invalid --json",
        ..Spec::AGENT_READ
    };
}

impl Run for ListVerb {
    async fn run(ctx: &Context<'_>, r: ListRequest) -> Result<ListAnswer> {
        let since = r
            .since
            .as_deref()
            .map(|t| input::since_arg("since", t))
            .transpose()?;
        // An age is counted back on the store's clock, as `status` measures ages.
        let (since, age) = input::Since::split(since);
        let filter = r.filter.filter(since)?;
        // With a phase filter, the limit counts only the records that pass it.
        let limit = r.limit.filter(|_| r.filter.phase.is_none());
        let mut scan = ctx
            .client
            .query(&ListQuery {
                filter,
                limit,
                age,
                whole_history: r.all,
            })
            .await?;
        if let Some(phase) = &r.filter.phase {
            scan = by_phase(scan, phase);
        }
        if let Some(limit) = r.limit {
            let skip = scan.entries.len().saturating_sub(limit);
            scan.entries.drain(..skip);
        }
        let complete = scan.complete();
        let invalid = r.invalid.then_some(scan.rejected);
        Ok(ListAnswer {
            complete,
            records: scan.entries,
            invalid,
            offline: scan.offline,
            warnings: scan.warnings,
        })
    }
}

#[cfg(feature = "cli")]
mod cli {
    use super::{ListAnswer, ListRequest, ListVerb};

    use crate::format::format_time;

    use crate::verbs::cli::record::what;
    use crate::verbs::cli::{Command, Printer, table};

    impl Command for ListVerb {
        type Flags = ListRequest;

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
            let (layout, now) = (p.layout(), chrono::Utc::now());
            let time = |t: &chrono::DateTime<chrono::Utc>| match layout {
                table::Layout::Piped => format_time(t),
                _ => table::relative_age(*t, now),
            };
            let text = table_text(&scan, a.invalid, layout, p.color(), time);
            p.out(text.trim_end());
            0
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
        use crate::scan::{CommentInfo, Entry};
        use chrono::{DateTime, Duration, TimeZone, Utc};
        use serde_json::json;

        /// A checkpoint of session `s1` in comment `id`, posted (by the store's clock) `at`.
        fn entry(id: u64, agent: &str, phase: &str, at: DateTime<Utc>) -> Entry {
            let mut record = Record::checkpoint(agent, "s1", phase, json!({})).unwrap();
            record.time = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
            let comment = CommentInfo::at(Some(id), "bot", at);
            let fenced = false;
            Entry {
                record,
                fenced,
                comment,
            }
        }

        fn answer(records: Vec<Entry>) -> ListAnswer {
            let (invalid, warnings) = (None, Vec::new());
            ListAnswer {
                records,
                invalid,
                offline: false,
                complete: true,
                warnings,
            }
        }

        #[test]
        fn the_terminal_table_has_a_header_aligned_columns_and_ages() {
            let now = Utc::now();
            let scan = answer(vec![
                entry(
                    7,
                    "implementation-worker",
                    "clone_complete",
                    now - Duration::seconds(190),
                ),
                entry(1234, "w", "pr_created", now - Duration::seconds(2)),
            ]);
            let text = table_text(&scan, false, table::Layout::Terminal(200), false, |t| {
                table::relative_age(*t, now)
            });
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 3, "{text}");
            assert!(lines[0].starts_with("ID    POSTED    KIND"), "{text}");
            let first = "7     3m ago    checkpoint  implementation-worker  s1";
            assert!(lines[1].starts_with(first), "{text}");
            let second = "1234  just now  checkpoint  w                      s1";
            assert!(lines[2].starts_with(second), "{text}");
            let col = |l: &str| l.find("phase=");
            assert_eq!(col(lines[1]), col(lines[2]), "{text}");
            assert_eq!(col(lines[1]), lines[0].find("DETAIL"), "{text}");
        }

        #[test]
        fn piped_list_is_tab_separated_with_the_stores_time_not_the_time_line() {
            let stored = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
            let scan = answer(vec![entry(7, "w", "clone_complete", stored)]);
            let text = table_text(&scan, false, table::Layout::Piped, false, format_time);
            assert_eq!(
                text,
                "7\t2026-12-01T10:00:00.000000Z\tcheckpoint\tw\ts1\tphase=clone_complete\n"
            );
        }
    }
}
