//! What happened in one session, step by step: every record in thread order, the time between
//! them, the resume point each checkpoint maps to, where a forked session came from, and (on
//! request) the JSON changes between consecutive checkpoints of an agent.
//!
//! Pure. A session is *forked* when its first checkpoint names, in `Parent:`, a record of another
//! session (what `fork` writes). The `--json` shape is [`History`]; fields are only ever added.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::diff::{Change, diff};
use super::session::{Conflict, conflict_warning, facts};
use crate::format::{Kind, Payload, empty_object, ser_time};
use crate::resume::ResumeMap;
use crate::scan::{Entry, name_matches};

/// Where a forked record came from: a record of another session.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Origin {
    /// The other session.
    pub session: String,
    /// The agent that wrote the origin record.
    pub agent: String,
    /// The origin record's id.
    pub record_id: String,
    /// The origin's phase, when it is a checkpoint.
    pub phase: Option<String>,
    /// The origin's comment id.
    pub comment_id: Option<u64>,
}

/// One record of the session.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Step {
    /// Its position in the listed history, from 1.
    pub n: usize,
    /// Its `Seq:` header, when it has one.
    pub seq: Option<u64>,
    /// The record's id (absent on version 1.0 records).
    pub record_id: Option<String>,
    /// The comment holding it (absent while it waits in this machine's outbox).
    pub comment_id: Option<u64>,
    /// The session issue holding that comment (`None` on the local store and while queued).
    pub issue: Option<u64>,
    /// `checkpoint`, `health`, `end` or `takeover`.
    pub kind: Kind,
    /// The agent that wrote it.
    pub agent: String,
    /// The record's own `Time:` (the writer's clock).
    #[serde(serialize_with = "ser_time")]
    #[schemars(with = "String")]
    pub time: DateTime<Utc>,
    /// When the store took it (the store's clock).
    #[serde(serialize_with = "ser_time")]
    #[schemars(with = "String")]
    pub posted_at: DateTime<Utc>,
    /// Seconds since the previous listed record was posted; `None` for the first.
    pub since_previous_secs: Option<i64>,
    /// The checkpoint's phase.
    pub phase: Option<String>,
    /// Where that phase resumes.
    pub resume_point: Option<String>,
    /// The health signal's status.
    pub status: Option<String>,
    /// The record's `Parent:`.
    pub parent: Option<String>,
    /// Set when `parent` is a record of another session: this record starts a fork.
    pub forked_from: Option<Origin>,
    /// Handoff: the next step.
    pub next: Option<String>,
    /// Handoff: the blockers.
    pub blockers: Vec<String>,
    /// Written by a writer after another one took the session over: every reader ignores it
    /// (`resume` never answers from it). Printed only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fenced: bool,
    /// With `diff`: for a checkpoint, the changes from the agent's previous checkpoint in this
    /// session (for the first, from the fork's origin, else from an empty object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Change>>,
}

/// What `history` answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct History {
    /// The session.
    pub session: String,
    /// The agent filter, when one was given.
    pub agent: Option<String>,
    /// Where the session was forked from (the record its first checkpoint copies), when it was.
    // A session that had checkpoints of its own before a record was forked into it was not
    // forked (that record says where it came from).
    pub forked_from: Option<Origin>,
    /// The records in thread order, each with the time since the one before and, for a
    /// checkpoint, its resume point (and with `diff`, its changes).
    pub records: Vec<Step>,
    /// Per agent, records that continue from the same parent: two writers worked from one state
    /// (each is also a warning naming both records).
    pub conflicts: Vec<AgentConflict>,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    // [`history`] is given every entry, so it says true; the client says what its read missed.
    pub complete: bool,
    /// Things the caller should know.
    // [`history`] names each conflict; the client adds what its read noticed, first.
    pub warnings: Vec<String>,
}

/// A [`Conflict`] within one agent's records of the session.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AgentConflict {
    /// The agent whose records conflict.
    pub agent: String,
    /// The parent and the records naming it.
    #[serde(flatten)]
    pub conflict: Conflict,
}

/// The history of `session` (exactly), optionally of agents matching `agent` only, out of all of
/// a thread's `entries` (which are needed to find fork origins).
pub fn history(
    entries: &[Entry],
    session: &str,
    agent: Option<&str>,
    with_diff: bool,
    map: &ResumeMap,
) -> History {
    let by_id: HashMap<&str, &Entry> = entries
        .iter()
        .filter_map(|e| e.record.id.as_deref().map(|id| (id, e)))
        .collect();
    let mut last_data: HashMap<&str, &Value> = HashMap::new();
    let mut previous: Option<DateTime<Utc>> = None;
    let empty = empty_object();
    let mut records = Vec::new();
    let listed = |e: &&Entry| {
        e.record.session == session && agent.is_none_or(|a| name_matches(a, &e.record.agent))
    };
    let mut agents: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for e in entries.iter().filter(listed) {
        agents.entry(e.record.agent.as_str()).or_default().push(e);
        let r = &e.record;
        let origin = r
            .parent
            .as_deref()
            .and_then(|p| by_id.get(p))
            .filter(|o| o.record.session != session);
        let forked_from = origin.map(|o| Origin {
            session: o.record.session.clone(),
            agent: o.record.agent.clone(),
            record_id: o.record.id.clone().unwrap_or_default(),
            phase: o.record.phase().map(str::to_string),
            comment_id: o.comment.id,
        });
        let (phase, status) = match &r.payload {
            Payload::Checkpoint { phase, .. } => (Some(phase.clone()), None),
            Payload::Health { status, .. } => (None, Some(status.clone())),
            Payload::End { reason, .. } => (None, Some(format!("ended: {reason}"))),
            Payload::Takeover { .. } => (
                None,
                Some(format!(
                    "taken over by {}",
                    r.writer.as_deref().unwrap_or("unknown")
                )),
            ),
        };
        let changes = match (&r.payload, with_diff) {
            (Payload::Checkpoint { data, .. }, true) => {
                let before = last_data
                    .get(r.agent.as_str())
                    .copied()
                    .or_else(|| origin.map(|o| o.record.data()))
                    .unwrap_or(&empty);
                last_data.insert(r.agent.as_str(), data);
                Some(diff(before, data))
            }
            _ => None,
        };
        let posted = r.first_posted(e.comment.created_at);
        records.push(Step {
            n: records.len() + 1,
            seq: r.seq,
            record_id: r.id.clone(),
            comment_id: e.comment.id,
            issue: e.comment.issue,
            kind: r.kind(),
            agent: r.agent.clone(),
            time: r.time,
            posted_at: posted,
            since_previous_secs: previous.map(|p| posted.signed_duration_since(p).num_seconds()),
            resume_point: phase.as_deref().map(|p| map.point(&r.agent, p).to_string()),
            phase,
            status,
            parent: r.parent.clone(),
            forked_from,
            next: r.next.clone(),
            blockers: r.blockers.clone(),
            fenced: e.fenced,
            changes,
        });
        previous = Some(posted);
    }
    let conflicts: Vec<AgentConflict> = agents
        .into_iter()
        .flat_map(|(agent, list)| {
            facts(list)
                .conflicts
                .into_iter()
                .map(|conflict| AgentConflict {
                    agent: agent.to_string(),
                    conflict,
                })
        })
        .collect();
    let warnings = conflicts
        .iter()
        .map(|c| conflict_warning(&c.agent, session, &c.conflict))
        .collect();
    History {
        conflicts,
        complete: true,
        warnings,
        session: session.to_string(),
        agent: agent.map(str::to_string),
        forked_from: records
            .iter()
            .find(|s| s.kind == Kind::Checkpoint)
            .and_then(|s| s.forked_from.clone()),
        records,
    }
}
