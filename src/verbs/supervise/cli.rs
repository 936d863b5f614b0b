//! How the supervisor's verbs show on the command line: `status` as a table of verdicts
//! (coloured at a terminal; `--fail-on-stalled` sets the exit code, `--publish` writes the
//! table instead), `history` as a table with each record's details under it.

use super::{
    History, HistoryAnswer, HistoryRequest, StatusAnswer, StatusFlags, StatusRequest, StatusVerb,
};
use crate::error::{Error, Result};
use crate::format::format_time;
use crate::report::diff::{Change, Op};
use crate::report::{Origin, StatusRow, Step, Verdict};
use crate::verbs::cli::{Command, Printer, table};
use crate::verbs::{Context, Publish};

impl Command for StatusVerb {
    type Flags = StatusFlags;

    fn request(flags: &StatusFlags) -> Result<StatusRequest> {
        let r = &flags.request;
        if flags.publish && (r.agent.is_some() || r.session.is_some() || flags.fail_on_stalled) {
            return Err(Error::usage(
                "--publish writes the table of every agent and session; drop --agent, --session \
                 and --fail-on-stalled, or run `status` with them separately",
            ));
        }
        Ok(r.clone())
    }

    /// `status`, or with `--publish` the work of `publish` (with `status`'s threshold flags).
    async fn call(
        ctx: &Context<'_>,
        flags: &StatusFlags,
        r: StatusRequest,
        p: &impl Printer,
    ) -> Result<u8> {
        if flags.publish {
            // `publish`'s request read as every face reads it, from `status`'s thresholds.
            let args = serde_json::json!({
                "warn_after_secs": r.warn_after_secs,
                "stalled_after_secs": r.stalled_after_secs,
            });
            let request = crate::verbs::decode::<Publish>(args)
                .map_err(|e| Error::usage(format!("--publish: {e}")))?;
            let answer = crate::verbs::run::<Publish>(ctx, request.clone()).await?;
            return Ok(Publish::show(&request, answer, p));
        }
        let answer = crate::verbs::run::<StatusVerb>(ctx, r).await?;
        Ok(Self::show(flags, answer, p))
    }

    /// The table or JSON; exit 1 with `--fail-on-stalled` when any agent is stalled, 75 when the
    /// forge could not be read (the rows then come from this machine's read cache and outbox).
    fn show(a: &StatusFlags, answer: StatusAnswer, p: &impl Printer) -> u8 {
        p.warn(&answer.warnings);
        if answer.offline && !p.quiet() {
            p.note(
                "warning: the forge could not be read; the rows are judged from this machine's \
                 read cache and outbox",
            );
        }
        if p.json_mode() {
            p.json(&answer);
        } else if answer.rows.is_empty() {
            p.note("no matching records");
        } else {
            let now = crate::format::parse_time(&answer.now).unwrap_or_else(|_| chrono::Utc::now());
            let text = table_text(&answer.rows, now, p.layout(), p.color());
            p.out(text.trim_end());
        }
        if a.fail_on_stalled && answer.offline {
            // The rows are this machine's pending records only: an agent stalled in the thread
            // is not among them, so "nothing stalled" cannot be vouched for. Alerting must not
            // read an outage as all clear.
            p.note(
                "error: --fail-on-stalled: the forge could not be read, so stalled agents may be \
                 missing from the rows; exit 75 (try again when the forge answers)",
            );
            return 75;
        }
        u8::from(a.fail_on_stalled && answer.stalled > 0)
    }
}

impl Command for History {
    type Flags = HistoryRequest;

    fn request(flags: &HistoryRequest) -> Result<HistoryRequest> {
        Ok(flags.clone())
    }

    fn show(_: &HistoryRequest, h: HistoryAnswer, p: &impl Printer) -> u8 {
        p.warn(&h.warnings);
        if p.json_mode() {
            p.json(&h);
        } else if h.records.is_empty() {
            p.note(&format!("no records in session {}", h.session));
        } else {
            let text = history_text(&h, p.layout(), p.color(), p);
            p.out(text.trim_end());
        }
        0
    }
}

/// The table (ages on the store's clock, `now`), verdicts coloured when `color`.
fn table_text(
    rows: &[StatusRow],
    now: chrono::DateTime<chrono::Utc>,
    layout: table::Layout,
    color: bool,
) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.verdict.name().to_string(),
                r.agent.clone(),
                r.session.clone(),
                table::relative_age(r.last_seen, now),
                r.phase.clone().unwrap_or_else(|| "-".into()),
                r.resume_point.clone().unwrap_or_else(|| "-".into()),
                health(r),
                if r.blockers.is_empty() {
                    "-".to_string()
                } else {
                    r.blockers.join("; ")
                },
            ]
        })
        .collect();
    // Agent and session names are never cut; the free text gives way first.
    use table::{name, text, whole};
    let header = [
        whole("VERDICT"),
        whole("AGENT"),
        whole("SESSION"),
        text("LAST"),
        name("PHASE"),
        name("RESUME"),
        text("HEALTH"),
        text("BLOCKERS"),
    ];
    let text = table::lay_out(&header, &cells, layout, color);
    if !color {
        return text;
    }
    let mut lines = text.lines();
    let mut out = String::new();
    if layout != table::Layout::Piped {
        out = lines.next().map(|h| format!("{h}\n")).unwrap_or_default();
    }
    for (line, row) in lines.zip(rows) {
        let word = row.verdict.name();
        let rest = line.strip_prefix(word).unwrap_or(line);
        out.push_str(&table::paint(word, verdict_style(row.verdict)));
        out.push_str(rest);
        out.push('\n');
    }
    out
}

fn verdict_style(v: Verdict) -> table::Style {
    match v {
        Verdict::Stalled | Verdict::Conflicted => table::Style::Red,
        Verdict::Warning => table::Style::Yellow,
        Verdict::Alive => table::Style::Green,
        Verdict::Paused | Verdict::Completed | Verdict::Ended => table::Style::Dim,
    }
}

/// The last health status and a short summary of its top-level metrics: `Active (queue=3, ok=true)`.
fn health(r: &StatusRow) -> String {
    let Some(status) = &r.health else {
        return "-".to_string();
    };
    let Some(serde_json::Value::Object(metrics)) = &r.metrics else {
        return status.clone();
    };
    let parts: Vec<String> = metrics
        .iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect();
    let mut summary = parts.join(", ");
    if summary.chars().count() > 40 {
        summary = summary.chars().take(39).collect::<String>() + "…";
    }
    if summary.is_empty() {
        status.clone()
    } else {
        format!("{status} ({summary})")
    }
}

/// The session line, then one row per record (the store's time of its comment) with its detail
/// lines indented under it; the header only at a terminal.
fn history_text(h: &HistoryAnswer, layout: table::Layout, color: bool, p: &impl Printer) -> String {
    // Every line but the table's (which `table` cleans, keeping our colours) carries a record's
    // text: no control, bidi or invisible character of another writer reaches the terminal.
    let clean = |line: String| p.printable(&line);
    let mut out = clean(format!("session {}", h.session));
    if let Some(o) = &h.forked_from {
        out.push_str(&clean(format!(", forked from {}", origin(o))));
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = h.records.iter().map(row).collect();
    use table::{name, text, whole};
    let header = [
        whole("N"),
        whole("SEQ"),
        text("TIME"),
        text("+DELTA"),
        whole("AGENT"),
        whole("KIND"),
        name("PHASE/STATUS"),
        name("RESUME"),
    ];
    let body = table::lay_out(&header, &rows, layout, color);
    let mut lines = body.lines();
    if layout != table::Layout::Piped
        && let Some(head) = lines.next()
    {
        out.push_str(head);
        out.push('\n');
    }
    for (line, step) in lines.zip(&h.records) {
        out.push_str(line);
        out.push('\n');
        if let Some(o) = step
            .forked_from
            .as_ref()
            .filter(|o| h.forked_from.as_ref() != Some(*o))
        {
            out.push_str(&clean(format!("    forked from {}\n", origin(o))));
        }
        if let Some(next) = &step.next {
            out.push_str(&clean(format!("    next: {next}\n")));
        }
        for b in &step.blockers {
            out.push_str(&clean(format!("    blocker: {b}\n")));
        }
        for c in step.changes.iter().flatten() {
            out.push_str(&clean(format!("    {}\n", change(c))));
        }
    }
    out
}

fn row(s: &Step) -> Vec<String> {
    vec![
        s.n.to_string(),
        s.seq.map_or_else(|| "-".into(), |n| n.to_string()),
        format_time(&s.posted_at),
        s.since_previous_secs.map_or_else(
            || "-".into(),
            |d| format!("+{}", crate::report::status::span(d)),
        ),
        s.agent.clone(),
        s.kind.name().to_string(),
        s.phase
            .clone()
            .or_else(|| s.status.clone())
            .unwrap_or_default(),
        s.resume_point.clone().unwrap_or_else(|| "-".into()),
    ]
}

fn origin(o: &Origin) -> String {
    let phase = o
        .phase
        .as_deref()
        .map(|p| format!(", phase {p}"))
        .unwrap_or_default();
    format!(
        "session {} at record {} ({}{phase})",
        o.session, o.record_id, o.agent
    )
}

/// `+ /path: value`, `- /path: value`, `~ /path: old -> new`.
fn change(c: &Change) -> String {
    let show =
        |v: &Option<serde_json::Value>| v.as_ref().map(|v| v.to_string()).unwrap_or_default();
    let path = if c.path.is_empty() { "/" } else { &c.path };
    match c.op {
        Op::Added => format!("+ {path}: {}", show(&c.new)),
        Op::Removed => format!("- {path}: {}", show(&c.old)),
        Op::Changed => format!("~ {path}: {} -> {}", show(&c.old), show(&c.new)),
    }
}
