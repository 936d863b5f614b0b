//! `fork`: a new session started from a checkpoint of another one.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Run, SaveAnswer, Spec, Verb};
use crate::ForkQuery;
use crate::error::Result;

/// `fork`: a new session started from a checkpoint of another one.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    /// The session to fork, exactly.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// The record id of the checkpoint whose state to fork (not a fenced one). Default: the
    /// session's newest checkpoint that is not fenced, the one `resume` answers from.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "RECORD_ID"))]
    pub at: Option<String>,
    /// The new session's name.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SESSION"))]
    pub new_session: String,
    /// Fork this agent's checkpoint (needed when several agents checkpoint the session).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: Option<String>,
    /// Fork into `new_session` even though it already has records (refused otherwise): its agent
    /// then resumes from the forked state, and the new record's `next` names the record it
    /// replaced.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub force: bool,
}

/// Fork.
pub struct Fork;

impl Verb for Fork {
    type Request = ForkRequest;
    type Answer = SaveAnswer;
    const DECLARED: Spec = Spec {
        name: "fork",
        title: "Fork a session",
        description: "Start a new session from the state of a checkpoint of another one: the new \
            session's first checkpoint copies that checkpoint's phase and data, and its `Parent:` \
            names the record it came from. Use it to retry a session from a known-good point, or \
            to branch off an alternative approach without disturbing the original. `at` picks \
            the record (default: the session's newest checkpoint not fenced, the one `resume` \
            answers from); `agent` picks whose checkpoint when several agents work in the \
            session. Returns the new checkpoint as `checkpoint` does.",
        reads_thread: true,
        example: r#"{"session": "s1", "new_session": "s2", "force": true}"#,
        about: "Start a new session from the state of a checkpoint of another one (Parent: names it)",
        examples: "  forgestate fork --session s1 --new-session s1-retry
  forgestate fork --session s1 --at 0192f000-0000-7000-8000-000000000002 --new-session s1-b
  forgestate fork --session s1 --agent implementation-worker --new-session s2 --json",
        ..Spec::AGENT_WRITE
    };
}

impl Run for Fork {
    async fn run(ctx: &Context<'_>, r: ForkRequest) -> Result<SaveAnswer> {
        let record = ctx
            .client
            .fork_record(&ForkQuery {
                session: r.session,
                at: r.at,
                new_session: r.new_session,
                agent: r.agent,
                force: r.force,
            })
            .await?;
        SaveAnswer::saved(ctx.client, ctx.client.save(record).await)
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Fork {
    type Flags = ForkRequest;

    /// The line naming what was forked into what (not with `--json` or `--quiet`), then the save.
    fn show(a: &ForkRequest, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        if !p.quiet() && !p.json_mode() {
            let record = &answer.record;
            p.note(&format!(
                "forked session {} at record {} ({}, phase {}) into session {}",
                a.session,
                record.parent.as_deref().unwrap_or("?"),
                record.agent,
                record.phase().unwrap_or("-"),
                a.new_session
            ));
        }
        answer.show(p)
    }
}
