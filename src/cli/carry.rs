//! `forgestate publish` (and `status --publish`), `export` and `import`: flags into the verb's
//! request, the library's answer out as a line or JSON.

use forgestate::verbs::{self, ExportRequest, ImportRequest};

use super::args::Cli;
use super::failure::Failure;
use super::output;
use super::verb::run;

/// `publish` (and `status --publish`, with `status`'s threshold flags).
pub async fn publish(cli: &Cli, request: verbs::PublishRequest) -> Result<u8, Failure> {
    let answer = run::<verbs::Publish>(cli, request).await?;
    warn(cli, &answer.warnings);
    if cli.json {
        output::json(&answer);
    } else {
        let what = if answer.written {
            "published"
        } else {
            "unchanged, not written:"
        };
        output::out(&format!(
            "status table {what} {} row(s) in session issue #{} ({})",
            answer.rows, answer.issue, answer.url
        ));
    }
    Ok(0)
}

/// `export --to DIR`.
pub async fn export(cli: &Cli, a: &ExportRequest) -> Result<u8, Failure> {
    let answer = run::<verbs::Export>(cli, a.clone()).await?;
    warn(cli, &answer.warnings);
    if cli.json {
        output::json(&answer);
    } else {
        output::out(&format!(
            "exported {} record(s) to {}: {} written, {} already there",
            answer.records, answer.to, answer.written, answer.already
        ));
    }
    Ok(0)
}

/// `import --from DIR`; exit 75 when an outage stopped it (run it again).
pub async fn import(cli: &Cli, a: &ImportRequest) -> Result<u8, Failure> {
    let answer = run::<verbs::Import>(cli, a.clone()).await?;
    warn(cli, &answer.warnings);
    if !cli.quiet {
        for why in &answer.refused {
            output::note(&format!("warning: not imported: {why}"));
        }
    }
    if cli.json {
        output::json(&answer);
    } else {
        output::out(&format!(
            "imported {} of {} record(s) into {}: {} already there, {} spooled, {} refused, {} left",
            answer.posted,
            answer.records,
            answer.to,
            answer.already,
            answer.spooled,
            answer.refused.len(),
            answer.left
        ));
    }
    Ok(if answer.spooled > 0 { 75 } else { 0 })
}

fn warn(cli: &Cli, warnings: &[String]) {
    if !cli.quiet {
        for w in warnings {
            output::note(&format!("warning: {w}"));
        }
    }
}
