//! `forgestate history`: one session step by step, as a table (with the JSON changes under each
//! checkpoint with `--diff`) or as JSON.

use forgestate::format::format_time;
use forgestate::report::diff::{Change, Op};
use forgestate::report::{Origin, Step};
use forgestate::verbs::{History, HistoryAnswer, HistoryRequest};

use super::args::Cli;
use super::failure::Failure;
use super::{output, table};

/// Runs `history`.
pub async fn history(cli: &Cli, a: &HistoryRequest) -> Result<u8, Failure> {
    let h = super::verb::run::<History>(cli, a.clone()).await?;
    super::verb::warn(cli, &h.warnings);
    if cli.json {
        output::json(&h);
    } else if h.records.is_empty() {
        output::note(&format!("no records in session {}", h.session));
    } else {
        output::out(text(&h, table::stdout_layout(), table::stdout_color()).trim_end());
    }
    Ok(0)
}

/// The session line, then one row per record (the store's time of its comment) with its detail
/// lines indented under it; the header only at a terminal.
fn text(h: &HistoryAnswer, layout: table::Layout, color: bool) -> String {
    // Every line but the table's (which `table` cleans, keeping our colours) carries a record's
    // text: no control, bidi or invisible character of another writer reaches the terminal.
    let clean = |line: String| super::output::printable(&line).into_owned();
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
            |d| format!("+{}", forgestate::report::status::span(d)),
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
