//! The summary's fold: the newest accepted record per (agent, session, kind), and each pair's
//! newest record `Id`, built one slot at a time in comment id order, holding only what can still
//! be the newest of some key, not every record of the thread.
//!
//! The thread's order (`scan/order.rs`) sorts records by their place, and within one second by
//! lineage, which depends on every record of that second. So the fold keeps, whole, the records
//! of each second that is some key's newest second (and of the seconds still open: an original
//! is never placed before the originals ahead of it, so they are the seconds from the newest
//! original's on); the records of other seconds are dropped as the fold goes. At the end, each
//! kept second is sorted as the whole thread would sort it, and its last record of a key is that
//! key's newest. A record of a second already dropped that would become its key's newest (a copy
//! carried from long ago, rare) makes the fold inexact: the caller then summarizes the whole
//! thread (`Summary::of_whole`), so no answer is ever built from a guess.
//!
//! Dedupe (the first record of an `Id` counts, a later copy is a duplicate) keeps the 16-byte
//! key of each `Id` the id index writes anyway, not the `Id`s. So a later copy cannot be told
//! from a conflict (a copy that says something else, which answers warn of): a thread with a
//! copy is summarized whole (`Summary::of_whole`), which tells them apart.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::lines::Lines;
use super::{IdKey, Role, id_key, inline, role};
use crate::format::Kind;
use crate::mirror::files::Data;
use crate::mirror::slot::Slot;
use crate::scan::{Place, Posting, Trust, place, sort_keyed};

/// A key the fold finds the newest record of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// The table's key: (agent, session, kind).
    Kind(Arc<str>, Arc<str>, Kind),
    /// A pair's newest record with an `Id` (its lineage line's `latest`).
    Pair(Arc<str>, Arc<str>),
}

/// One accepted record kept as a candidate.
struct Entry {
    /// The slot's index in the thread.
    n: usize,
    kind: Key,
    /// The pair's key, when the record has an `Id`.
    pair: Option<Key>,
}

/// What the fold has made of the thread so far.
pub(super) struct Fold<'a> {
    data: Option<&'a Data>,
    trust: &'a Trust,
    first_signed: Option<u64>,
    /// The accepted records' `Id`s, as the id index keeps them.
    pub(super) ids: HashSet<IdKey, BuildHasherDefault<Prefix>>,
    /// The accepted records without an `Id`, by what makes their copies the same record.
    same: HashSet<[u8; 32]>,
    /// The latest first posting among the originals so far (`scan/order.rs`).
    latest_original: Option<DateTime<Utc>>,
    /// The kept records, by the whole second of their place.
    seconds: BTreeMap<i64, Vec<(Place, Posting, Entry)>>,
    /// Each key's newest second.
    tops: HashMap<Key, i64>,
    /// The seconds before this one hold only what some key's newest second holds.
    floor: Option<i64>,
    kept: usize,
    tidy_at: usize,
    /// A record of a dropped second would have been its key's newest, or the slots came out
    /// of comment id order.
    inexact: bool,
    /// The comment id of the last slot folded in.
    last: Option<u64>,
    pub(super) lines: Lines,
    pub(super) unsigned: usize,
    pub(super) rejected: Vec<Slot>,
}

/// Hashes an [`IdKey`] (already a SHA-256 prefix) by folding its words: no hashing again for
/// each record `Id` of the thread.
#[derive(Default)]
pub(super) struct Prefix(u64);

impl Hasher for Prefix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Whatever is written (a key's length, then its bytes) is folded in, eight bytes at a
        // time: the key's bytes are already evenly spread.
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }
}

/// What the fold found: the slot index of each key's newest record, by comment id, and each
/// (agent, session)'s newest record with an `Id`, by slot index.
pub(super) type Newest = (Vec<usize>, Vec<(Arc<str>, Arc<str>, usize)>);

/// The fold tidies its kept records when they pass this many (and twice what it kept after the
/// last tidy).
const TIDY_AT: usize = 4096;

impl<'a> Fold<'a> {
    /// A fold of a thread whose first validly signed record is comment `first_signed`.
    pub(super) fn new(data: Option<&'a Data>, trust: &'a Trust, first_signed: Option<u64>) -> Self {
        Fold {
            data,
            trust,
            first_signed,
            ids: HashSet::default(),
            same: HashSet::new(),
            latest_original: None,
            seconds: BTreeMap::new(),
            tops: HashMap::new(),
            floor: None,
            kept: 0,
            tidy_at: TIDY_AT,
            inexact: false,
            last: None,
            lines: Lines::default(),
            unsigned: 0,
            rejected: Vec::new(),
        }
    }

    /// Comment `id` holds a validly signed record: the thread's first, when none was folded
    /// before it (slots come in comment id order).
    pub(super) fn signed(&mut self, id: u64) {
        self.first_signed.get_or_insert(id);
    }

    /// The comment id of the thread's first validly signed record, as far as the fold knows.
    pub(super) fn first_signed(&self) -> Option<u64> {
        self.first_signed
    }

    /// Folds in slot `n` of the thread; slots come in comment id order (slots out of it make
    /// the fold inexact: the places of originals are decided in that order).
    pub(super) fn add(&mut self, n: usize, slot: &Slot) -> Result<(), String> {
        if self.last.is_some_and(|last| slot.i <= last) {
            self.inexact = true;
        }
        self.last = Some(slot.i);
        let ((agent, session, kind), id) = match role(slot, self.trust, self.first_signed) {
            Role::Ignored => return Ok(()),
            Role::Stale => {
                self.rejected.push(inline(slot, self.data)?);
                return Ok(());
            }
            Role::Record(key, id) => (key, id),
        };
        let posting = slot.posting_in(self.data)?;
        let first = match (&posting.id, posting.same) {
            (Some(id), _) => self.ids.insert(id_key(id)),
            (None, Some(same)) => self.same.insert(same),
            (None, None) => true,
        };
        if !first {
            // A duplicate: the first copy is the record. Whether it says what the first says
            // (a conflict, which answers warn of) only the whole thread can tell.
            self.inexact = true;
            return Ok(());
        }
        let mut info = slot.info_bare();
        slot.doubt(self.first_signed, &mut info);
        self.unsigned += usize::from(info.unsigned);
        self.lines
            .add(&agent, &session, posting.parent.clone(), None);
        let mut at = place(&info, &posting);
        if !at.copy {
            // As `sort_keyed` does: never before an original ahead of it in comment id order.
            let latest = self
                .latest_original
                .map_or(at.first_posted, |t| t.max(at.first_posted));
            at.first_posted = latest;
            self.latest_original = Some(latest);
        }
        let second = at.first_posted.timestamp();
        let pair = id.map(|_| Key::Pair(agent.clone(), session.clone()));
        let kind = Key::Kind(agent, session, kind);
        let raises = |key: &Key| self.tops.get(key).is_none_or(|&top| second >= top);
        let newest = raises(&kind) || pair.as_ref().is_some_and(raises);
        let dropped = self.floor.is_some_and(|f| second < f) && !self.seconds.contains_key(&second);
        if dropped {
            // This second's other records are gone: only the whole thread can place it.
            self.inexact |= newest;
            return Ok(());
        }
        for key in std::iter::once(&kind).chain(&pair) {
            // Looked up first: a key is copied once, not once a record.
            match self.tops.get_mut(key) {
                Some(top) => *top = (*top).max(second),
                None => {
                    self.tops.insert(key.clone(), second);
                }
            }
        }
        // Most seconds hold one record: a new one's list starts with room for one, not four.
        self.seconds
            .entry(second)
            .or_insert_with(|| Vec::with_capacity(1))
            .push((at, posting, Entry { n, kind, pair }));
        self.kept += 1;
        if self.kept > self.tidy_at {
            self.tidy();
        }
        Ok(())
    }

    /// Drops the seconds before the newest original's that are no key's newest.
    fn tidy(&mut self) {
        if let Some(latest) = self.latest_original {
            let floor = latest.timestamp();
            let tops: HashSet<i64> = self.tops.values().copied().collect();
            self.seconds
                .retain(|second, _| *second >= floor || tops.contains(second));
            self.floor = Some(floor);
        }
        self.kept = self.seconds.values().map(Vec::len).sum();
        self.tidy_at = TIDY_AT.max(self.kept.saturating_mul(2));
    }

    /// The slot index of each key's newest record, by comment id, and the slot index of each
    /// pair's newest record with an `Id`; `None` when the fold is inexact.
    pub(super) fn newest(&mut self) -> Option<Newest> {
        if self.inexact {
            return None;
        }
        let tops = std::mem::take(&mut self.tops);
        let wanted: HashSet<i64> = tops.values().copied().collect();
        let mut table: HashMap<Key, usize> = HashMap::new();
        let mut pairs: HashMap<Key, usize> = HashMap::new();
        for (second, records) in std::mem::take(&mut self.seconds) {
            if !wanted.contains(&second) {
                continue;
            }
            // This second in the thread's order: its last record of a key is the key's newest.
            for entry in sort_keyed(records) {
                if tops.get(&entry.kind) == Some(&second) {
                    table.insert(entry.kind, entry.n);
                }
                if let Some(pair) = entry.pair
                    && tops.get(&pair) == Some(&second)
                {
                    pairs.insert(pair, entry.n);
                }
            }
        }
        let mut picked: Vec<usize> = table.into_values().collect();
        picked.sort_unstable();
        let lines = pairs
            .into_iter()
            .filter_map(|(key, n)| match key {
                Key::Pair(agent, session) => Some((agent, session, n)),
                Key::Kind(..) => None,
            })
            .collect();
        Some((picked, lines))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use chrono::{DateTime, Duration, Utc};
    use serde_json::json;

    use super::super::Summary;
    use crate::format::{Record, Renderer};
    use crate::mirror::slot::Slot;
    use crate::scan::Trust;
    use crate::store::Comment;

    /// A small deterministic generator (no dependency for it).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    fn id(k: u64) -> String {
        format!("00000000-0000-7000-8000-{k:012x}")
    }

    fn at(second: i64, nanos: u32) -> DateTime<Utc> {
        DateTime::from_timestamp(1_780_000_000 + second, nanos).expect("a time")
    }

    /// A thread of `n` comments, with `copies` of old records carried late: records of three
    /// agents and sessions over every kind, many in one second, a lineage that runs against
    /// the comment order within a second, forks, a takeover, duplicate `Id`s, records without
    /// an `Id` posted twice, a clock that steps back, people's comments and broken records.
    fn thread(n: u64, seed: u64, carry_old: bool) -> Vec<Slot> {
        (comments(n, seed, carry_old).into_iter())
            .map(|c| Slot::of(c, true, None).expect("a slot"))
            .collect()
    }

    /// The comments of [`thread`], by `ca-bot`, in comment id order.
    pub(in crate::mirror::summary) fn comments(n: u64, seed: u64, carry_old: bool) -> Vec<Comment> {
        let renderer = Renderer::embedded().expect("the embedded templates");
        let mut rng = Lcg(seed);
        let mut slots = Vec::new();
        let mut posted: Vec<(Record, DateTime<Utc>)> = Vec::new();
        let mut second = 0i64;
        let mut next_id = 0u64;
        // The pair's newest `Id`, by pair.
        let mut newest: std::collections::HashMap<(String, String), String> = Default::default();
        let mut i = 0u64;
        // The second comment of a pair whose first names it as its `Parent:`.
        let mut queued: Option<(DateTime<Utc>, String)> = None;
        while i < n {
            if let Some((created, body)) = queued.take() {
                slots.push(comment(1000 + i, created, created, body));
                i += 1;
                continue;
            }
            if rng.below(4) == 0 {
                second += 1 + rng.below(3) as i64;
            }
            // A clock that steps back a little, now and then.
            let created = match rng.below(50) {
                0 => at(second - 2, 0),
                _ => at(second, rng.below(1_000_000) as u32 * 1000),
            };
            let agent = ["w1", "w2", "w3"][rng.below(3) as usize];
            let session = ["s1", "s2"][rng.below(2) as usize];
            let pair = (agent.to_string(), session.to_string());
            let roll = rng.below(100);
            let body = match roll {
                0..=2 => "a person's comment".to_string(),
                3 => "[CHECKPOINT]\nnot a record".to_string(),
                4..=7 if !posted.is_empty() => {
                    // A copy of an older record: carried (with `Posted-At:`) or posted again.
                    let back = if carry_old {
                        rng.below(posted.len() as u64) as usize
                    } else {
                        posted.len() - 1 - rng.below(posted.len().min(3) as u64) as usize
                    };
                    let (mut record, first) = posted[back].clone();
                    if rng.below(2) == 0 {
                        record.posted_at = Some(first);
                    }
                    renderer.render(&record).expect("a rendered copy")
                }
                8..=10 => {
                    // A seed 003 record without an `Id`, sometimes posted twice.
                    let mut record = Record::checkpoint(
                        agent,
                        session,
                        &format!("old_{}", rng.below(4)),
                        json!({}),
                    )
                    .expect("a record");
                    record.version = crate::format::SEED_VERSION.into();
                    record.id = None;
                    record.time = at(second, 0);
                    renderer.render(&record).expect("a rendered record")
                }
                12..=15 => {
                    // Two records of one key in one second, the first naming the second as its
                    // parent: the thread's order puts the first after the second.
                    next_id += 2;
                    let (child, parent) = (id(next_id - 1), id(next_id));
                    let early = at(second, 1000);
                    let late = at(second, 999_000_000);
                    let mut first =
                        Record::checkpoint(agent, session, &format!("child_{i}"), json!({}))
                            .expect("a checkpoint");
                    first.id = Some(child.clone());
                    first.parent = Some(parent.clone());
                    first.time = early;
                    let mut second_record =
                        Record::checkpoint(agent, session, &format!("parent_{i}"), json!({}))
                            .expect("a checkpoint");
                    second_record.id = Some(parent);
                    second_record.parent = newest.get(&pair).cloned();
                    second_record.time = late;
                    newest.insert(pair.clone(), child);
                    posted.push((first.clone(), early));
                    posted.push((second_record.clone(), late));
                    queued = Some((late, renderer.render(&second_record).expect("a record")));
                    slots.push(comment(
                        1000 + i,
                        early,
                        early,
                        renderer.render(&first).expect("a record"),
                    ));
                    i += 1;
                    continue;
                }
                16..=17 if carry_old && second > 10 => {
                    // A record carried from an issue this read does not see, first posted long
                    // ago, of a session nobody else writes: the newest of its key.
                    next_id += 1;
                    let first = at(rng.below(second as u64 - 5) as i64, 0);
                    let mut record = Record::checkpoint(
                        "w4",
                        &format!("c{i}"),
                        &format!("carried_{i}"),
                        json!({}),
                    )
                    .expect("a checkpoint");
                    record.id = Some(id(next_id));
                    record.posted_at = Some(first);
                    record.time = first;
                    renderer.render(&record).expect("a carried record")
                }
                11 => {
                    let record =
                        Record::takeover(agent, session, "w9", newest.get(&pair).cloned(), None)
                            .expect("a takeover");
                    let mut record = record;
                    next_id += 1;
                    record.id = Some(id(next_id));
                    record.time = created;
                    newest.insert(pair.clone(), id(next_id));
                    posted.push((record.clone(), created));
                    renderer.render(&record).expect("a rendered takeover")
                }
                _ => {
                    let mut record = match rng.below(3) {
                        0 => Record::health(agent, session, "ok", json!({"i": i}), None)
                            .expect("a health record"),
                        _ => Record::checkpoint(
                            agent,
                            session,
                            &format!("step_{i}"),
                            json!({"i": i}),
                        )
                        .expect("a checkpoint"),
                    };
                    next_id += 1;
                    record.id = Some(id(next_id));
                    record.time = created;
                    // Its parent: the pair's newest (a line), an older one (a fork), or the
                    // record the next comment holds (a lineage against the comment order).
                    record.parent = match rng.below(10) {
                        0 => Some(id(next_id + 1)),
                        1 if next_id > 3 => Some(id(next_id - 3)),
                        2 => None,
                        _ => newest.get(&pair).cloned(),
                    };
                    newest.insert(pair.clone(), id(next_id));
                    posted.push((record.clone(), created));
                    renderer.render(&record).expect("a rendered record")
                }
            };
            let updated = created + Duration::seconds(i64::from(rng.below(20) == 0));
            slots.push(comment(1000 + i, created, updated, body));
            i += 1;
        }
        slots
    }

    fn comment(id: u64, created: DateTime<Utc>, updated: DateTime<Utc>, body: String) -> Comment {
        Comment {
            id,
            author: "ca-bot".into(),
            created_at: created,
            updated_at: updated,
            url: Some(format!(
                "https://forge/o/r/issues/{}#issuecomment-{id}",
                1 + id / 4000
            )),
            body,
        }
    }

    fn both(slots: &[Slot], trust: &Trust) -> (String, String) {
        let (fold, mut fold_ids) = Summary::of(slots, None, trust).expect("a folded summary");
        let (whole, mut whole_ids) = Summary::of_whole(slots, None, trust).expect("a summary");
        fold_ids.sort_unstable();
        whole_ids.sort_unstable();
        whole_ids.dedup();
        assert_eq!(fold_ids, whole_ids, "the id index holds the same `Id`s");
        (
            serde_json::to_string_pretty(&fold).expect("json"),
            serde_json::to_string_pretty(&whole).expect("json"),
        )
    }

    #[test]
    fn the_fold_summarizes_as_the_whole_thread_does() {
        let trust = Trust::Everyone;
        for (n, seed) in [(40, 1), (300, 2), (300, 3), (2000, 4), (9000, 5)] {
            let slots = thread(n, seed, false);
            let (fold, whole) = both(&slots, &trust);
            assert_eq!(fold, whole, "{n} comments, seed {seed}");
        }
        let only = Trust::Only(["nobody".to_string()].into());
        let (fold, whole) = both(&thread(300, 6, false), &only);
        assert_eq!(
            fold, whole,
            "an untrusted author's records are nobody's newest"
        );
    }

    #[test]
    fn slots_out_of_comment_id_order_are_summarized_whole() {
        let mut slots = thread(300, 9, false);
        // Two comments swapped in the list.
        slots.swap(100, 200);
        let (fold, whole) = both(&slots, &Trust::Everyone);
        assert_eq!(fold, whole);
    }

    #[test]
    fn a_copy_carried_from_a_folded_second_is_summarized_whole() {
        // Copies of records from anywhere in the thread, carried late: some land in seconds the
        // fold has dropped, and only the whole thread places them.
        for seed in [7, 8] {
            let slots = thread(9000, seed, true);
            let (fold, whole) = both(&slots, &Trust::Everyone);
            assert_eq!(fold, whole, "seed {seed}");
        }
    }
}
