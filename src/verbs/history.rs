//! `history`: one session step by step; on the command line a table with each record's
//! details under it.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Group, Run, Spec, Verb, input};
use crate::HistoryQuery;
use crate::error::Result;

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
    const DECLARED: Spec = Spec {
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
        about: "Every record of one session in order, with the time between them and the resume point of each checkpoint; --diff adds the JSON changes between checkpoints",
        examples: "  forgestate history --session s1
  forgestate history --session s1 --agent implementation-worker --diff
  forgestate history --session s2 --json",
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

#[cfg(feature = "cli")]
mod cli {
    use super::{History, HistoryAnswer, HistoryRequest};

    use crate::format::format_time;
    use crate::report::diff::{Change, Op};
    use crate::report::{Origin, Step};
    use crate::verbs::cli::{Command, Printer, table};

    impl Command for History {
        type Flags = HistoryRequest;

        fn show(_: &HistoryRequest, h: HistoryAnswer, p: &impl Printer) -> u8 {
            p.warn(&h.warnings);
            if p.json_mode() {
                p.json(&h);
            } else if h.records.is_empty() {
                p.note(&format!("no records in session {}", h.session));
            } else {
                p.out(history_text(&h, p).trim_end());
            }
            0
        }
    }

    /// The session line, then one row per record (the store's time of its comment) with its detail
    /// lines indented under it; the header only at a terminal.
    fn history_text(h: &HistoryAnswer, p: &impl Printer) -> String {
        let layout = p.layout();
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
        let body = table::lay_out(&header, &rows, layout, p.color());
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
                .unwrap_or_default()
                + if s.fenced { " (fenced)" } else { "" },
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
}
