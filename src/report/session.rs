//! What one (agent, session) pair's records say about the session as a whole: whether it ended
//! (and was reopened since), the write-ahead intent still pending, and the writers that forked
//! its lineage (two records naming the same `Parent:`).
//!
//! Pure. [`facts`] takes the pair's records in thread order (already deduped by `Id`, so a
//! rotation's carried copy counts once); `resume`, `history` and `status` all answer from it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::format::{Kind, Payload, format_time};
use crate::scan::Entry;

use super::fork::is_forced_fork;

/// An end record: why the session stopped, when, and the note it left.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Ended {
    /// `completed`, `interrupted`, `error` or `user_stop`.
    pub reason: String,
    /// When the end was written (the record's `Time:`, RFC 3339).
    pub at: String,
    /// The note, when one was given.
    pub note: Option<String>,
    /// The end record's id.
    pub id: Option<String>,
}

/// A write-ahead intent no later checkpoint confirmed: the side effect may or may not have
/// happened, so check the world before doing it again.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PendingIntent {
    /// What was about to happen, e.g. `create_pr`.
    pub name: String,
    /// The data recorded with it (`null` when none).
    #[schemars(with = "Value")]
    pub data: Value,
    /// The id of the checkpoint that recorded it.
    pub id: Option<String>,
    /// When that checkpoint was written (RFC 3339).
    pub at: String,
}

/// Records of one pair that continue from the same record: two writers worked from one state.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Conflict {
    /// The record both continue from.
    pub parent: String,
    /// The records that name it, in thread order.
    pub records: Vec<Sibling>,
}

/// One record in a [`Conflict`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Sibling {
    /// Its record id.
    pub id: Option<String>,
    /// Its kind.
    pub kind: Kind,
    /// The comment holding it (absent while it waits in the outbox).
    pub comment_id: Option<u64>,
    /// When it was written (RFC 3339).
    pub time: String,
}

/// What a pair's records say about the session.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Facts {
    /// The newest end record, when no checkpoint came after it.
    pub ended: Option<Ended>,
    /// The newest end record, when a checkpoint came after it: the session was reopened.
    pub reopened: Option<Ended>,
    /// The newest checkpoint's intent, unless it confirmed it itself (`Done:`).
    pub pending_intent: Option<PendingIntent>,
    /// Every parent named by more than one record.
    pub conflicts: Vec<Conflict>,
    /// The id of the pair's newest unfenced record (what `Parent:` and `--if-latest` name).
    pub latest_id: Option<String>,
    /// The session's owner: its newest takeover (who, when, from which record), if any.
    pub owner: Option<crate::scan::Takeover>,
    /// How many of its records are fenced (written by a writer after it lost the session).
    pub fenced: usize,
}

/// The facts of one pair's records, given in thread order.
pub fn facts<'a>(list: impl IntoIterator<Item = &'a Entry>) -> Facts {
    let mut out = Facts::default();
    let mut children: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    let mut last_end: Option<&Entry> = None;
    let mut checkpoint_after_end = false;
    let mut newest_checkpoint: Option<&Entry> = None;
    for e in list {
        let r = &e.record;
        if let Some(t) = crate::scan::Takeover::of(e) {
            out.owner = Some(t);
        }
        // A fenced record says nothing of the session: it is counted, and kept in history.
        if e.fenced {
            out.fenced += 1;
            continue;
        }
        out.latest_id = r.id.clone().or(out.latest_id.take());
        // A forced fork replaced the session's state on purpose: no second writer, even when
        // an earlier fork into the session started from the same record.
        // Nor is a takeover: it continues from the newest record on purpose, racing whoever
        // still writes (fenced from then on) or another takeover (the order decides).
        let takeover = r.kind() == Kind::Takeover;
        if let Some(parent) = r
            .parent
            .as_deref()
            .filter(|_| !is_forced_fork(r) && !takeover)
        {
            let seen = children.entry(parent).or_default();
            if seen.is_empty() {
                order.push(parent);
            }
            seen.push(e);
        }
        match r.kind() {
            Kind::End => {
                last_end = Some(e);
                checkpoint_after_end = false;
            }
            Kind::Checkpoint => {
                checkpoint_after_end = last_end.is_some();
                newest_checkpoint = Some(e);
            }
            Kind::Health | Kind::Takeover => {}
        }
    }
    let end = last_end.and_then(ended);
    match checkpoint_after_end {
        true => out.reopened = end,
        false => out.ended = end,
    }
    out.pending_intent = newest_checkpoint.and_then(|e| {
        e.record.open_intent().map(|i| PendingIntent {
            name: i.name.clone(),
            data: i.data.clone(),
            id: e.record.id.clone(),
            at: format_time(&e.record.time),
        })
    });
    out.conflicts = order
        .into_iter()
        .filter_map(|parent| {
            let kids = children.get(parent).filter(|k| k.len() > 1)?;
            Some(Conflict {
                parent: parent.to_string(),
                records: kids
                    .iter()
                    .map(|e| Sibling {
                        id: e.record.id.clone(),
                        kind: e.record.kind(),
                        comment_id: e.comment.id,
                        time: format_time(&e.record.time),
                    })
                    .collect(),
            })
        })
        .collect();
    out
}

fn ended(e: &Entry) -> Option<Ended> {
    match &e.record.payload {
        Payload::End { reason, note } => Some(Ended {
            reason: reason.clone(),
            at: format_time(&e.record.time),
            note: note.clone(),
            id: e.record.id.clone(),
        }),
        _ => None,
    }
}

/// The warning `resume` and `history` give for a conflict, naming the records.
pub fn conflict_warning(agent: &str, session: &str, c: &Conflict) -> String {
    let named: Vec<String> = c
        .records
        .iter()
        .map(|s| {
            format!(
                "{} ({} at {})",
                s.id.as_deref().unwrap_or("-"),
                s.kind.name(),
                s.time
            )
        })
        .collect();
    format!(
        "two writers continued agent {agent} in session {session} from the same record {}: {}; \
         stop one of them, then decide which state to keep (`forgestate history --session \
         {session}` shows both)",
        c.parent,
        named.join(" and ")
    )
}
