//! `rotate`: the session issue replaced by a new one carrying each session's newest records.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CLI, Context, Run, Spec, Verb};
use crate::Rotation;
use crate::error::Result;

/// `rotate` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateRequest {}

/// Rotate.
pub struct Rotate;

impl Verb for Rotate {
    type Request = RotateRequest;
    type Answer = Rotation;
    const DECLARED: Spec = Spec {
        name: "rotate",
        title: "Rotate the session issue",
        description: "Replace a long session issue with a new one carrying each active \
            session's newest records, then close it (safe to run again after an interruption). \
            Also automatic after a save once the issue holds more than `rotate_after` comments.",
        destructive: true,
        faces: CLI,
        reads_thread: true,
        example: "{}",
        about: "Replace a long session issue with a new one carrying each active session's newest records, then close it (safe to run again after an interruption)",
        after: "Also automatic: a checkpoint or health record rotates the issue once it holds more than [forge] rotate_after comments (default 2000; 0 turns it off).",
        examples: "  forgestate rotate
  forgestate rotate --json",
        ..Spec::OPERATOR
    };
}

impl Run for Rotate {
    async fn run(ctx: &Context<'_>, _: RotateRequest) -> Result<Rotation> {
        ctx.client.rotate().await
    }
}

/// The warning of a record a rotation did not carry, and why.
pub(super) fn not_carried(why: &str, from: u64) -> String {
    format!("not carried ({why}); it stays readable through the link to session issue #{from}")
}

/// What a rotation did: one line (two with a note), and the new issue's address.
#[cfg(feature = "cli")]
pub(super) fn rotation_text(r: &Rotation) -> String {
    let mut line = match (r.to, &r.to_url) {
        (Some(to), Some(url)) => {
            let made = if r.created { "created" } else { "found" };
            let mut s = format!(
                "session issue #{} rotated to #{to} ({made}): {} record(s) carried",
                r.from, r.carried
            );
            if r.already_carried > 0 {
                s.push_str(&format!(", {} carried before", r.already_carried));
            }
            if !r.skipped.is_empty() {
                s.push_str(&format!(", {} not carried", r.skipped.len()));
            }
            s.push_str(if r.closed {
                "; old issue closed"
            } else {
                "; old issue still open"
            });
            s.push_str(&format!("\n{url}"));
            s
        }
        _ => format!("session issue #{} not rotated", r.from),
    };
    if let Some(note) = &r.note {
        line.push_str(&format!("\n{note}"));
    }
    line
}

#[cfg(feature = "cli")]
impl super::cli::Command for Rotate {
    type Flags = RotateRequest;

    /// What the rotation did, and what it could not carry (not with `--quiet`).
    fn show(_: &RotateRequest, report: Rotation, p: &impl super::cli::Printer) -> u8 {
        let code = p.answer(&report, rotation_text);
        if !p.quiet() && !p.json_mode() {
            for why in &report.skipped {
                p.note(&format!("warning: {}", not_carried(why, report.from)));
            }
        }
        code
    }
}
