//! `prune`: old records deleted, keeping each agent and session's newest.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, Run, Spec, Verb};
use crate::error::Result;

/// `prune`: which records go.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct PruneRequest {
    /// Keep the newest N records per agent, session and kind.
    #[serde(default = "keep_default")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = crate::defaults::PRUNE_KEEP))]
    pub keep: usize,
    /// Only agents matching this glob.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Only sessions matching this glob.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub session: Option<String>,
    /// Delete exactly these records (record ids; yours only) instead of all but the newest
    /// `keep`, which is then not used. Ids the thread does not hold are skipped.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "id", value_name = "UUID"))]
    pub ids: Vec<String>,
    /// Delete (without it, a dry run).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub yes: bool,
}

/// `keep` when the request leaves it out: what the CLI's `--keep` defaults to.
fn keep_default() -> usize {
    crate::defaults::PRUNE_KEEP
}

/// What `prune` answers: the plan, and what was deleted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PruneAnswer {
    /// Nothing was deleted (no `yes`).
    pub dry_run: bool,
    /// Whose records the plan deletes (only the store identity's own).
    pub author: String,
    /// How many per agent, session and kind stay.
    pub keep: usize,
    /// The records the plan deletes, oldest first.
    pub delete: Vec<crate::client::prune::Doomed>,
    /// Matching records that stay: the newest of each group.
    pub kept: usize,
    /// Older matching records that stay because another author posted them.
    pub kept_other_authors: usize,
    /// Comment ids deleted.
    pub deleted: Vec<u64>,
    /// Comment ids already gone.
    pub missing: Vec<u64>,
}

/// Prune.
pub struct Prune;

impl Verb for Prune {
    type Request = PruneRequest;
    type Answer = PruneAnswer;
    const DECLARED: Spec = Spec {
        name: "prune",
        title: "Delete older records",
        description: "Delete your older records beyond the newest N per agent, session and kind \
            (a dry run without `yes`); other authors' comments are never touched.",
        destructive: true,
        reads_thread: true,
        flags: &[("ids", "id")],
        example: r#"{"keep": 1, "session": "s1"}"#,
        about: "Delete your older records beyond the newest N per agent, session and kind (a dry run without --yes); other authors' comments are never touched",
        examples: "  forgestate prune
  forgestate prune --keep 3 --session s1
  forgestate prune --keep 3 --agent 'implementation-*' --yes",
        ..Spec::OPERATOR
    };
}

impl Run for Prune {
    async fn run(ctx: &Context<'_>, r: PruneRequest) -> Result<PruneAnswer> {
        use crate::client::prune::{PruneOptions, PruneReport, apply, plan};
        super::input::check_glob("agent", r.agent.as_deref())?;
        super::input::check_glob("session", r.session.as_deref())?;
        let ids = r
            .ids
            .into_iter()
            .map(|id| super::input::record_id("ids", id))
            .collect::<Result<Vec<_>>>()?;
        let options = PruneOptions {
            keep: r.keep,
            agent: r.agent,
            session: r.session,
            ids,
        };
        let plan = plan(ctx.client, &options).await?;
        let report = match r.yes && !plan.delete.is_empty() {
            true => apply(ctx.client, &plan, |_, _| {}).await?,
            false => PruneReport::default(),
        };
        Ok(PruneAnswer {
            dry_run: !r.yes,
            author: plan.author,
            keep: plan.keep,
            delete: plan.delete,
            kept: plan.kept,
            kept_other_authors: plan.kept_other_authors,
            deleted: report.deleted,
            missing: report.missing,
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Prune {
    type Flags = PruneRequest;

    /// The plan: what was (or would be) deleted, and what stays.
    fn show(a: &PruneRequest, plan: PruneAnswer, p: &impl super::cli::Printer) -> u8 {
        p.answer(&plan, |plan| plan_text(a, plan))
    }
}

/// What was (or would be) deleted, a line each, and what stays.
#[cfg(feature = "cli")]
fn plan_text(a: &PruneRequest, plan: &PruneAnswer) -> String {
    use chrono::SecondsFormat;
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
    text
}
