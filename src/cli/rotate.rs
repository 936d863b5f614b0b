//! `forgestate rotate`, and the automatic rotation a `checkpoint` or `health` triggered. The
//! work is the library's ([`forgestate::Client::rotate`], and [`forgestate::Client::save`] for
//! the automatic one); this only reports it.

use forgestate::Rotation;
use forgestate::verbs::{self, SaveAnswer};

use super::args::Cli;
use super::failure::Failure;
use super::output;

/// `forgestate rotate`.
pub async fn rotate(cli: &Cli) -> Result<u8, Failure> {
    let report = super::verb::run::<verbs::Rotate>(cli, verbs::RotateRequest {}).await?;
    if cli.json {
        output::json(&report);
    } else {
        output::out(&summary(&report));
        warn(cli, &report);
    }
    Ok(0)
}

/// After a record was saved: what the library's automatic rotation did, when the save made one
/// due (its warnings are the answer's, printed with the others).
pub fn after_save(cli: &Cli, saved: &SaveAnswer) {
    if let Some(report) = saved.rotation.as_ref().filter(|_| !cli.quiet) {
        output::note(&summary(report));
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
