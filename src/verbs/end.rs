//! The verb that ends a session (`end`, answered by [`SaveAnswer`]), and the request checks the
//! session features share across faces: an end reason, an intent with its data.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Run, SaveAnswer, Spec, Verb};
use crate::error::{Error, Result};
use crate::format::END_REASONS;

/// `end`: the session stopped, and why.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct EndRequest {
    /// The agent whose session ends, as it posts checkpoints.
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// The session that ends.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// Why: "completed", "interrupted", "error" or "user_stop".
    #[cfg_attr(feature = "cli", arg(long))]
    pub reason: String,
    /// A note in words (what was finished, what went wrong).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub note: Option<String>,
}

/// End.
pub struct End;

impl Verb for End {
    type Request = EndRequest;
    type Answer = SaveAnswer;
    const DECLARED: Spec = Spec {
        name: "end",
        title: "End a session",
        description: "Record that a session stopped, and why: `reason` is \"completed\", \
            \"interrupted\", \"error\" or \"user_stop\", with an optional `note`. Call it when the \
            work is done or abandoned, so supervisors see the session as completed or ended \
            instead of stalled. `resume` of an ended session still returns the last checkpoint's \
            data, with `ended: {reason, at, note}` beside it; a later checkpoint reopens the \
            session. Returns the record id and where it was stored, as `checkpoint` does.",
        example: r#"{"agent": "w", "session": "s0", "reason": "completed", "note": "merged"}"#,
        about: "Post an [END] record: the session stopped, and why (never \"stalled\" in status)",
        examples: "  forgestate end --agent implementation-worker --session s1 --reason completed
  forgestate end --agent implementation-worker --session s1 --reason error --note 'tests fail'
  forgestate end --agent implementation-worker --session s1 --reason user_stop --json",
        ..Spec::AGENT_WRITE
    };
}

impl Run for End {
    async fn run(ctx: &Context<'_>, r: EndRequest) -> Result<SaveAnswer> {
        check_reason("reason", &r.reason)?;
        let outcome = ctx
            .client
            .end(&r.agent, &r.session, &r.reason, r.note.as_deref())
            .await;
        SaveAnswer::saved(ctx.client, outcome)
    }
}

/// Refuses an end reason outside [`END_REASONS`] as a usage error naming them; `arg` is the
/// argument as the caller passed it (`reason`, `--reason`).
pub fn check_reason(arg: &str, reason: &str) -> Result<()> {
    match END_REASONS.contains(&reason) {
        true => Ok(()),
        false => Err(Error::usage(format!(
            "{arg} {:?} is not a reason a session ends for; use one of {}",
            reason.chars().take(40).collect::<String>(),
            END_REASONS.join(", ")
        ))),
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for End {
    type Flags = EndRequest;

    fn show(_: &EndRequest, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        answer.show(p)
    }
}
