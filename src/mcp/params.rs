//! What each MCP tool takes: typed inputs whose doc comments become the JSON Schema
//! descriptions (schemars) an LLM reads before calling the tool.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use forgestate::format::Kind;

/// `checkpoint`: where an agent got to, and the state it needs to resume.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointParams {
    /// The agent posting the checkpoint, e.g. "implementation-worker". Use the same name every
    /// time: `resume` finds checkpoints by it.
    pub agent: String,
    /// The session (one run of work, e.g. "sess-42") the checkpoint belongs to.
    pub session: String,
    /// The phase just completed, e.g. "clone_complete" or "subtask_3_complete". The resume map
    /// turns it into a resume point.
    pub phase: String,
    /// The state needed to resume, as a JSON object (issue numbers, branch names, completed
    /// subtasks, file paths; never file contents or secrets, which are redacted). JSON text of
    /// an object is accepted too.
    #[serde(default = "empty")]
    #[schemars(with = "Map<String, Value>")]
    pub data: Value,
    /// What should happen next, in one line, for whoever picks the work up.
    #[serde(default)]
    pub next: Option<String>,
    /// What blocks progress, one line each.
    #[serde(default)]
    pub blockers: Vec<String>,
}

/// `health`: a liveness signal with metrics.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthParams {
    /// The agent signalling, e.g. "implementation-orchestrator".
    pub agent: String,
    /// The session the signal belongs to.
    pub session: String,
    /// The agent's status in one word or a short phrase. Default: "Active".
    #[serde(default)]
    pub status: Option<String>,
    /// Metrics as a JSON object, e.g. {"active_workers": 3}.
    #[serde(default = "empty")]
    #[schemars(with = "Map<String, Value>")]
    pub metrics: Value,
    /// When the next signal is due, in words, e.g. "in 10 iterations".
    #[serde(default)]
    pub next_check: Option<String>,
}

/// `resume`: where an agent should pick a session up.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeParams {
    /// The agent resuming, exactly as it posts checkpoints (not a glob).
    pub agent: String,
    /// The session to resume, exactly (not a glob).
    pub session: String,
}

/// The record filters `latest` and `list` share.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct FilterParams {
    /// Only records of this agent; a glob such as "implementation-*" matches several.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only records of this session; a glob such as "sess-*" matches several.
    #[serde(default)]
    pub session: Option<String>,
    /// Only this kind of record. Default: either.
    #[serde(default)]
    pub kind: Option<KindParam>,
    /// Only checkpoints whose phase matches this glob, e.g. "subtask_*_complete".
    #[serde(default)]
    pub phase: Option<String>,
}

/// `latest`: the newest matching record.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct LatestParams {
    /// Which records count.
    #[serde(flatten)]
    pub filter: FilterParams,
}

/// `list`: matching records, oldest first.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListParams {
    /// Which records count.
    #[serde(flatten)]
    pub filter: FilterParams,
    /// Only records posted at or after this time: RFC 3339 ("2026-11-29T08:00:00Z") or an age
    /// such as "90m", "24h" or "7d".
    #[serde(default)]
    pub since: Option<String>,
    /// Only the newest N matching records (still returned oldest first). Default: all.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Also return comments that are not valid, trusted records, with the reason.
    #[serde(default)]
    pub invalid: bool,
}

/// A kind of record.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KindParam {
    /// [CHECKPOINT] records: progress and resume state.
    Checkpoint,
    /// [HEALTH] records: liveness signals.
    Health,
}

impl From<KindParam> for Kind {
    fn from(k: KindParam) -> Kind {
        match k {
            KindParam::Checkpoint => Kind::Checkpoint,
            KindParam::Health => Kind::Health,
        }
    }
}

fn empty() -> Value {
    Value::Object(Map::new())
}

/// `status`: who is alive, and who has stalled.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {
    /// Only agents matching this glob, e.g. "implementation-*".
    #[serde(default)]
    pub agent: Option<String>,
    /// Only sessions matching this glob.
    #[serde(default)]
    pub session: Option<String>,
    /// Seconds without any record before an agent is "warning", for every agent (overrides the
    /// configured thresholds; default 600).
    #[serde(default)]
    pub warn_after_secs: Option<u64>,
    /// Seconds without any record before an agent is "stalled", for every agent (overrides the
    /// configured thresholds; default 1800).
    #[serde(default)]
    pub stalled_after_secs: Option<u64>,
}
