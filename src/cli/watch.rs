//! `forgestate watch`: follow the thread live until Ctrl-C or SIGTERM (exit 0).

use chrono::SecondsFormat;
use forgestate::format::Payload;
use forgestate::verbs::{Event, Watch, WatchRequest};

use super::args::Cli;
use super::failure::Failure;
use super::output;
use super::verb::Opened;

/// Runs `watch` until Ctrl-C or SIGTERM.
pub async fn watch(cli: &Cli, a: &WatchRequest) -> Result<u8, Failure> {
    let request = a.clone();
    // Listen before the first read, so a signal that comes right after "watching" is caught.
    let stop = stop_signal().map_err(|e| Failure {
        code: crate::face::EX_IOERR,
        reason: None,
        message: format!("cannot listen for Ctrl-C and SIGTERM: {e}"),
    })?;
    let opened = Opened::new(cli)?;
    let watched = Watch::stream(&opened.context(), request, stop, |e| print(e, cli)).await;
    opened.finish(&<Watch as forgestate::verbs::Verb>::SPEC, watched)?;
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
        return output::json_line(e);
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
