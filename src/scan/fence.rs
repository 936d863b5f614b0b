//! The fencing rule, stated once: one writer per session.
//!
//! A `[TAKEOVER]` record hands an agent's session (the agent and session pair) to its writer.
//! Reading the pair's records in the thread's order (`order.rs`), each record is judged against
//! the newest takeover before it: a record with a `Writer:` naming another writer than that
//! takeover's is *fenced*. A fenced record is never a resume point, never `latest` and never a
//! status verdict; it is listed with `fenced: true`, named in a warning and kept in `history`.
//! Records with no `Writer:` (the seed's clients, older versions) are never fenced, and a
//! takeover is never fenced itself: two racing takeovers are both kept, and the one the order
//! puts last owns the session, for every reader alike. Pure: the same records give the same
//! answer on every store and every machine.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Entry;
use crate::format::{Record, format_time};

/// Which records of `records` (in the thread's order) are fenced, one flag each.
pub fn fenced_flags<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<bool> {
    let mut owner: HashMap<(&str, &str), &str> = HashMap::new();
    records
        .into_iter()
        .map(|r| {
            let pair = (r.agent.as_str(), r.session.as_str());
            if let Some(new) = r.new_owner() {
                owner.insert(pair, new);
                return false;
            }
            match (owner.get(&pair), r.writer.as_deref()) {
                (Some(owner), Some(writer)) => *owner != writer,
                _ => false,
            }
        })
        .collect()
}

/// Marks the fenced entries of `entries` (in the thread's order), unmarking the others.
pub fn fence(entries: &mut [Entry]) {
    let flags = fenced_flags(entries.iter().map(|e| &e.record));
    for (e, fenced) in entries.iter_mut().zip(flags) {
        e.fenced = fenced;
    }
}

/// Of the records `gone` marks for removal from `entries` (in the thread's order), unmarks the
/// newest record of each writer a session was taken from, when all of its records of the
/// session would go: a writer learns that it lost the session from its own records there (see
/// [`fenced_out`]), so without one its next read would answer instead of failing as fenced.
/// Answers how many it unmarked. Before [`keep_fencing`]: the record kept may be fenced, and
/// the takeover fencing it must stay then.
pub fn keep_displaced(entries: &[Entry], gone: &mut [bool]) -> usize {
    let mut unmarked = 0;
    let owners: HashMap<(&str, &str), &str> = entries
        .iter()
        .filter_map(|e| {
            let owner = e.record.new_owner()?;
            Some(((e.record.agent.as_str(), e.record.session.as_str()), owner))
        })
        .collect();
    let mut newest: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    let mut left: BTreeSet<(&str, &str, &str)> = BTreeSet::new();
    for (i, e) in entries.iter().enumerate() {
        let (agent, session) = (e.record.agent.as_str(), e.record.session.as_str());
        let Some(writer) = e.record.writer.as_deref() else {
            continue;
        };
        let displaced = owners
            .get(&(agent, session))
            .is_some_and(|owner| *owner != writer);
        if e.record.new_owner().is_some() || !displaced {
            continue;
        }
        newest.insert((agent, session, writer), i);
        if !gone.get(i).copied().unwrap_or(false) {
            left.insert((agent, session, writer));
        }
    }
    for (key, i) in newest {
        if !left.contains(&key)
            && let Some(slot) = gone.get_mut(i)
            && *slot
        {
            *slot = false;
            unmarked += 1;
        }
    }
    unmarked
}

/// Of the records `gone` marks for removal from `entries` (in the thread's order, fenced as
/// read), unmarks the takeovers that must stay so that every record left is fenced exactly as
/// it is now: deleting the takeover that fences a record would unfence it (and a reader would
/// resume from it), and deleting the one a record's writer took the session with would fence
/// it under an earlier takeover. Answers how many it unmarked. Judged by [`fenced_flags`]
/// itself.
pub fn keep_fencing(entries: &[Entry], gone: &mut [bool]) -> usize {
    let mut unmarked = 0;
    // The takeover each record is judged against: the pair's newest before it.
    let mut latest: HashMap<(&str, &str), usize> = HashMap::new();
    let judge: Vec<Option<usize>> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let pair = (e.record.agent.as_str(), e.record.session.as_str());
            let before = latest.get(&pair).copied();
            if e.record.new_owner().is_some() {
                latest.insert(pair, i);
            }
            before
        })
        .collect();
    loop {
        let left: Vec<usize> = (0..entries.len())
            .filter(|&i| !gone.get(i).copied().unwrap_or(false))
            .collect();
        let flags = fenced_flags(left.iter().map(|&i| &entries[i].record));
        let mut changed = false;
        for (&i, fenced) in left.iter().zip(flags) {
            // A record judged differently has lost its judge (were it left, it would still be
            // the pair's newest takeover before the record): the judge stays.
            if fenced != entries[i].fenced
                && let Some(slot) = judge[i].and_then(|t| gone.get_mut(t))
                && *slot
            {
                *slot = false;
                unmarked += 1;
                changed = true;
            }
        }
        if !changed {
            return unmarked;
        }
    }
}

/// A session's newest takeover: who owns it, since when, from which record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Takeover {
    /// The writer that owns the session.
    pub owner: String,
    /// The takeover record's `Id`.
    pub record_id: Option<String>,
    /// The record the owner continues from (`From:`).
    pub from_record: Option<String>,
    /// The writer that posted the takeover for the owner (a supervisor), when another.
    pub by: Option<String>,
    /// When the takeover was posted, by the store's clock.
    #[schemars(with = "String")]
    pub at: DateTime<Utc>,
}

impl Takeover {
    /// The takeover `e` holds, if it is one.
    pub fn of(e: &Entry) -> Option<Takeover> {
        Takeover::posted(&e.record, e.record.first_posted(e.comment.created_at))
    }

    /// The takeover `record` is, if it is one, posted at `at`.
    pub(crate) fn posted(record: &Record, at: DateTime<Utc>) -> Option<Takeover> {
        let crate::format::Payload::Takeover { by, .. } = &record.payload else {
            return None;
        };
        Some(Takeover {
            owner: record.new_owner()?.to_string(),
            record_id: record.id.clone(),
            from_record: record.taken_from().map(str::to_string),
            by: by.clone(),
            at,
        })
    }

    /// The takeover in words: who, when, from which record.
    pub fn describe(&self) -> String {
        format!(
            "writer {} took it over at {}{}{}",
            self.owner,
            format_time(&self.at),
            // Who posted it goes with the takeover record, never after `From:`, whose record
            // another writer may have posted.
            match (self.record_id.as_deref(), self.by.as_deref()) {
                (Some(id), Some(by)) => format!(" (takeover record {id}, posted by writer {by})"),
                (Some(id), None) => format!(" (takeover record {id})"),
                (None, Some(by)) => format!(" (posted by writer {by})"),
                (None, None) => String::new(),
            },
            match &self.from_record {
                Some(from) => format!(", continuing from record {from}"),
                None => ", before the session had a record".to_string(),
            },
        )
    }
}

/// Who owns each (agent, session) that has a takeover: its newest takeover, by the order of
/// `entries` (the thread's).
pub fn owners(entries: &[Entry]) -> BTreeMap<(String, String), Takeover> {
    let mut out = BTreeMap::new();
    for e in entries {
        if let Some(t) = Takeover::of(e) {
            out.insert((e.record.agent.clone(), e.record.session.clone()), t);
        }
    }
    out
}

/// The newest takeover of (agent, session) among `entries` that fences `writer` out: one by
/// another writer, in a pair where `writer` has written. `None` when `writer` may write.
pub fn fenced_out(entries: &[Entry], agent: &str, session: &str, writer: &str) -> Option<Takeover> {
    let pair: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.record.agent == agent && e.record.session == session)
        .collect();
    let owner = pair.iter().rev().find_map(|e| Takeover::of(e))?;
    let wrote = pair
        .iter()
        .any(|e| e.record.new_owner().is_none() && e.record.writer.as_deref() == Some(writer));
    (owner.owner != writer && wrote).then_some(owner)
}

/// The warning naming a fenced record, and who fenced it out.
pub fn fenced_warning(e: &Entry, owner: Option<&Takeover>) -> String {
    format!(
        "record {} ({} {}/{}, writer {}) is fenced: it was written after the session was taken \
         over{}; it is kept in history but never resumed from",
        e.record.id.as_deref().unwrap_or("(no id)"),
        e.record.kind().name(),
        e.record.agent,
        e.record.session,
        e.record.writer.as_deref().unwrap_or("unknown"),
        owner
            .map(|o| format!(": {}", o.describe()))
            .unwrap_or_default(),
    )
}
