//! `latest`: the newest matching record.

use schemars::JsonSchema;
use serde::Deserialize;

use super::filter::{FilterRequest, by_phase};
use super::{Context, Run, Spec, Verb};
use crate::error::Result;

/// `latest`: the newest matching record.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
// Closed, though serde cannot refuse an unknown key beside a flattened part: `request_of`
// refuses what the schema has no property for.
#[schemars(deny_unknown_fields)]
pub struct LatestRequest {
    /// Which records count.
    #[serde(flatten)]
    #[cfg_attr(feature = "cli", command(flatten))]
    pub filter: FilterRequest,
}

/// What `latest` answers: the library's answer as it is.
pub use crate::client::Latest as LatestAnswer;

/// Latest.
pub struct LatestVerb;

impl Verb for LatestVerb {
    type Request = LatestRequest;
    type Answer = LatestAnswer;
    const DECLARED: Spec = Spec {
        name: "latest",
        title: "Newest matching record",
        description: "Return the newest record matching the filters (agent and session globs \
            such as \"implementation-*\", kind checkpoint or health, phase glob), in thread \
            order. Use it to see what another agent did last. Returns `record` (null when none \
            matches).",
        example: r#"{"session": "s1", "kind": "checkpoint"}"#,
        about: "Print the newest matching record (JSON null when there is none)",
        examples: "  forgestate latest --agent implementation-worker --session s1
  forgestate latest --agent 'implementation-*' --kind health
  forgestate latest --session s1 --json",
        ..Spec::AGENT_READ
    };
}

impl Run for LatestVerb {
    async fn run(ctx: &Context<'_>, r: LatestRequest) -> Result<LatestAnswer> {
        let filter = r.filter.filter(None)?;
        Ok(match &r.filter.phase {
            // A phase filter reads the list and takes its newest entry.
            Some(phase) => {
                let scan = by_phase(ctx.client.list(&filter, None).await?, phase);
                LatestAnswer {
                    record: scan.entries.last().cloned(),
                    offline: scan.offline,
                    complete: scan.complete(),
                    warnings: scan.warnings,
                }
            }
            None => ctx.client.latest(&filter).await?,
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for LatestVerb {
    type Flags = LatestRequest;

    fn show(_: &LatestRequest, answer: LatestAnswer, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        match (&answer.record, p.json_mode()) {
            (_, true) => p.json(&answer),
            (Some(e), false) => p.out(&super::cli::record::entry_text(e, p)),
            // On stderr, so `forgestate latest | wc -l` counts records.
            (None, false) => p.note("no matching record found"),
        }
        0
    }
}
