//! `forgestate prune`: delete this identity's older records (a dry run without `--yes`).

use chrono::SecondsFormat;
use clap::Args;
use serde::Serialize;

use forgestate::client::prune::{PruneOptions, PrunePlan, PruneReport, apply, plan};
use forgestate::defaults::PRUNE_KEEP;

use super::args::{Cli, check_glob};
use super::{Failure, output};

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Records to keep per agent, session and kind (checkpoints and health signals apart)
    #[arg(long, value_name = "N", default_value_t = PRUNE_KEEP)]
    pub keep: usize,
    /// Only agents matching this glob
    #[arg(long, value_name = "GLOB")]
    pub agent: Option<String>,
    /// Only sessions matching this glob
    #[arg(long, value_name = "GLOB")]
    pub session: Option<String>,
    /// Delete them; without it, only print what would be deleted
    #[arg(long)]
    pub yes: bool,
}

/// The `--json` document: the plan, plus what was done when `--yes` was given.
#[derive(Serialize)]
struct Answer<'a> {
    dry_run: bool,
    #[serde(flatten)]
    plan: &'a PrunePlan,
    deleted: Vec<u64>,
    missing: Vec<u64>,
}

pub async fn prune(cli: &Cli, a: &PruneArgs) -> Result<u8, Failure> {
    check_glob("--agent", a.agent.as_deref())?;
    check_glob("--session", a.session.as_deref())?;
    let client = super::open(cli)?;
    let options = PruneOptions {
        keep: a.keep,
        agent: a.agent.clone(),
        session: a.session.clone(),
    };
    let plan = plan(&client, &options).await?;
    let report = if a.yes && !plan.delete.is_empty() {
        apply(&client, &plan, |_, _| {}).await?
    } else {
        PruneReport::default()
    };
    if cli.json {
        output::json(&Answer {
            dry_run: !a.yes,
            plan: &plan,
            deleted: report.deleted,
            missing: report.missing,
        });
        return Ok(0);
    }
    let verb = if a.yes { "deleted" } else { "would delete" };
    let mut text = format!(
        "{verb} {} record(s) by {} (keeping the newest {} per agent, session and kind)",
        plan.delete.len(),
        plan.author,
        plan.keep
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
    if !report.missing.is_empty() {
        text.push_str(&format!(
            "\n{} of them were already gone",
            report.missing.len()
        ));
    }
    if !a.yes && !plan.delete.is_empty() {
        text.push_str("\nrun again with --yes to delete them");
    }
    output::out(&text);
    Ok(0)
}
