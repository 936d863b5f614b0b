//! The supervisor's verbs: `status` (who is alive, who has stalled) and `history` (a session
//! step by step).

#[cfg(feature = "cli")]
mod cli;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Context, Group, Run, Spec, Verb, answer_schema, input, request_schema};
use crate::error::Result;
use crate::report::{StatusRow, Thresholds, Verdict};
use crate::scan::Filter;
use crate::{HistoryQuery, Status};

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

/// What `status` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusAnswer {
    /// One row per (agent, session), stalled first: its verdict (alive, warning, stalled,
    /// paused, completed), the age of its newest record, last phase and resume point, last
    /// health status and metrics, next step and blockers.
    pub rows: Vec<StatusRow>,
    /// How many rows are stalled.
    pub stalled: usize,
    /// The store's clock when the thread was read (RFC 3339): ages are measured on it.
    pub now: String,
    /// The store could not be read: the rows are judged from this machine's read cache and outbox.
    pub offline: bool,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    pub complete: bool,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// Status.
pub struct StatusVerb;

impl Verb for StatusVerb {
    type Request = StatusRequest;
    type Answer = StatusAnswer;
    const SPEC: Spec = Spec {
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
        summary: status_summary,
        about: "Who is alive: one row per agent and session with a verdict (alive, warning, stalled, paused, completed), stalled first",
        after: "Ages are measured on the store's clock (a forge's, from its Date header). Thresholds come from --warn-after/--stalled-after, else [status] in the configuration (per agent glob), else 10m and 30m.",
        examples: "  forgestate status
  forgestate status --agent 'implementation-*' --stalled-after 15m
  forgestate status --fail-on-stalled --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
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
        Ok(StatusAnswer::new(
            ctx.client.status(&filter, &policy).await?,
        ))
    }
}

impl StatusAnswer {
    /// The answer for what [`crate::Client::status`] found.
    pub fn new(status: Status) -> StatusAnswer {
        StatusAnswer {
            stalled: status
                .rows
                .iter()
                .filter(|r| r.verdict == Verdict::Stalled)
                .count(),
            now: crate::format::format_time(&status.now),
            rows: status.rows,
            offline: status.offline,
            complete: status.complete,
            warnings: status.warnings,
        }
    }
}

/// `history`: one session step by step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct HistoryRequest {
    /// The session to show, exactly.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// Only records of agents matching this glob.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Also the JSON changes (added, removed, changed keys, with JSON Pointer paths) between
    /// consecutive checkpoints of each agent.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub diff: bool,
}

/// What `history` answers: the library's answer as it is.
pub use crate::report::History as HistoryAnswer;

/// History.
pub struct History;

impl Verb for History {
    type Request = HistoryRequest;
    type Answer = HistoryAnswer;
    const SPEC: Spec = Spec {
        name: "history",
        title: "A session step by step",
        description: "Every record of one session in thread order, with the time between them, \
            the resume point of each checkpoint and, with `diff: true`, the JSON changes between \
            consecutive checkpoints of each agent. Use it to understand how a session got where \
            it is before resuming, forking or unblocking it. `forked_from` names the record the \
            session was forked from, when it was; `conflicts` (and a warning) name records that \
            continue from the same parent, i.e. two writers worked on the session from one \
            state.",
        group: Group::Supervisors,
        example: r#"{"session": "s2", "diff": true}"#,
        summary: history_summary,
        about: "Every record of one session in order, with the time between them and the resume point of each checkpoint; --diff adds the JSON changes between checkpoints",
        examples: "  forgestate history --session s1
  forgestate history --session s1 --agent implementation-worker --diff
  forgestate history --session s2 --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_READ
    };
}

impl Run for History {
    async fn run(ctx: &Context<'_>, r: HistoryRequest) -> Result<HistoryAnswer> {
        input::check_glob("agent", r.agent.as_deref())?;
        ctx.client
            .history(&HistoryQuery {
                session: r.session,
                agent: r.agent,
                diff: r.diff,
            })
            .await
    }
}

/// `status`'s summary: how many agent sessions, how many stalled.
fn status_summary(v: &Value) -> Option<String> {
    Some(match v["rows"].as_array().map_or(0, Vec::len) {
        0 => "no matching records".to_string(),
        n => format!("{n} agent session(s), {} stalled", v["stalled"]),
    })
}

/// `history`'s summary: the session, its records, and where it was forked from.
fn history_summary(v: &Value) -> Option<String> {
    use super::summary::str_of;
    let records = v["records"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut s = format!(
        "session {}: {} record(s) in thread order",
        str_of(v, "session"),
        records.len()
    );
    let origin = &v["forked_from"];
    if origin.is_object() {
        let field = |key: &str| origin[key].as_str().unwrap_or("?").to_string();
        s.push_str(&format!(
            "; forked from session {} at record {}",
            field("session"),
            field("record_id")
        ));
    }
    Some(s)
}
