//! `outbox`: what waits in this machine's outboxes; the CLI runs it over the configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CLI, Group, Spec, Verb, answer_schema, request_schema};

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
    const SPEC: Spec = Spec {
        name: "outbox",
        title: "This machine's outboxes",
        description: "Every outbox on this machine: its forge, waiting records, oldest age, last \
            failure and dead letters.",
        faces: CLI,
        group: Group::Operators,
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::PURE
    };
}
