//! The verb that follows the thread live (`watch`): its request, the shape of its events, and
//! [`Watch::stream`], which runs it until stopped (a stream of events, not one answer, so each
//! face drives it itself instead of [`super::call`]).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CLI, Context, Group, Spec, Verb, answer_schema, input, request_schema};
use crate::client::watch::{Event, WatchOptions, run};
use crate::defaults::{WATCH_INTERVAL_SECS, WATCH_MAX_INTERVAL_SECS};
use crate::error::{Error, Result};
use crate::format::{Kind, glob_matches};
use crate::scan::Filter;

/// `watch`: which records to follow.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct WatchRequest {
    /// Only records of this agent; a glob such as "implementation-*" matches several.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Only records of this session; a glob such as "sess-*" matches several.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub session: Option<String>,
    /// Only this kind of record. Default: either.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub kind: Option<Kind>,
    /// Only checkpoints whose phase matches this glob, e.g. "subtask_*_complete".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub phase: Option<String>,
    /// The pause between polls while records arrive, in milliseconds (on the command line a
    /// duration such as 5s or 500ms); it doubles while the thread is idle, up to 60s (or this, if
    /// longer). Default: 5s.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long = "interval", value_name = "DUR", value_parser = input::millis_flag)
    )]
    pub interval_ms: Option<u64>,
}

/// One line of `watch`: an event, named by its `event` key (`watching`, `record`, `outage`,
/// `recovered`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct WatchEvent {
    /// Which event.
    pub event: String,
}

/// Watch.
pub struct Watch;

impl Verb for Watch {
    type Request = WatchRequest;
    type Answer = WatchEvent;
    const SPEC: Spec = Spec {
        name: "watch",
        title: "Follow the thread live",
        description: "Follow the thread live: one answer per new record, outage or recovery, \
            until stopped.",
        faces: CLI,
        group: Group::Supervisors,
        flags: &[("interval_ms", "interval")],
        example: r#"{"session": "s1", "kind": "health"}"#,
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_READ
    };
}

impl Watch {
    /// Follows the thread as `r` asks until `stop` completes, calling `on_event` with each event
    /// (a record only when it passes the filters, `phase` included).
    pub async fn stream(
        ctx: &Context<'_>,
        r: WatchRequest,
        stop: impl Future<Output = ()>,
        mut on_event: impl FnMut(&Event),
    ) -> Result<()> {
        input::check_glob("agent", r.agent.as_deref())?;
        input::check_glob("session", r.session.as_deref())?;
        input::check_glob("phase", r.phase.as_deref())?;
        let interval = Duration::from_millis(r.interval_ms.unwrap_or(WATCH_INTERVAL_SECS * 1000));
        if interval.is_zero() {
            return Err(Error::usage(
                "interval_ms 0 would poll the store without pause; give at least 1 ms",
            ));
        }
        let options = WatchOptions {
            filter: Filter {
                agent: r.agent,
                session: r.session,
                kind: r.kind,
                since: None,
            },
            interval,
            max_interval: interval.max(Duration::from_secs(WATCH_MAX_INTERVAL_SECS)),
        };
        let phase = r.phase;
        let shown = |e: &Event| match (e, &phase) {
            (Event::Record(entry), Some(glob)) => {
                (entry.record.phase()).is_some_and(|p| glob_matches(glob, p))
            }
            _ => true,
        };
        run(ctx.client, &options, stop, |e| {
            if shown(e) {
                on_event(e)
            }
        })
        .await
    }
}
