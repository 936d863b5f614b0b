//! `forgestate status`: flags into a filter and a policy, then the verdicts as a table or JSON.

use forgestate::report::{StatusRow, Verdict};

use forgestate::verbs::{PublishRequest, StatusFlags, StatusVerb};

use super::args::Cli;
use super::failure::Failure;
use super::{output, table};

/// Runs `status`; exit 1 with `--fail-on-stalled` when any agent is stalled, 75 when the forge
/// could not be read (the rows then come from this machine's read cache and outbox).
pub async fn status(cli: &Cli, a: &StatusFlags) -> Result<u8, Failure> {
    let r = &a.request;
    if a.publish {
        if r.agent.is_some() || r.session.is_some() || a.fail_on_stalled {
            return Err(forgestate::Error::usage(
                "--publish writes the table of every agent and session; drop --agent, --session \
                 and --fail-on-stalled, or run `status` with them separately"
                    .to_string(),
            )
            .into());
        }
        let request = PublishRequest {
            warn_after_secs: r.warn_after_secs,
            stalled_after_secs: r.stalled_after_secs,
        };
        return super::carry::publish(cli, request).await;
    }
    let answer = super::verb::run::<StatusVerb>(cli, r.clone()).await?;
    super::verb::warn(cli, &answer.warnings);
    if answer.offline && !cli.quiet {
        output::note(
            "warning: the forge could not be read; the rows are judged from this machine's read \
             cache and outbox",
        );
    }
    if cli.json {
        output::json(&answer);
    } else if answer.rows.is_empty() {
        output::note("no matching records");
    } else {
        let now =
            forgestate::format::parse_time(&answer.now).unwrap_or_else(|_| chrono::Utc::now());
        let text = table_text(
            &answer.rows,
            now,
            table::stdout_layout(),
            table::stdout_color(),
        );
        output::out(text.trim_end());
    }
    if a.fail_on_stalled && answer.offline {
        // The rows are this machine's pending records only: an agent stalled in the thread is
        // not among them, so "nothing stalled" cannot be vouched for. Alerting must not read
        // an outage as all clear.
        output::note(
            "error: --fail-on-stalled: the forge could not be read, so stalled agents may be \
             missing from the rows; exit 75 (try again when the forge answers)",
        );
        return Ok(75);
    }
    Ok(u8::from(a.fail_on_stalled && answer.stalled > 0))
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
