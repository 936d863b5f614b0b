//! `outbox`: what waits in this machine's outboxes; the CLI runs it over the configuration
//! ([`CliVerb`](super::cli::CliVerb)).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CLI, Group, Spec, Verb};

/// `outbox` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutboxRequest {}

/// What `outbox` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutboxAnswer {
    /// Every outbox on this machine: its directory, forge, waiting records, oldest, last drains
    /// and dead letters.
    pub outboxes: Vec<crate::durable::OutboxSummary>,
}

/// Outbox.
pub struct Outboxes;

impl Verb for Outboxes {
    type Request = OutboxRequest;
    type Answer = OutboxAnswer;
    const DECLARED: Spec = Spec {
        name: "outbox",
        title: "This machine's outboxes",
        description: "Every outbox on this machine: its forge, waiting records, oldest age, last \
            failure and dead letters.",
        faces: CLI,
        group: Group::Operators,
        example: "{}",
        about: "List every outbox on this machine: its forge, waiting records, oldest age, last \
            failure and dead letters",
        examples: "  forgestate outbox
  forgestate outbox --json",
        ..Spec::PURE
    };
}

#[cfg(feature = "cli")]
mod cli {
    use super::{OutboxAnswer, OutboxRequest, Outboxes};
    use crate::durable::{OutboxSummary, survey};
    use crate::error::Result;
    use crate::verbs::cli::{CliVerb, Host, Printer};

    impl CliVerb for Outboxes {
        type Flags = OutboxRequest;

        /// Every outbox on this machine, one block each.
        async fn run_cli(_: &OutboxRequest, host: &impl Host, p: &impl Printer) -> Result<u8> {
            let outboxes = survey(&host.config()?.outbox_roots());
            Ok(p.answer(&OutboxAnswer { outboxes }, |a| {
                match a.outboxes.is_empty() {
                    true => "no outbox on this machine holds anything".to_string(),
                    false => a
                        .outboxes
                        .iter()
                        .map(summary_text)
                        .collect::<Vec<_>>()
                        .join("\n"),
                }
            }))
        }
    }

    fn summary_text(s: &OutboxSummary) -> String {
        let forge = s.origin.as_ref().map_or_else(
            || "(unknown forge)".to_string(),
            |o| format!("{}/{} on {}", o.owner, o.repo, o.url),
        );
        let age = s.oldest.map_or_else(
            || "-".to_string(),
            |t| {
                let secs = (chrono::Utc::now() - t).num_seconds().max(0);
                format!("oldest {}", humanize(secs))
            },
        );
        let failure = match (&s.state.last_error, s.state.last_failure_at) {
            (Some(e), Some(at)) if s.state.failures > 0 => {
                format!(
                    "last failure {} ago: {e}",
                    humanize((chrono::Utc::now() - at).num_seconds().max(0))
                )
            }
            _ => "no recent failure".to_string(),
        };
        format!(
            "{}\n  forge: {forge}\n  waiting: {} ({age}); dead letters: {}\n  {failure}",
            s.dir.display(),
            s.waiting,
            s.dead_letters
        )
    }

    fn humanize(secs: i64) -> String {
        match secs {
            s if s < 60 => format!("{s}s"),
            s if s < 3600 => format!("{}m", s / 60),
            s if s < 86400 => format!("{}h", s / 3600),
            s => format!("{}d", s / 86400),
        }
    }
}
