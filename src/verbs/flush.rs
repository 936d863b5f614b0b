//! `flush`: this machine's outboxes posted, in order, exactly once; the CLI runs it over the
//! configuration.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Spec, Verb, answer_schema, request_schema};

/// `flush`: which outboxes.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct FlushRequest {
    /// Every outbox on this machine, each to the forge and repository it was spooled for.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "from"))]
    pub all: bool,
    /// This outbox directory, to the forge configured now (for records spooled under a mistyped
    /// URL, owner or repository).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub from: Option<PathBuf>,
}

/// What `flush` answers for one outbox (`flush --all`: `{"outboxes": [...]}` of these).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushAnswer {
    /// Entries found already in the thread (not posted again).
    pub already_posted: usize,
    /// Another process was flushing this outbox.
    pub busy: bool,
    /// Entries the forge refused, moved to the dead letters.
    pub dead: Vec<FlushLetter>,
    /// The error that stopped the flush, when one did.
    pub error: Option<FlushError>,
    /// Entries still waiting.
    pub left: usize,
    /// Entries that are not records, moved aside.
    pub moved_aside: Vec<FlushLetter>,
    /// The outbox directory.
    pub outbox: PathBuf,
    /// Entries posted now, with their comments.
    pub posted: Vec<FlushPosted>,
}

impl FlushAnswer {
    /// The answer for the outbox `outbox` from its flush `report`; `error` is set when the
    /// face counts the flush as failed (the face decides the exit code).
    pub fn new(
        outbox: PathBuf,
        report: &crate::FlushReport,
        error: Option<FlushError>,
    ) -> FlushAnswer {
        let letters = |l: &[crate::durable::DeadLetter]| -> Vec<FlushLetter> {
            l.iter()
                .map(|d| FlushLetter {
                    path: d.path.clone(),
                    reason: d.reason.clone(),
                    answer: d.answer.clone(),
                })
                .collect()
        };
        FlushAnswer {
            already_posted: report.already_posted,
            busy: report.busy,
            dead: letters(&report.dead),
            error,
            left: report.left,
            moved_aside: letters(&report.moved_aside),
            outbox,
            posted: report
                .posted
                .iter()
                .map(|(path, c)| FlushPosted {
                    spooled: path.clone(),
                    comment_id: c.id,
                    url: c.url.clone(),
                })
                .collect(),
        }
    }
}

/// An outbox entry `flush` moved to the dead letters, or aside.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushLetter {
    /// The entry's file.
    pub path: PathBuf,
    /// Why it was moved.
    pub reason: String,
    /// What the forge answered, when it answered.
    pub answer: Option<String>,
}

/// An outbox entry `flush` posted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushPosted {
    /// The entry's file (gone now).
    pub spooled: PathBuf,
    /// The comment it became.
    pub comment_id: u64,
    /// The comment's web address, where the store has one.
    pub url: Option<String>,
}

/// The error that stopped a flush: the CLI's error object (`{"error": …}`'s body).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushError {
    /// The exit code.
    pub code: u8,
    /// Who must act: `usage`, `data`, `io`, `tempfail`, `config`, `conflict`.
    pub category: String,
    /// The message on one line.
    pub message: String,
    /// Why a comment is not a record (`parse` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Flush.
pub struct Flush;

impl Verb for Flush {
    type Request = FlushRequest;
    type Answer = FlushAnswer;
    const SPEC: Spec = Spec {
        name: "flush",
        title: "Post the outbox",
        description: "Post the records waiting in this machine's outbox, oldest first, exactly \
            once each.",
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}
