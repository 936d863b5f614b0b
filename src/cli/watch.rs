//! `forgestate watch`: follow the thread live until Ctrl-C or SIGTERM (exit 0).

use std::time::Duration;

use clap::Args;

use chrono::SecondsFormat;
use forgestate::client::watch::{Event, WatchOptions, run};
use forgestate::defaults::{WATCH_INTERVAL_SECS, WATCH_MAX_INTERVAL_SECS};
use forgestate::format::Payload;

use super::args::{Cli, FilterArgs};
use super::{EX_USAGE, Failure, output};

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Pause between polls while records arrive, e.g. 5s, 500ms; it doubles while the thread
    /// is idle, up to 60s (or DUR, if longer) [default: 5s]
    #[arg(long, value_name = "DUR", value_parser = humantime::parse_duration)]
    pub interval: Option<Duration>,
}

pub async fn watch(cli: &Cli, a: &WatchArgs) -> Result<u8, Failure> {
    let filter = super::filter(&a.filter, None)?;
    let phase = a.filter.phase.clone();
    let interval = a
        .interval
        .unwrap_or(Duration::from_secs(WATCH_INTERVAL_SECS));
    if interval.is_zero() {
        return Err(Failure {
            code: EX_USAGE,
            message: "--interval 0 would poll the forge without pause; give at least 1ms".into(),
        });
    }
    let options = WatchOptions {
        filter,
        interval,
        max_interval: interval.max(Duration::from_secs(WATCH_MAX_INTERVAL_SECS)),
    };
    // Listen before the first read, so a signal that comes right after "watching" is caught.
    let stop = stop_signal().map_err(|e| Failure {
        code: super::EX_IOERR,
        message: format!("cannot listen for Ctrl-C and SIGTERM: {e}"),
    })?;
    let client = super::open(cli)?;
    // `--phase`, as `list` and `latest` take it: only checkpoints whose phase matches.
    let shown = |e: &Event| match (e, &phase) {
        (Event::Record(entry), Some(glob)) => {
            (entry.record.phase()).is_some_and(|p| forgestate::resume::glob_matches(glob, p))
        }
        _ => true,
    };
    run(&client, &options, stop, |e| {
        if shown(e) {
            print(e, cli)
        }
    })
    .await?;
    Ok(0)
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed now, not on first poll.
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

fn print(e: &Event, cli: &Cli) {
    if cli.json {
        // NDJSON: one compact document per line, every event (its `event` key says which).
        match serde_json::to_string(e) {
            Ok(line) => output::out(&line),
            Err(err) => output::note(&format!("error: cannot encode an event: {err}")),
        }
        return;
    }
    match e {
        Event::Record(entry) => {
            let r = &entry.record;
            let what = match &r.payload {
                Payload::Checkpoint { phase, .. } => phase,
                Payload::Health { status, .. } => status,
                Payload::End { reason, .. } => reason,
            };
            output::out(&format!(
                "{}  {}  {}  {}  {}",
                entry
                    .comment
                    .created_at
                    .to_rfc3339_opts(SecondsFormat::Secs, true),
                r.agent,
                r.session,
                r.kind().name(),
                what
            ));
        }
        _ if cli.quiet => {}
        Event::Watching { thread, existing } => output::note(&format!(
            "watching {thread} ({existing} matching record(s) so far); new records follow, \
             Ctrl-C stops"
        )),
        Event::Outage { reason, .. } => output::note(&format!(
            "warning: {reason}; still watching (a line follows when it is back)"
        )),
        Event::Recovered { lasted_secs, .. } => output::note(&format!(
            "the store answers again (unreachable for {lasted_secs}s)"
        )),
    }
}
