//! `health`: a liveness signal with metrics.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Context, Run, SaveAnswer, Spec, Verb, input};
use crate::Write;
use crate::error::Result;
use crate::format::Record;

/// The status a health signal reports when none is given.
pub const DEFAULT_STATUS: &str = "Active";

/// `health`: a liveness signal with metrics.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct HealthRequest {
    /// The agent signalling, e.g. "implementation-orchestrator".
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// The session the signal belongs to.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// The agent's status in one word or a short phrase.
    #[serde(default = "default_status")]
    #[cfg_attr(feature = "cli", arg(long, default_value = DEFAULT_STATUS))]
    pub status: Option<String>,
    /// Metrics as a JSON object, e.g. {"active_workers": 3}. JSON text of an object is accepted
    /// too.
    #[serde(default = "crate::format::empty_object")]
    #[schemars(with = "Map<String, Value>")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub metrics: Value,
    /// When the next signal is due, in words, e.g. "in 10 iterations".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub next_check: Option<String>,
}

/// `forgestate health`'s flags: the request's, and `--metrics` as typed (inline, or `-` for
/// stdin), which the CLI reads into the request.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, clap::Args)]
pub struct HealthFlags {
    /// The request (its `metrics` is read from `--metrics`).
    #[command(flatten)]
    pub request: HealthRequest,
    /// Metrics as a JSON object, or - to read them from stdin
    #[arg(long, value_name = "JSON")]
    pub metrics: Option<String>,
}

/// `status` when the request leaves it out (the schema publishes it; the CLI's flag defaults to
/// it).
fn default_status() -> Option<String> {
    Some(DEFAULT_STATUS.to_string())
}

/// Health.
pub struct Health;

impl Verb for Health {
    type Request = HealthRequest;
    type Answer = SaveAnswer;
    const DECLARED: Spec = Spec {
        name: "health",
        title: "Post a health signal",
        description: "Post a health signal: the agent is alive, its status in a word (default \
            \"Active\"), metrics as a JSON object, and when the next signal is due. Call it \
            periodically from long-running loops so supervisors can tell a stalled agent from a \
            busy one. Returns the record id and where it was stored; `posted: false` means it \
            waits in this machine's outbox (not an error).",
        example: r#"{"agent": "w", "session": "s1", "status": "Busy", "metrics": {"workers": 3}}"#,
        about: "Post a [HEALTH] record: a liveness signal with metrics",
        examples: "  forgestate health --agent implementation-orchestrator --session s1
  forgestate health --agent orchestrator --session s1 --metrics '{\"workers\": 3}' --next-check soon
  forgestate health --agent implementation-orchestrator --session s1 --status Degraded --json",
        ..Spec::AGENT_WRITE
    };
}

impl Run for Health {
    async fn run(ctx: &Context<'_>, r: HealthRequest) -> Result<SaveAnswer> {
        let metrics = input::object_or_text("metrics", r.metrics)?;
        let status = r.status.as_deref().unwrap_or(DEFAULT_STATUS);
        let record = Record::health(
            &r.agent,
            &r.session,
            status,
            Value::Object(metrics),
            r.next_check.as_deref(),
        )?;
        SaveAnswer::saved(
            ctx.client,
            ctx.client.save_as(record, Write::default()).await,
        )
    }
}

#[cfg(feature = "cli")]
impl super::cli::MakeRequest<HealthRequest> for HealthFlags {
    /// The request, its `metrics` the text of `--metrics` (inline or `-`; the verb parses it, as
    /// it does a JSON string from MCP).
    fn request(&self) -> Result<HealthRequest> {
        let metrics = input::read_text(self.metrics.as_deref(), None)?;
        Ok(HealthRequest {
            metrics: metrics.map_or_else(crate::format::empty_object, Value::String),
            ..self.request.clone()
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Health {
    type Flags = HealthFlags;

    fn show(_: &HealthRequest, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        answer.show(p)
    }
}
