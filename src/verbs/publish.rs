//! `publish`: the status table written into the session issue's body (`status --publish`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Group, Run, Spec, Verb};
use crate::Published;
use crate::error::Result;
use crate::report::Thresholds;

/// `publish`: the status table into the session issue's body.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct PublishRequest {
    /// How long without any record before an agent is "warning": seconds, or a duration such as
    /// "90s", "10m", "2h" (overrides the configured thresholds).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "warn-after", value_name = "DUR", value_parser = super::input::duration_flag))]
    pub warn_after_secs: Option<u64>,
    /// How long without any record before an agent is "stalled": seconds, or a duration such as
    /// "30m" (overrides the configured thresholds).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "stalled-after", value_name = "DUR", value_parser = super::input::duration_flag))]
    pub stalled_after_secs: Option<u64>,
}

/// Publish.
pub struct Publish;

impl Verb for Publish {
    type Request = PublishRequest;
    type Answer = Published;
    const DECLARED: Spec = Spec {
        name: "publish",
        title: "Publish the status table",
        description: "Write the status table (agent, session, verdict, phase, resume point, last \
            seen, next, blockers) into the session issue's body between two markers, for people \
            reading the forge's web UI (`status --publish`). Text outside the markers is kept \
            byte for byte; an unchanged table is not written. Returns the issue, whether the \
            body was written, and the table.",
        faces: super::ALL,
        group: Group::Supervisors,
        flags: &[
            ("warn_after_secs", "warn-after"),
            ("stalled_after_secs", "stalled-after"),
        ],
        example: r#"{"stalled_after_secs": 3600}"#,
        about: "Write the status table into the session issue's body between two markers (text outside them is kept; an unchanged table is not written); the same as `status --publish`",
        after: "Set [dashboard] auto = true to refresh it after records, at most once every [dashboard] every_minutes (default 5) per machine. `forgestate status --publish` does the same.",
        examples: "  forgestate publish
  forgestate publish --stalled-after 1h --json",
        ..Spec::OPERATOR
    };
}

impl Run for Publish {
    async fn run(ctx: &Context<'_>, r: PublishRequest) -> Result<Published> {
        let policy = ctx.policy.clone().force(Thresholds {
            warn_after_secs: r.warn_after_secs,
            stalled_after_secs: r.stalled_after_secs,
        });
        ctx.client.publish_status(&policy).await
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Publish {
    type Flags = PublishRequest;

    fn show(_: &PublishRequest, answer: Published, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        p.answer(&answer, |a| {
            let what = match a.written {
                true => "published",
                false => "unchanged, not written:",
            };
            format!(
                "status table {what} {} row(s) in session issue #{} ({})",
                a.rows, a.issue, a.url
            )
        })
    }
}
