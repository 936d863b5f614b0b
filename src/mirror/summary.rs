//! The mirror's summary: what a `latest` or `resume` needs, kept in the delta file so a warm read
//! of those verbs never loads the base's index (which grows with the thread).
//!
//! It holds the newest accepted record per (agent, session, kind), with its data inline; the
//! comments whose failure to read may make an answer stale (invalid, too large, unreadable); the
//! comments the inclusive `since` boundary sends again (`tail`); and the record `Id`s not yet in
//! the base's id index (`recent`). The id index (`<key>.mirror-ids`) is written with each base:
//! the base's generation, then the sorted first 16 bytes of each record `Id`'s SHA-256, searched
//! by seeking, so a lookup costs O(log N) small reads and nothing is loaded whole.
//!
//! It is derived from the base and the delta in the same write as the delta, so it is never out
//! of step with them. A warm read that cannot extend it exactly (an edited older comment, a
//! record `Id` seen before, another thread, other trusted authors) reads the whole mirror.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::deleted::OnIssues;
use super::files::{Data, Files};
use super::slot::{Blob, Body, Slot};
use super::slots::Slots;
use crate::format::{Kind, ParseError, parse};
use crate::fsutil::NotOurs;
use crate::scan::{Parsed, Trust, classify};

mod fold;
mod lines;
mod stream;

pub(in crate::mirror) use lines::Line;
use lines::{Lines, parent_of};
pub(in crate::mirror) use stream::Streamed;
use stream::{Extra, Folding};

/// Bytes per entry of the id index.
const ID_BYTES: usize = 16;

/// The summary, as kept in the delta file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Summary {
    /// The newest comment id the summary covers.
    pub max_id: u64,
    /// The newest accepted record per (agent, session, kind), data inline, by comment id.
    pub table: Vec<Slot>,
    /// Comments that may make an answer stale (invalid, too large, unreadable), by comment id.
    pub rejected: Vec<Slot>,
    /// Every comment updated in the newest second the summary saw: a `since` read sends them
    /// again, and an unchanged copy is not an edit.
    pub tail: Vec<Slot>,
    /// Accepted record `Id`s that the id index of this generation does not hold.
    pub recent: Vec<String>,
    /// Each (agent, session)'s lineage, as far as `resume` needs it.
    #[serde(default)]
    pub lines: Vec<Line>,
    /// Whether `lines` were computed (a summary written before them has none).
    #[serde(default)]
    pub lined: bool,
    /// The head's comment count the whole read last checked the mirror against (see
    /// [`crate::store::Thread::comment_count`]): a warm read seeing another count leaves the
    /// deletion check to the whole read.
    #[serde(default)]
    pub checked: Option<Checked>,
    /// How many comments the mirror holds on each issue, `(issue, comments)` by issue: what a
    /// warm read checks the head's comment count against (`deleted.rs`). `None` in a summary
    /// written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Vec<(u64, u64)>>,
    /// `(issue, n)`: the forge counted `n` fewer comments on that head than its whole list
    /// held, when a resync for a lower count found the count lower still (a count gone out of
    /// step with the comments): the deletion check allows for them (`deleted.rs`), so a warm
    /// read does not resync on every read. Kept until the next full read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excess: Option<(u64, u64)>,
    /// The comment id of the thread's first validly signed record (with signing keys): an
    /// unsigned record after it is refused (`crate::scan::gated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_signed: Option<u64>,
    /// How many accepted records carry no signature (believed: before the first signed one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unsigned: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A [`crate::store::CommentCount`] as the summary keeps it: issue, count, milliseconds.
pub(super) type Checked = (u64, u64, i64);

/// The count `thread` last read, as the summary keeps it.
pub(super) fn checked(count: Option<crate::store::CommentCount>) -> Option<Checked> {
    count.map(|c| (c.issue, c.count, c.at.timestamp_millis()))
}

/// A record's (agent, session, kind): the summary's table keeps the newest of each.
pub(super) type RecordKey = (Arc<str>, Arc<str>, Kind);

/// What a slot means to the summary.
pub(super) enum Role {
    /// An accepted record of this (agent, session, kind), with its record `Id`.
    Record(RecordKey, Option<String>),
    /// Not a record, or an untrusted author's: nothing for an answer.
    Ignored,
    /// May make an answer stale.
    Stale,
}

/// What [`Role`] a slot plays under `trust` (dedupe aside: see [`crate::scan::classify`]), in a
/// thread whose first validly signed record is comment `first_signed`: a record not believed
/// (its signature missing or wrong) may make an answer stale.
pub(super) fn role(slot: &Slot, trust: &Trust, first_signed: Option<u64>) -> Role {
    if matches!(slot.b, Body::N) {
        return Role::Ignored;
    }
    // An unreadable comment whose poster could not be read may be anyone's, a trusted
    // author's included: stale, as the scan counts it (`crate::scan::unread_newer`).
    let nobody = slot.a.is_empty() && matches!(slot.b, Body::U(_));
    if !trust.allows(&slot.a) && !nobody {
        return Role::Ignored;
    }
    match &slot.b {
        Body::R(..) if slot.refused(first_signed) => Role::Stale,
        Body::R(head, _) => {
            let key = (head.agent().clone(), head.session().clone(), head.kind());
            Role::Record(key, head.id.clone())
        }
        Body::I(body) => match parse(body) {
            Ok(r) => Role::Record(
                (r.agent.as_str().into(), r.session.as_str().into(), r.kind()),
                r.id,
            ),
            Err(ParseError::NoMarker) => Role::Ignored,
            Err(_) => Role::Stale,
        },
        Body::N => Role::Ignored,
        Body::S | Body::U(_) | Body::L(..) | Body::Lh(..) => Role::Stale,
    }
}

/// The whole record a slot holds (its data read from `data` when the base holds it).
fn record_of(slot: &Slot, data: Option<&Data>) -> Result<crate::format::Record, String> {
    match inline(slot, data)?.b {
        Body::R(head, Blob::In(raw)) => serde_json::from_str(raw.get())
            .map(|data| head.record(data))
            .map_err(|e| format!("a record's data does not read: {e}")),
        Body::I(body) => parse(&body).map_err(|e| e.to_string()),
        _ => Err("not a record".into()),
    }
}

/// A slot with its record's data inline (read from `data` when the base holds it).
pub(super) fn inline(slot: &Slot, data: Option<&Data>) -> Result<Slot, String> {
    let mut slot = slot.clone();
    if let Body::R(_, blob @ Blob::At(..)) = &mut slot.b {
        let Blob::At(off, len, sum) = *blob else {
            return Err("a record's data moved".into());
        };
        let data = data.ok_or("a record's data is in a base that is gone")?;
        let raw = String::from_utf8(data.checked(off, len, sum)?)
            .map_err(|e| format!("a record's data is not text: {e}"))?;
        *blob = Blob::In(
            serde_json::value::RawValue::from_string(raw)
                .map_err(|e| format!("a record's data does not read: {e}"))?,
        );
    }
    Ok(slot)
}

impl Summary {
    /// The summary of `slots` (the whole mirror, by comment id) under `trust`, and every
    /// accepted record `Id` (for the id index): folded one slot at a time (`fold.rs`), holding
    /// only each key's candidates for newest; the whole thread is classified only when the fold
    /// cannot be exact.
    pub fn of<S: Slots + ?Sized>(
        slots: &S,
        data: Option<&Data>,
        trust: &Trust,
    ) -> Result<(Summary, Vec<[u8; ID_BYTES]>), String> {
        let first_signed = slots.first_signed()?;
        let mut folding = Folding::new(data, trust, first_signed);
        slots.each(&mut |slot| {
            folding.fold(slot)?;
            folding.tail(slot);
            Ok(())
        })?;
        match folding.finish(slots, data, trust, &Extra::default())? {
            Some(made) => Ok(made),
            None => {
                tracing::debug!(
                    "a record carried from a second already folded: summarizing it whole"
                );
                Summary::of_whole(&slots.whole()?, data, trust)
            }
        }
    }

    /// [`Summary::of`] by classifying the whole thread at once (`scan::classify`), the rule the
    /// fold follows.
    pub fn of_whole(
        slots: &[Slot],
        data: Option<&Data>,
        trust: &Trust,
    ) -> Result<(Summary, Vec<[u8; ID_BYTES]>), String> {
        // The one copy of trust and dedupe decides what is accepted.
        let first_signed = super::slot::first_signed(slots);
        // A record whose data cannot be read back fails the summary (after the classify).
        let mut failed = None;
        let parsed = slots.iter().enumerate().map(|(n, slot)| {
            // Trust is decided by `role` (classify trusts everyone here) and the order needs
            // no author or address: a long thread's are not copied.
            let mut info = slot.info_bare();
            slot.doubt(first_signed, &mut info);
            let outcome = match role(slot, trust, first_signed) {
                Role::Record(..) => match slot.posting_in(data) {
                    Ok(posting) => Parsed::Record(posting, n),
                    Err(e) => {
                        failed.get_or_insert(e);
                        Parsed::Skipped
                    }
                },
                Role::Ignored => Parsed::NoMarker,
                Role::Stale => Parsed::Skipped,
            };
            (info, outcome)
        });
        // A later copy of a record `Id` that says something else: answers must warn of it,
        // which only a read of the whole mirror does (the summary keeps no duplicate).
        let conflict = std::cell::Cell::new(false);
        let differs = |&first: &usize, &copy: &usize| {
            let (Ok(first), Ok(copy)) = (
                record_of(&slots[first], data),
                record_of(&slots[copy], data),
            ) else {
                return None;
            };
            let differs = crate::scan::differs(&first, &copy);
            conflict.set(conflict.get() || differs.is_some());
            differs
        };
        let (accepted, _) = classify(parsed, Vec::new(), &Trust::Everyone, &differs);
        if let Some(e) = failed {
            return Err(e);
        }
        if conflict.get() {
            return Err("two comments hold one record Id and say different things".into());
        }
        let mut newest: std::collections::HashMap<RecordKey, usize> =
            std::collections::HashMap::new();
        let mut ids: Vec<[u8; ID_BYTES]> = Vec::with_capacity(accepted.len());
        let mut lines = Lines::default();
        let mut unsigned = 0;
        for (info, n) in accepted {
            unsigned += usize::from(info.unsigned);
            if let Role::Record(key, id) = role(&slots[n], trust, first_signed) {
                lines.add(&key.0, &key.1, parent_of(&slots[n]), id.as_deref());
                newest.insert(key, n);
                ids.extend(id.as_deref().map(id_key));
            }
        }
        let mut picked: Vec<usize> = newest.into_values().collect();
        // The table is kept by comment id (as every slot list of the mirror is); which record
        // is newest was decided above, in the thread's order.
        picked.sort_unstable();
        let table = picked
            .into_iter()
            .map(|n| inline(&slots[n], data))
            .collect::<Result<Vec<_>, _>>()?;
        let rejected = slots
            .iter()
            .filter(|s| matches!(role(s, trust, first_signed), Role::Stale))
            .map(|s| inline(s, data))
            .collect::<Result<Vec<_>, _>>()?;
        let mut held = OnIssues::default();
        slots.iter().for_each(|s| held.add(s));
        let mut summary = Summary {
            held: Some(held.into_pairs()),
            max_id: slots.last().map_or(0, |s| s.i),
            table,
            rejected,
            lines: lines.finish(),
            lined: true,
            first_signed,
            unsigned,
            ..Summary::default()
        };
        summary.tail = tail_of(slots.iter(), data)?;
        Ok((summary, ids))
    }

    /// This summary, checked against the head's comment count `count`.
    pub fn checked_at(mut self, count: Option<Checked>) -> Summary {
        self.checked = count;
        self
    }

    /// This summary, allowing for `excess` (see [`Summary::excess`]).
    pub fn allowing(mut self, excess: Option<(u64, u64)>) -> Summary {
        self.excess = excess;
        self
    }

    /// How many comments the mirror holds on issue `n`, less those its count is known to
    /// lack; `None` in a summary kept without per-issue counts.
    pub fn held_on(&self, n: u64) -> Option<u64> {
        let held = super::deleted::OnIssues::from_pairs(self.held.as_deref()?).on(n);
        let excess = self
            .excess
            .filter(|(issue, _)| *issue == n)
            .map_or(0, |e| e.1);
        Some(held.saturating_sub(excess))
    }

    /// The slots an answer is built from: the table and the stale ones, by comment id.
    pub fn slots(&self) -> Vec<Slot> {
        let mut all: Vec<Slot> = self.table.iter().chain(&self.rejected).cloned().collect();
        all.sort_by_key(|s| s.i);
        all.dedup_by_key(|s| s.i);
        all
    }
}

/// The summary of `slots` (the whole mirror of base `generation`), writing the base's id index
/// when `delta` is `None` (a new base) or when this generation has none: `delta` are the slots
/// kept beside the base, whose record `Id`s the summary lists itself. `None` when it cannot be
/// built (logged): the next `latest` or `resume` then reads the whole mirror again.
pub(super) fn summarize<S: Slots + ?Sized>(
    files: &Files,
    generation: &str,
    slots: &S,
    data: Option<&Data>,
    trust: &Trust,
    delta: Option<&[Slot]>,
    stream: Option<Streamed>,
) -> Option<Summary> {
    let streamed = match stream {
        Some(stream) => stream.finish(slots, data, trust).transpose(),
        None => None,
    };
    let built = streamed.unwrap_or_else(|| Summary::of(slots, data, trust));
    let built = built.and_then(|(mut sum, ids)| {
        let indexed = delta.is_some() && IdIndex::open(&files.ids, generation).is_some();
        match delta {
            Some(kept) if indexed => {
                sum.recent = kept
                    .iter()
                    .filter_map(|s| match role(s, trust, sum.first_signed) {
                        Role::Record(_, id) => id,
                        _ => None,
                    })
                    .collect();
            }
            _ => write_ids(&files.ids, generation, ids)?,
        }
        Ok(sum)
    });
    match built {
        Ok(sum) => Some(sum),
        Err(e) => {
            tracing::debug!("cannot summarize the read cache: {e}");
            None
        }
    }
}

/// The slots updated in the newest second among `slots`, data inline.
pub(super) fn tail_of<'a>(
    slots: impl Iterator<Item = &'a Slot> + Clone,
    data: Option<&Data>,
) -> Result<Vec<Slot>, String> {
    let Some(newest) = slots.clone().map(|s| s.u.0.timestamp()).max() else {
        return Ok(Vec::new());
    };
    let mut tail = slots
        .filter(|s| s.u.0.timestamp() >= newest)
        .map(|s| inline(s, data))
        .collect::<Result<Vec<_>, _>>()?;
    tail.sort_by_key(|s| s.i);
    tail.dedup_by_key(|s| s.i);
    Ok(tail)
}

/// One record `Id` as the index (and [`Held`]) keeps it.
pub(super) type IdKey = [u8; ID_BYTES];

/// One record `Id` as the index keeps it.
pub(super) fn id_key(id: &str) -> IdKey {
    let hash = Sha256::digest(id.as_bytes());
    let mut key = [0; ID_BYTES];
    key.copy_from_slice(&hash[..ID_BYTES]);
    key
}

/// Writes the id index of base `generation`, holding `ids`, by rename: unsynced where the base
/// is stamped with its boot (`boot.rs`), since only a base readable in this boot names it.
pub(super) fn write_ids(
    path: &Path,
    generation: &str,
    mut keys: Vec<[u8; ID_BYTES]>,
) -> Result<(), String> {
    keys.sort_unstable();
    keys.dedup();
    let mut bytes = Vec::with_capacity(generation.len() + 1 + keys.len() * ID_BYTES);
    bytes.extend_from_slice(generation.as_bytes());
    bytes.push(b'\n');
    for k in keys {
        bytes.extend_from_slice(&k);
    }
    super::boot::write_file(path, |w| std::io::Write::write_all(w, &bytes))
}

/// The id index of one base generation, open for lookups.
#[derive(Debug)]
pub(crate) struct IdIndex {
    file: Mutex<File>,
    start: u64,
    count: u64,
}

impl IdIndex {
    /// Opens the index at `path` when it belongs to base `generation`, is ours and is whole.
    pub(super) fn open(path: &Path, generation: &str) -> Option<IdIndex> {
        let mut file = match crate::fsutil::open_private(path) {
            Ok(f) => f,
            Err(e) => {
                if NotOurs::is(&e) {
                    tracing::warn!(
                        "ignoring the read cache {}: it is owned by another user, or writable \
                         by others",
                        path.display()
                    );
                }
                return None;
            }
        };
        let mut head = vec![0; generation.len() + 1];
        file.read_exact(&mut head).ok()?;
        if &head[..generation.len()] != generation.as_bytes() || head[generation.len()] != b'\n' {
            return None;
        }
        let len = file.metadata().ok()?.len();
        let start = head.len() as u64;
        let body = len.checked_sub(start)?;
        if body % ID_BYTES as u64 != 0 {
            return None;
        }
        Some(IdIndex {
            file: Mutex::new(file),
            start,
            count: body / ID_BYTES as u64,
        })
    }

    /// Whether the index holds `id`; `None` when the file cannot be read.
    pub fn holds(&self, id: &str) -> Option<bool> {
        let key = id_key(id);
        let mut file = self.file.lock().ok()?;
        let (mut lo, mut hi) = (0u64, self.count);
        let mut buf = [0; ID_BYTES];
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            file.seek(SeekFrom::Start(self.start + mid * ID_BYTES as u64))
                .ok()?;
            file.read_exact(&mut buf).ok()?;
            match buf.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(true),
            }
        }
        Some(false)
    }
}

/// The record `Id`s the thread holds, as a read knows them: a set, or (a warm read through the
/// summary) the set of the summary's own plus the id index.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// As [`id_key`]s: a long thread's `Id`s are not copied.
    pub(super) set: HashSet<IdKey>,
    pub(super) index: Option<IdIndex>,
}

impl Held {
    /// Whether the thread holds a record with `id`. In doubt (the index cannot be read), no:
    /// the pending copy of a record is then shown rather than none.
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.set.contains(&id_key(id))
            || self
                .index
                .as_ref()
                .is_some_and(|i| i.holds(id).unwrap_or(false))
    }
}
