//! `forgestate rotate`, and the automatic rotation a `checkpoint` or `health` may trigger. The
//! work is the library's ([`forgestate::Client::rotate`]); this only reports it.

use forgestate::backend::AnyThread;
use forgestate::{Client, Rotation};

use super::args::Cli;
use super::{Failure, open, output};

/// `forgestate rotate`.
pub async fn rotate(cli: &Cli) -> Result<u8, Failure> {
    let client = open(cli)?;
    let report = client.rotate().await?;
    if cli.json {
        output::json(&report);
    } else {
        output::out(&summary(&report));
        warn(cli, &report);
    }
    Ok(0)
}

/// After a record was saved: rotate when the session issue is over `rotate_after`. The record
/// is already safe, so a failed rotation is a warning (the next due write tries again).
pub async fn after_save(cli: &Cli, client: &Client<AnyThread>) {
    match client.rotate_if_due().await {
        Ok(Some(report)) if !cli.quiet => {
            output::note(&summary(&report));
            warn(cli, &report);
        }
        Ok(_) => {}
        Err(e) if !cli.quiet => output::note(&format!(
            "warning: the session issue is over its comment limit and rotating it failed: {e}; \
             a later record tries again, or run `forgestate rotate`"
        )),
        Err(_) => {}
    }
}

fn warn(cli: &Cli, report: &Rotation) {
    if cli.quiet {
        return;
    }
    for why in &report.skipped {
        output::note(&format!(
            "warning: not carried ({why}); it stays readable through the link to session issue #{}",
            report.from
        ));
    }
}

/// One line (two with a note) saying what the rotation did.
fn summary(r: &Rotation) -> String {
    let mut line = match (r.to, &r.to_url) {
        (Some(to), Some(url)) => {
            let made = if r.created { "created" } else { "found" };
            let mut s = format!(
                "session issue #{} rotated to #{to} ({made}): {} record(s) carried",
                r.from, r.carried
            );
            if r.already_carried > 0 {
                s.push_str(&format!(", {} carried before", r.already_carried));
            }
            if !r.skipped.is_empty() {
                s.push_str(&format!(", {} not carried", r.skipped.len()));
            }
            s.push_str(if r.closed {
                "; old issue closed"
            } else {
                "; old issue still open"
            });
            s.push_str(&format!("\n{url}"));
            s
        }
        _ => format!("session issue #{} not rotated", r.from),
    };
    if let Some(note) = &r.note {
        line.push_str(&format!("\n{note}"));
    }
    line
}
