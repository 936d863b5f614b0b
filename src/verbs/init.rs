//! `init`: the store made ready (the session issue found or created, or the local file).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, Run, Spec, Verb};
use crate::error::Result;

/// `init` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitRequest {}

/// What `init` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InitAnswer {
    /// Where the session thread is (the web page, or the local store's file).
    pub thread: String,
    /// Whom records are posted as.
    pub author: String,
    /// This call created the thread (false: it was there).
    pub created: bool,
    /// Records still waiting in this machine's outbox after the drain.
    pub left: usize,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// Init.
pub struct Init;

impl Verb for Init {
    type Request = InitRequest;
    type Answer = InitAnswer;
    const DECLARED: Spec = Spec {
        name: "init",
        title: "Find or create the session thread",
        description: "Find or create the session thread (on a forge: the labelled session \
            issue), say whom records are posted as, and post what waits in the outbox.",
        example: "{}",
        about: "Find or create the session thread (on a forge: the labelled session issue)",
        examples: "  forgestate init
  forgestate init --url https://forge.example.com --repo acme/app --token-file ~/.forgestate-token
  forgestate init --json",
        ..Spec::OPERATOR
    };
}

impl Run for Init {
    async fn run(ctx: &Context<'_>, _: InitRequest) -> Result<InitAnswer> {
        let (init, author) = ctx.client.init().await?;
        let left = ctx.client.drain().await;
        let warnings = match left {
            0 => Vec::new(),
            n => vec![format!(
                "{n} record(s) still wait in the outbox; they are posted by a later command or \
                 by `forgestate flush`"
            )],
        };
        Ok(InitAnswer {
            thread: init.location,
            author,
            created: init.created,
            left,
            warnings,
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Init {
    type Flags = InitRequest;

    /// `session thread created: … (records are posted as …)`.
    fn show(_: &InitRequest, answer: InitAnswer, p: &impl super::cli::Printer) -> u8 {
        p.answer(&answer, |a| {
            let what = if a.created { "created" } else { "found" };
            let line = format!(
                "session thread {what}: {} (records are posted as {})",
                a.thread, a.author
            );
            p.printable(&line)
        })
    }
}
