//! `status`: who is alive and who has stalled; on the command line a table of verdicts
//! (coloured at a terminal; `--fail-on-stalled` sets the exit code, `--publish` writes the
//! table instead).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Group, Run, Spec, Verb, input};
use crate::error::Result;
use crate::report::Thresholds;
use crate::scan::Filter;

/// `status`: who is alive, and who has stalled.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {
    /// Only agents matching this glob, e.g. "implementation-*".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Only sessions matching this glob.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub session: Option<String>,
    /// How long without any record before an agent is "warning", for every agent: seconds, or a
    /// duration such as "90s", "10m", "2h" (overrides the configured thresholds; default 600).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "warn-after", value_name = "DUR", value_parser = super::input::duration_flag))]
    pub warn_after_secs: Option<u64>,
    /// How long without any record before an agent is "stalled", for every agent: seconds, or a
    /// duration such as "30m" (overrides the configured thresholds; default 1800).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "stalled-after", value_name = "DUR", value_parser = super::input::duration_flag))]
    pub stalled_after_secs: Option<u64>,
}

/// `forgestate status`'s flags: the request's, and the command line's own extras.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, clap::Args)]
pub struct StatusFlags {
    /// The request.
    #[command(flatten)]
    pub request: StatusRequest,
    /// Exit 1 when any agent is stalled (for cron and alerting)
    #[arg(long)]
    pub fail_on_stalled: bool,
    /// Also write the table into the session issue's body (see `forgestate publish`)
    #[arg(long)]
    pub publish: bool,
}

/// What `status` answers: the library's answer as it is.
pub use crate::Status as StatusAnswer;

/// Status.
pub struct StatusVerb;

impl Verb for StatusVerb {
    type Request = StatusRequest;
    type Answer = StatusAnswer;
    const DECLARED: Spec = Spec {
        name: "status",
        title: "Who is alive, who has stalled",
        description: "Who is alive and who has stalled: one row per (agent, session) with its \
            verdict (conflicted: two writers continued from one record; stalled, warning, alive, \
            paused; ended: an `end` record with a reason other than completed, never stalled; \
            completed), the age of its newest record on the store's clock, its last phase and resume point, its last health status and \
            metrics, its next step and blockers. Call it as a supervisor before deciding which \
            agent to restart or unblock. `agent` and `session` are globs; \
            `warn_after_secs`/`stalled_after_secs` override the configured thresholds (default \
            600 and 1800). Returns `rows` (stalled first), `stalled` (how many), `offline` and \
            `warnings`.",
        group: Group::Supervisors,
        flags: &[
            ("warn_after_secs", "warn-after"),
            ("stalled_after_secs", "stalled-after"),
        ],
        example: r#"{"agent": "w", "stalled_after_secs": 3600}"#,
        about: "Who is alive: one row per agent and session with a verdict (alive, warning, stalled, paused, completed), stalled first",
        after: "Ages are measured on the store's clock (a forge's, from its Date header). Thresholds come from --warn-after/--stalled-after, else [status] in the configuration (per agent glob), else 10m and 30m.",
        examples: "  forgestate status
  forgestate status --agent 'implementation-*' --stalled-after 15m
  forgestate status --fail-on-stalled --json",
        ..Spec::AGENT_READ
    };
}

impl Run for StatusVerb {
    async fn run(ctx: &Context<'_>, r: StatusRequest) -> Result<StatusAnswer> {
        input::check_glob("agent", r.agent.as_deref())?;
        input::check_glob("session", r.session.as_deref())?;
        let policy = ctx.policy.clone().force(Thresholds {
            warn_after_secs: r.warn_after_secs,
            stalled_after_secs: r.stalled_after_secs,
        });
        let filter = Filter {
            agent: r.agent,
            session: r.session,
            ..Filter::default()
        };
        ctx.client.status(&filter, &policy).await
    }
}

#[cfg(feature = "cli")]
mod cli {
    use super::{StatusAnswer, StatusFlags, StatusRequest, StatusVerb};
    use crate::error::{Error, Result};
    use crate::report::{StatusRow, Verdict};
    use crate::verbs::cli::{Command, Printer, table};
    use crate::verbs::{Context, Publish};

    impl crate::verbs::cli::MakeRequest<StatusRequest> for StatusFlags {
        fn request(&self) -> Result<StatusRequest> {
            let r = &self.request;
            if self.publish && (r.agent.is_some() || r.session.is_some() || self.fail_on_stalled) {
                return Err(Error::usage(
                    "--publish writes the table of every agent and session; drop --agent, --session \
                     and --fail-on-stalled, or run `status` with them separately",
                ));
            }
            Ok(r.clone())
        }
    }

    impl Command for StatusVerb {
        type Flags = StatusFlags;

        /// `status`, or with `--publish` the work of `publish` (with `status`'s threshold flags);
        /// exit 1 with `--fail-on-stalled` when any agent is stalled, 75 when the forge could not
        /// be read (the rows then come from this machine's read cache and outbox).
        async fn call(
            ctx: &Context<'_>,
            flags: &StatusFlags,
            r: StatusRequest,
            p: &impl Printer,
        ) -> Result<u8> {
            if flags.publish {
                // `publish`'s request read as every face reads it, from `status`'s thresholds
                // (its type is named in its own file only).
                let args = serde_json::json!({
                    "warn_after_secs": r.warn_after_secs,
                    "stalled_after_secs": r.stalled_after_secs,
                });
                let request = crate::verbs::decode::<Publish>(args)
                    .map_err(|e| Error::usage(format!("--publish: {e}")))?;
                return Publish::call(ctx, &request, request.clone(), p).await;
            }
            let answer = crate::verbs::run::<StatusVerb>(ctx, r.clone()).await?;
            let (offline, stalled) = (answer.offline, answer.stalled);
            Self::show(&r, answer, p);
            if flags.fail_on_stalled && offline {
                // The rows are this machine's pending records only: an agent stalled in the thread
                // is not among them, so "nothing stalled" cannot be vouched for. Alerting must not
                // read an outage as all clear.
                p.note(
                    "error: --fail-on-stalled: the forge could not be read, so stalled agents may be \
                     missing from the rows; exit 75 (try again when the forge answers)",
                );
                return Ok(75);
            }
            Ok(u8::from(flags.fail_on_stalled && stalled > 0))
        }

        /// The table or JSON.
        fn show(_: &StatusRequest, answer: StatusAnswer, p: &impl Printer) -> u8 {
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
                let text = table_text(&answer.rows, answer.now, p.layout(), p.color());
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
}
