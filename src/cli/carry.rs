//! `forgestate publish` (and `status --publish`), `export` and `import`: flags into the verb's
//! request, the library's answer out as a line or JSON.

use forgestate::report::Thresholds;
use forgestate::verbs::{self, Run};

use super::args::{Cli, ExportArgs, ImportArgs};
use super::input::duration_secs;
use super::{Failure, load, open, open_with, output};

/// `publish`, with `status`'s threshold flags.
pub async fn publish(
    cli: &Cli,
    warn_after: Option<&str>,
    stalled_after: Option<&str>,
) -> Result<u8, Failure> {
    let forced = Thresholds {
        warn_after_secs: warn_after
            .map(|t| duration_secs("--warn-after", t))
            .transpose()?,
        stalled_after_secs: stalled_after
            .map(|t| duration_secs("--stalled-after", t))
            .transpose()?,
    };
    let (config, over) = load(cli)?;
    let policy = config.status_policy()?;
    let client = open_with(cli, &config, &over)?;
    let ctx = verbs::Context {
        client: &client,
        policy: &policy,
    };
    let request = verbs::PublishRequest {
        warn_after_secs: forced.warn_after_secs,
        stalled_after_secs: forced.stalled_after_secs,
    };
    let answer = verbs::Publish::run(&ctx, request).await?;
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
pub async fn export(cli: &Cli, a: &ExportArgs) -> Result<u8, Failure> {
    let client = open(cli)?;
    let policy = forgestate::report::StatusPolicy::default();
    let ctx = verbs::Context {
        client: &client,
        policy: &policy,
    };
    let request = verbs::ExportRequest {
        to: a.to.display().to_string(),
    };
    let answer = verbs::Export::run(&ctx, request).await?;
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
pub async fn import(cli: &Cli, a: &ImportArgs) -> Result<u8, Failure> {
    let client = open(cli)?;
    let policy = forgestate::report::StatusPolicy::default();
    let ctx = verbs::Context {
        client: &client,
        policy: &policy,
    };
    let request = verbs::ImportRequest {
        from: a.from.display().to_string(),
    };
    let answer = verbs::Import::run(&ctx, request).await?;
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
