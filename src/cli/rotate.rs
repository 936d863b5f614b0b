//! `forgestate rotate`, and the automatic rotation a `checkpoint` or `health` triggered. The
//! work is the library's ([`forgestate::Client::rotate`], and [`forgestate::Client::save`] for
//! the automatic one); this only reports it.

use forgestate::{Posted, Rotation};

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

/// After a record was saved: what the library's automatic rotation did, when the save made one
/// due. The record is already safe, so a failed rotation is a warning (the next due write tries
/// again).
pub fn after_save(cli: &Cli, posted: &Posted) {
    if cli.quiet {
        return;
    }
    if let Some(report) = &posted.rotation {
        output::note(&summary(report));
        warn(cli, report);
    }
    if let Some(e) = &posted.dashboard_failed {
        output::note(&format!(
            "warning: refreshing the status table in the session issue's body failed: {e}; the \
             record is posted (run `forgestate status --publish`)"
        ));
    }
    if let Some(e) = &posted.rotation_failed {
        output::note(&format!(
            "warning: the session issue is over its comment limit and rotating it failed: {e}; \
             a later record tries again, or run `forgestate rotate`"
        ));
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
