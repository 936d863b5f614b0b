//! Who is alive: one row per (agent, session) with a verdict, for supervisors and for cron.
//!
//! Pure. Given the records of a thread and the store's clock, [`status`] judges each pair:
//! `completed` or `ended` when an `[END]` record came after its last checkpoint (never stalled);
//! `conflicted` when two of its records continue from the same parent; `completed` when its
//! newest checkpoint's phase maps to a final resume point, or its newest
//! record is a `[HEALTH]` saying `Completed`; `paused` for a newest `[HEALTH]` saying `Paused`;
//! otherwise by the age of its newest record (`alive`, `warning`, `stalled`), with thresholds
//! that can differ per agent glob (`[status.agents."<glob>"]`).
//!
//! The `--json` shape is [`StatusRow`], one object per pair, in the table's order. Fields are
//! only ever added.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use glob::Pattern;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::session::{Ended, facts};
use super::verdict::by_age;
pub use super::verdict::{Verdict, span};
use crate::defaults;
use crate::format::{Kind, Payload, ser_time};
use crate::resume::{ResumeMap, most_specific};
use crate::scan::Entry;

/// The `[status]` table of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusConfig {
    /// Seconds without any record before a pair is `warning`.
    pub warn_after_secs: Option<u64>,
    /// Seconds without any record before a pair is `stalled`.
    pub stalled_after_secs: Option<u64>,
    /// Resume points that mean the work is done: a pair whose newest checkpoint maps to one is
    /// `completed`.
    pub final_resume_points: Option<Vec<String>>,
    /// Per agent (a glob), other thresholds.
    #[serde(default)]
    pub agents: BTreeMap<String, Thresholds>,
}

impl StatusConfig {
    /// `self` with `over` laid on top: keys set in `over` win; agent tables replace per agent.
    pub fn overlay(mut self, over: StatusConfig) -> StatusConfig {
        self.warn_after_secs = over.warn_after_secs.or(self.warn_after_secs);
        self.stalled_after_secs = over.stalled_after_secs.or(self.stalled_after_secs);
        self.final_resume_points = over.final_resume_points.or(self.final_resume_points);
        self.agents.extend(over.agents);
        self
    }
}

/// The thresholds of `[status.agents."<glob>"]`; an unset key falls back to the `[status]` one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Seconds without any record before `warning`.
    pub warn_after_secs: Option<u64>,
    /// Seconds without any record before `stalled`.
    pub stalled_after_secs: Option<u64>,
}

/// The compiled `[status]` table: thresholds per agent and the final resume points.
#[derive(Debug, Clone)]
pub struct StatusPolicy {
    warn: u64,
    stalled: u64,
    agents: Vec<(String, Pattern, Thresholds)>,
    final_points: Vec<String>,
    forced: Thresholds,
}

impl Default for StatusPolicy {
    /// The built-in thresholds (warning after 10 minutes, stalled after 30) and final points.
    fn default() -> Self {
        StatusPolicy {
            warn: defaults::STATUS_WARN_AFTER_SECS,
            stalled: defaults::STATUS_STALLED_AFTER_SECS,
            agents: Vec::new(),
            final_points: defaults::FINAL_RESUME_POINTS
                .iter()
                .map(|p| p.to_string())
                .collect(),
            forced: Thresholds::default(),
        }
    }
}

impl StatusPolicy {
    /// Compiles a `[status]` table over the built-in defaults. The error names the bad key.
    pub fn new(config: &StatusConfig) -> Result<StatusPolicy, String> {
        let base = StatusPolicy::default();
        let mut agents = Vec::new();
        for (key, thresholds) in &config.agents {
            let pattern = Pattern::new(key)
                .map_err(|e| format!("[status.agents] key {key:?} is not a valid glob: {e}"))?;
            agents.push((key.clone(), pattern, *thresholds));
        }
        Ok(StatusPolicy {
            warn: config.warn_after_secs.unwrap_or(base.warn),
            stalled: config.stalled_after_secs.unwrap_or(base.stalled),
            agents,
            final_points: config
                .final_resume_points
                .clone()
                .unwrap_or(base.final_points),
            forced: Thresholds::default(),
        })
    }

    /// The same policy with these thresholds for every agent, over any configured ones (the
    /// command line's `--warn-after` and `--stalled-after`).
    pub fn force(mut self, thresholds: Thresholds) -> StatusPolicy {
        self.forced = thresholds;
        self
    }

    /// Seconds before `warning` and before `stalled` for `agent`. A warning threshold above the
    /// stalled one is lowered to it.
    pub fn thresholds(&self, agent: &str) -> (u64, u64) {
        let rule = most_specific(
            self.agents.iter().map(|(k, p, t)| (k.as_str(), p, t)),
            agent,
        )
        .copied()
        .unwrap_or_default();
        let stalled = self
            .forced
            .stalled_after_secs
            .or(rule.stalled_after_secs)
            .unwrap_or(self.stalled);
        let warn = self
            .forced
            .warn_after_secs
            .or(rule.warn_after_secs)
            .unwrap_or(self.warn);
        (warn.min(stalled), stalled)
    }

    /// Whether a resume point means the work is done.
    pub fn is_final(&self, resume_point: &str) -> bool {
        self.final_points.iter().any(|p| p == resume_point)
    }
}

/// One (agent, session) pair, judged. This is the `--json` shape of `status` (an array of
/// these); fields are only ever added.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StatusRow {
    /// The agent.
    pub agent: String,
    /// The session.
    pub session: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words: `no record for 41m (stalled after 30m)`.
    pub reason: String,
    /// Seconds since the newest record was posted, on the store's clock.
    pub age_secs: i64,
    /// When the newest record was posted (the store's time, UTC).
    #[serde(serialize_with = "ser_time")]
    #[schemars(with = "String")]
    pub last_seen: DateTime<Utc>,
    /// The newest record's kind.
    pub last_kind: Kind,
    /// How many records the pair has.
    pub records: usize,
    /// The newest checkpoint's phase.
    pub phase: Option<String>,
    /// Where that phase resumes (the resume map's answer).
    pub resume_point: Option<String>,
    /// The newest health signal's status.
    pub health: Option<String>,
    /// The newest health signal's metrics.
    pub metrics: Option<Value>,
    /// The newest checkpoint's next step (handoff).
    pub next: Option<String>,
    /// The newest checkpoint's blockers (handoff).
    pub blockers: Vec<String>,
    /// The warning threshold applied, in seconds.
    pub warn_after_secs: u64,
    /// The stalled threshold applied, in seconds.
    pub stalled_after_secs: u64,
    /// The end record, when the session ended and no checkpoint came after it.
    pub ended: Option<Ended>,
    /// True when a checkpoint came after an end record: the session was reopened.
    pub reopened: bool,
    /// The write-ahead intent the newest checkpoint left unconfirmed, by name.
    pub pending_intent: Option<String>,
    /// Parents named by more than one record: two writers continued from one state.
    pub conflicts: usize,
    /// The writer that owns the session, when it was taken over (its newest takeover).
    pub owner: Option<String>,
    /// How many of the pair's records are fenced: written by another writer after the takeover.
    /// They count in `records` and nowhere else.
    pub fenced: usize,
}

/// Judges every (agent, session) pair of `entries` (in thread order) at `now`, the store's
/// clock. Rows come sorted by verdict (stalled first), then oldest first, then by name.
pub fn status(
    entries: &[Entry],
    now: DateTime<Utc>,
    policy: &StatusPolicy,
    map: &ResumeMap,
) -> Vec<StatusRow> {
    let mut pairs: BTreeMap<(&str, &str), Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        pairs
            .entry((e.record.agent.as_str(), e.record.session.as_str()))
            .or_default()
            .push(e);
    }
    let mut rows: Vec<StatusRow> = pairs
        .into_iter()
        .filter_map(|((agent, session), list)| judge(agent, session, &list, now, policy, map))
        .collect();
    let order = |r: &StatusRow| {
        (
            r.verdict,
            std::cmp::Reverse(r.age_secs),
            r.agent.clone(),
            r.session.clone(),
        )
    };
    rows.sort_by_cached_key(order);
    rows
}

fn judge(
    agent: &str,
    session: &str,
    list: &[&Entry],
    now: DateTime<Utc>,
    policy: &StatusPolicy,
    map: &ResumeMap,
) -> Option<StatusRow> {
    let all = list;
    // Fenced records never decide anything: not the verdict, not the age, not the phase.
    let live: Vec<&Entry> = list.iter().copied().filter(|e| !e.fenced).collect();
    let list = &live[..];
    let newest = *list.last()?;
    let checkpoint = list
        .iter()
        .rev()
        .find(|e| e.record.kind() == Kind::Checkpoint);
    let health = list.iter().rev().find(|e| e.record.kind() == Kind::Health);
    let phase = checkpoint
        .and_then(|e| e.record.phase())
        .map(str::to_string);
    let resume_point = phase.as_deref().map(|p| map.point(agent, p).to_string());
    let (status, metrics) = match health.map(|e| &e.record.payload) {
        Some(Payload::Health {
            status, metrics, ..
        }) => (Some(status.clone()), Some(metrics.clone())),
        _ => (None, None),
    };
    // A carried copy counts from when its record was first posted, never from the carry.
    let last_seen = list
        .iter()
        .map(|e| e.record.first_posted(e.comment.created_at))
        .max()
        .unwrap_or(newest.comment.created_at);
    let age_secs = now.signed_duration_since(last_seen).num_seconds();
    let (warn, stalled) = policy.thresholds(agent);
    let said = |word: &str| {
        newest.record.kind() == Kind::Health
            && status
                .as_deref()
                .is_some_and(|s| s.trim().eq_ignore_ascii_case(word))
    };
    let facts = facts(all.iter().copied());
    let (verdict, reason) = match &resume_point {
        _ if facts.ended.is_some() => ended_verdict(facts.ended.as_ref()),
        _ if !facts.conflicts.is_empty() => (
            Verdict::Conflicted,
            format!(
                "two writers continued from record {}",
                facts.conflicts[0].parent
            ),
        ),
        Some(point) if policy.is_final(point) => (
            Verdict::Completed,
            format!(
                "phase {} resumes at {point}, a final point",
                phase.as_deref().unwrap_or("-")
            ),
        ),
        _ if said("completed") => (Verdict::Completed, "health says Completed".to_string()),
        _ if said("paused") => (Verdict::Paused, "health says Paused".to_string()),
        _ => by_age(age_secs, warn, stalled),
    };
    let reason = match &facts.reopened {
        Some(end) if facts.ended.is_none() => {
            format!("{reason}; reopened after an end ({})", end.reason)
        }
        _ => reason,
    };
    Some(StatusRow {
        agent: agent.to_string(),
        session: session.to_string(),
        verdict,
        reason,
        age_secs,
        last_seen,
        last_kind: newest.record.kind(),
        records: all.len(),
        phase,
        resume_point,
        health: status,
        metrics,
        next: checkpoint.and_then(|e| e.record.next.clone()),
        blockers: checkpoint
            .map(|e| e.record.blockers.clone())
            .unwrap_or_default(),
        warn_after_secs: warn,
        stalled_after_secs: stalled,
        reopened: facts.reopened.is_some(),
        pending_intent: facts.pending_intent.map(|i| i.name),
        conflicts: facts.conflicts.len(),
        owner: facts.owner.map(|t| t.owner),
        fenced: facts.fenced,
        ended: facts.ended,
    })
}

fn ended_verdict(end: Option<&Ended>) -> (Verdict, String) {
    let Some(end) = end else {
        return (Verdict::Ended, String::new());
    };
    let at = &end.at;
    match end.reason.as_str() {
        "completed" => (Verdict::Completed, format!("ended: completed at {at}")),
        reason => (Verdict::Ended, format!("ended: {reason} at {at}")),
    }
}
