//! `forgestate prune`: delete this identity's older records (a dry run without `--yes`).

use chrono::SecondsFormat;

use forgestate::verbs::{Prune, PruneRequest};

use super::args::Cli;
use super::failure::Failure;
use super::output;

/// Runs `prune` and prints its answer.
pub async fn prune(cli: &Cli, a: &PruneRequest) -> Result<u8, Failure> {
    let plan = super::verb::run::<Prune>(cli, a.clone()).await?;
    if cli.json {
        output::json(&plan);
        return Ok(0);
    }
    let verb = if a.yes { "deleted" } else { "would delete" };
    let why = match a.ids.is_empty() {
        true => format!(
            "keeping the newest {} per agent, session and kind",
            plan.keep
        ),
        false => format!("of the {} record id(s) given", a.ids.len()),
    };
    let mut text = format!(
        "{verb} {} record(s) by {} ({why})",
        plan.delete.len(),
        plan.author,
    );
    for d in &plan.delete {
        text.push_str(&format!(
            "\n  comment {}  {}  {}  {}  {}  {}",
            d.comment_id,
            d.created_at.to_rfc3339_opts(SecondsFormat::Secs, true),
            d.agent,
            d.session,
            d.kind,
            d.what
        ));
    }
    text.push_str(&format!("\nkept: {} record(s)", plan.kept));
    if plan.kept_other_authors > 0 {
        text.push_str(&format!(
            "; {} older record(s) by other authors left alone",
            plan.kept_other_authors
        ));
    }
    if !plan.missing.is_empty() {
        text.push_str(&format!(
            "\n{} of them were already gone",
            plan.missing.len()
        ));
    }
    if !a.yes && !plan.delete.is_empty() {
        text.push_str("\nrun again with --yes to delete them");
    }
    output::out(&text);
    Ok(0)
}
