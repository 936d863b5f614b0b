//! The verb that follows the thread live (`watch`): its request, the shape of its events, and
//! [`Watch::stream`], which runs it until stopped (a stream of events, not one answer, so each
//! face drives it itself instead of [`super::call`]).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::filter::FilterRequest;
use super::{CLI, Context, Group, Spec, Verb};
use crate::client::watch::{Event, WatchOptions, run};
use crate::defaults::{WATCH_INTERVAL_SECS, WATCH_MAX_INTERVAL_SECS};
use crate::error::{Error, Result};
use crate::format::glob_matches;

/// `watch`: which records to follow.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
// Closed, though serde cannot refuse an unknown key beside a flattened part (see `latest`).
#[schemars(deny_unknown_fields)]
pub struct WatchRequest {
    /// Which records count.
    #[serde(flatten)]
    #[cfg_attr(feature = "cli", command(flatten))]
    pub filter: FilterRequest,
    /// The pause between polls while records arrive, in milliseconds (on the command line a
    /// duration such as 5s or 500ms); it doubles while the thread is idle, up to 60s (or this, if
    /// longer). Default: 5s.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long = "interval", value_name = "DUR", value_parser = super::input::millis_flag)
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
    const DECLARED: Spec = Spec {
        name: "watch",
        title: "Follow the thread live",
        description: "Follow the thread live: one answer per new record, outage or recovery, \
            until stopped.",
        faces: CLI,
        group: Group::Supervisors,
        flags: &[("interval_ms", "interval")],
        example: r#"{"session": "s1", "kind": "health"}"#,
        about: "Follow the thread live: one line per new record (NDJSON with --json), until Ctrl-C",
        examples: "  forgestate watch
  forgestate watch --agent 'implementation-*' --kind health
  forgestate watch --session s1 --interval 2s --json",
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
        let filter = r.filter.filter(None)?;
        let interval = Duration::from_millis(r.interval_ms.unwrap_or(WATCH_INTERVAL_SECS * 1000));
        if interval.is_zero() {
            return Err(Error::usage(
                "interval_ms 0 would poll the store without pause; give at least 1 ms",
            ));
        }
        let options = WatchOptions {
            filter,
            interval,
            max_interval: interval.max(Duration::from_secs(WATCH_MAX_INTERVAL_SECS)),
        };
        let phase = r.filter.phase;
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

#[cfg(feature = "cli")]
mod cli {
    use chrono::SecondsFormat;

    use super::{Watch, WatchRequest};
    use crate::client::watch::Event;
    use crate::error::{Error, Result};
    use crate::format::Payload;
    use crate::verbs::Context;
    use crate::verbs::cli::{CliVerb, Host, Printer, refused};

    impl CliVerb for Watch {
        type Flags = WatchRequest;

        /// Follows the thread until Ctrl-C or SIGTERM (exit 0), a line per event; the line
        /// naming a default store comes last, as the stream has no end to show it before.
        async fn run_cli(flags: &WatchRequest, host: &impl Host, p: &impl Printer) -> Result<u8> {
            let (client, policy) = host.store()?;
            let note = host.take_note();
            let ctx = Context {
                client: &client,
                policy: &policy,
            };
            let ran = watch(&ctx, flags, p).await;
            if let Some(note) = note.filter(|_| !refused(&ran)) {
                p.note(&note);
            }
            ran
        }
    }

    async fn watch(ctx: &Context<'_>, flags: &WatchRequest, p: &impl Printer) -> Result<u8> {
        // Listen before the first read, so a signal that comes right after "watching" is caught.
        let stop = stop_signal()
            .map_err(|e| Error::io("cannot listen for Ctrl-C and SIGTERM in", "this process", e))?;
        Watch::stream(ctx, flags.clone(), stop, |e| print(e, p)).await?;
        Ok(0)
    }

    /// Completes on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed now, not on first
    /// poll.
    fn stop_signal() -> std::io::Result<impl Future<Output = ()>> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate())?;
            let mut int = signal(SignalKind::interrupt())?;
            Ok(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            })
        }
        #[cfg(not(unix))]
        {
            Ok(async {
                let _ = tokio::signal::ctrl_c().await;
            })
        }
    }

    fn print(e: &Event, p: &impl Printer) {
        if p.json_mode() {
            // NDJSON: one compact document per line, every event (its `event` key says which).
            return p.json_line(e);
        }
        match e {
            Event::Record(entry) => {
                let r = &entry.record;
                let what = match &r.payload {
                    Payload::Checkpoint { phase, .. } => phase,
                    Payload::Health { status, .. } => status,
                    Payload::End { reason, .. } => reason,
                    Payload::Takeover { .. } => r.writer.as_deref().unwrap_or("takeover"),
                };
                p.out(&format!(
                    "{}  {}  {}  {}  {}",
                    entry
                        .comment
                        .created_at
                        .to_rfc3339_opts(SecondsFormat::Secs, true),
                    p.printable(&r.agent),
                    p.printable(&r.session),
                    r.kind().name(),
                    p.printable(what)
                ));
            }
            _ if p.quiet() => {}
            Event::Watching { thread, existing } => p.note(&format!(
                "watching {thread} ({existing} matching record(s) so far); new records follow, \
                 Ctrl-C stops"
            )),
            Event::Outage { reason, .. } => p.note(&format!(
                "warning: {reason}; still watching (a line follows when it is back)"
            )),
            Event::Recovered { lasted_secs, .. } => p.note(&format!(
                "the store answers again (unreachable for {lasted_secs}s)"
            )),
        }
    }
}
