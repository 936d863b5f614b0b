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
impl super::cli::Command for ListVerb {
    type Flags = ListRequest;

    fn show(_: &ListRequest, scan: ListAnswer, p: &impl super::cli::Printer) -> u8 {
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
        // The comment id, the store's time of the comment (RFC 3339 when piped, an age at a
        // terminal), kind, agent, session and detail.
        let (layout, now) = (p.layout(), chrono::Utc::now());
        let time = |t: &chrono::DateTime<chrono::Utc>| match layout {
            super::cli::table::Layout::Piped => crate::format::format_time(t),
            _ => super::cli::table::relative_age(*t, now),
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        for e in &scan.records {
            let r = &e.record;
            let mut detail = super::cli::record::what(e);
            if e.fenced {
                detail.push_str(" (fenced)");
            }
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
        for rej in rejected {
            rows.push(vec![
                rej.comment.id.map_or_else(String::new, |id| id.to_string()),
                time(&rej.comment.created_at),
                "invalid".to_string(),
                format!("by {}", rej.comment.author),
                String::new(),
                format!("{}: {}", rej.code.code(), rej.reason),
            ]);
        }
        use super::cli::table::{text, whole};
        let header = [
            whole("ID"),
            text("POSTED"),
            whole("KIND"),
            whole("AGENT"),
            whole("SESSION"),
            text("DETAIL"),
        ];
        let text = super::cli::table::lay_out(&header, &rows, layout, p.color());
        p.out(text.trim_end());
        0
    }
}
