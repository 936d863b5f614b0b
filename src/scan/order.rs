//! The one ordering rule of a thread's records: by first posting, then by lineage.
//!
//! A record's place is decided by when its original was first posted: its `Posted-At:` (a copy
//! that a rotation, tidy or import posted again), else the time of the comment that holds it,
//! on the store's clock, never earlier than the originals before it in comment id order (so
//! originals keep the store's order whatever the clock did). Within one second, where a forge's times cannot tell two posts apart, a
//! record comes after the record its `Parent:` names; then a copy comes before an original (its
//! own original was posted before it was copied); between two copies, the record's `Time:`
//! (their comments were posted later, in any order); then the comment id decides (the store's
//! own order). The position of a copy never decides: a copy posted late, after records first
//! posted later than its original, still ranks before them. Records waiting in this machine's
//! outbox are not placed here: they come after the thread's own (see
//! [`crate::scan::add_pending`]).
//!
//! Every answer that picks "the newest" (resume, latest, status, history, watch, the read
//! cache's summary) reads records in this order, so they all agree.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use chrono::{DateTime, Utc};

/// What the rule needs to know of a record beyond its comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Posting {
    /// The record's `Posted-At:`, on a copy.
    pub first: Option<DateTime<Utc>>,
    /// The record's `Id`.
    pub id: Option<String>,
    /// A record without an `Id`: what makes it the same record as another (its kind, agent,
    /// session, time and payload, `format/identity.rs`), so that its copies count once.
    pub same: Option<[u8; 32]>,
    /// The record's `Parent:`.
    pub parent: Option<String>,
    /// The record's `Time:` (its writer's clock): between two copies first posted in the same
    /// second, the only trace of which came first (their comments were posted later, in any
    /// order).
    pub time: Option<DateTime<Utc>>,
}

/// Where a record stands: when its original was first posted, whether it is a copy, and its
/// comment id. Ordered by the whole second of the first posting, then copies before originals
/// (a copy's original was posted before the copy was made, and within one second a forge's
/// times cannot say whether before a record posted then), then the exact time, then the comment
/// id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// When the original was first posted (`Posted-At:`, else the comment's time).
    pub first_posted: DateTime<Utc>,
    /// The record is a copy (it has a `Posted-At:`).
    pub copy: bool,
    /// For a copy, its `Time:`; for an original, nothing (the comment id decides).
    pub written: Option<DateTime<Utc>>,
    /// The comment id (the store's order); `u64::MAX` for a record not posted yet.
    pub comment: u64,
}

impl Place {
    fn key(&self) -> (i64, bool, DateTime<Utc>, Option<DateTime<Utc>>, u64) {
        (
            self.second(),
            !self.copy,
            self.first_posted,
            self.written,
            self.comment,
        )
    }
}

impl Ord for Place {
    fn cmp(&self, other: &Place) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Place {
    fn partial_cmp(&self, other: &Place) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Place {
    /// The place of a record whose `Posted-At:` is `posted_at` in a comment created at
    /// `created` with id `comment` (`None`: waiting in the outbox).
    pub fn of(
        posted_at: Option<DateTime<Utc>>,
        created: DateTime<Utc>,
        comment: Option<u64>,
    ) -> Place {
        Place {
            first_posted: posted_at.map_or(created, |t| t.min(created)),
            copy: posted_at.is_some(),
            written: None,
            comment: comment.unwrap_or(u64::MAX),
        }
    }

    /// The same place, with the record's `Time:` `written`, which orders two copies first
    /// posted in the same second (an original is ordered by its comment id alone).
    pub fn written(mut self, written: DateTime<Utc>) -> Place {
        if self.copy {
            self.written = Some(written);
        }
        self
    }

    /// The whole second the place falls in: within it, lineage decides before comment ids.
    fn second(&self) -> i64 {
        self.first_posted.timestamp()
    }
}

/// Sorts `items` into the thread's order: by [`Place`], and within one second, each record after
/// the record its `Parent:` names, then by comment id. Stable for items the rule cannot tell
/// apart. The records of a lineage loop (records naming each other) come after the others of
/// their second, in comment id order.
pub(crate) fn sort_by_place<T>(items: &mut Vec<T>, key: impl Fn(&T) -> (Place, Posting)) {
    if items.len() < 2 {
        return;
    }
    let keyed: Vec<(Place, Posting, T)> = std::mem::take(items)
        .into_iter()
        .map(|item| {
            let (place, posting) = key(&item);
            (place, posting, item)
        })
        .collect();
    *items = sort_keyed(keyed);
}

/// [`sort_by_place`] of items already keyed by their place and posting (a long thread's items
/// then hold no second copy of each posting).
pub(crate) fn sort_keyed<T>(mut keyed: Vec<(Place, Posting, T)>) -> Vec<T> {
    if keyed.len() < 2 {
        return keyed.into_iter().map(|(_, _, item)| item).collect();
    }
    // An original is as late as the latest original before it in the store's order: a comment
    // id is the store's own account of which came first, so a clock that stepped back, or a
    // comment posted with an older time (an owner may set it, ENDPOINTS.md §3.11), never moves
    // an original before one posted ahead of it.
    sort_stable_by_key(&mut keyed, |(place, _, _)| place.comment);
    let mut latest: Option<DateTime<Utc>> = None;
    for (place, _, _) in keyed.iter_mut().filter(|(place, _, _)| !place.copy) {
        let at = latest.map_or(place.first_posted, |t| t.max(place.first_posted));
        place.first_posted = at;
        latest = Some(at);
    }
    sort_stable_by_key(&mut keyed, |(place, _, _)| *place);
    let mut out = Vec::with_capacity(keyed.len());
    let mut bucket = Vec::new();
    for entry in keyed {
        if bucket
            .last()
            .is_some_and(|(p, _, _): &(Place, Posting, T)| p.second() != entry.0.second())
        {
            by_lineage(&mut bucket, &mut out);
        }
        bucket.push(entry);
    }
    by_lineage(&mut bucket, &mut out);
    out
}

/// A stable sort of `items` by `key` that sorts indices, not the items: a stable sort's scratch
/// copy of large items is up to 8 MB (a thread's keyed records at 50k), of indices a few hundred
/// kilobytes. The items are then moved into place along the permutation's cycles.
fn sort_stable_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    let Ok(len) = u32::try_from(items.len()) else {
        items.sort_by_key(key);
        return;
    };
    let mut order: Vec<u32> = (0..len).collect();
    order.sort_by_key(|&i| key(&items[i as usize]));
    // `order[k]` is where the item that belongs at `k` is now.
    for start in 0..order.len() {
        let mut at = start;
        while order[at] as usize != start {
            let from = order[at] as usize;
            items.swap(at, from);
            order[at] = at as u32;
            at = from;
        }
        order[at] = at as u32;
    }
}

/// Emits one second's records (in place order) into `out`, each after its parent when the
/// parent is among them: Kahn's algorithm, the earliest place first among those ready.
fn by_lineage<T>(bucket: &mut Vec<(Place, Posting, T)>, out: &mut Vec<T>) {
    if bucket.len() < 2 || bucket.iter().all(|(_, p, _)| p.parent.is_none()) {
        out.extend(bucket.drain(..).map(|(_, _, item)| item));
        return;
    }
    let index: HashMap<&str, usize> = bucket
        .iter()
        .enumerate()
        .filter_map(|(n, (_, p, _))| p.id.as_deref().map(|id| (id, n)))
        .collect();
    // The parent (within the bucket) each record waits for, and who waits for each.
    let mut waits_on: Vec<Option<usize>> = vec![None; bucket.len()];
    let mut children: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (n, (_, posting, _)) in bucket.iter().enumerate() {
        if let Some(&parent) = posting.parent.as_deref().and_then(|p| index.get(p))
            && parent != n
        {
            waits_on[n] = Some(parent);
            children.entry(parent).or_default().push(n);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..bucket.len())
        .filter(|&n| waits_on[n].is_none())
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(bucket.len());
    let mut done = vec![false; bucket.len()];
    while order.len() < bucket.len() {
        let next = match ready.pop() {
            Some(Reverse(n)) => n,
            // A loop: take the earliest record not yet placed.
            None => match (0..bucket.len()).find(|&n| !done[n]) {
                Some(n) => n,
                None => break,
            },
        };
        if done[next] {
            continue;
        }
        done[next] = true;
        order.push(next);
        for &child in children.get(&next).map(Vec::as_slice).unwrap_or_default() {
            if !done[child] {
                ready.push(Reverse(child));
            }
        }
    }
    let mut taken: Vec<Option<T>> = bucket.drain(..).map(|(_, _, item)| Some(item)).collect();
    out.extend(order.into_iter().filter_map(|n| taken[n].take()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_sort_is_the_stable_sort() {
        // Many ties, in a scrambled order, and every length up to a few cycles long.
        for len in 0..40u64 {
            let items: Vec<(u64, u64)> = (0..len).map(|i| ((i * 7 + 3) % 5, i)).collect();
            let mut want = items.clone();
            want.sort_by_key(|(k, _)| *k);
            let mut got = items;
            sort_stable_by_key(&mut got, |(k, _)| *k);
            assert_eq!(got, want, "len {len}");
        }
    }

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap_or_default()
    }

    /// (name, posted-at, comment time, comment id, parent)
    type Row = (&'static str, Option<i64>, i64, u64, Option<&'static str>);

    fn sorted(rows: &[Row]) -> Vec<&'static str> {
        let mut items: Vec<Row> = rows.to_vec();
        sort_by_place(&mut items, |(name, posted, created, id, parent)| {
            (
                Place::of(posted.map(at), at(*created), Some(*id)),
                Posting {
                    first: posted.map(at),
                    id: Some(name.to_string()),
                    same: None,
                    parent: parent.map(str::to_string),
                    time: None,
                },
            )
        });
        items.into_iter().map(|r| r.0).collect()
    }

    #[test]
    fn a_late_copy_ranks_by_its_original_not_by_its_comment() {
        // p1 first posted at 0, carried (comment 9, at 700) after p2 was posted (comment 8).
        let order = sorted(&[
            ("p2", None, 600, 8, Some("p1")),
            ("p1", Some(0), 700, 9, None),
        ]);
        assert_eq!(order, ["p1", "p2"]);
    }

    #[test]
    fn within_one_second_a_record_follows_its_parent() {
        let order = sorted(&[
            ("b", None, 5, 10, Some("a")),
            ("a", Some(5), 5, 11, None),
            ("c", None, 5, 12, Some("b")),
        ]);
        assert_eq!(order, ["a", "b", "c"]);
    }

    #[test]
    fn within_one_second_a_copy_comes_before_an_original() {
        // p1 pruned and imported again (comment 20), p4 posted in the same second (comment 4).
        let order = sorted(&[("p4", None, 5, 4, None), ("p1", Some(5), 90, 20, None)]);
        assert_eq!(order, ["p1", "p4"]);
    }

    #[test]
    fn two_copies_of_one_second_go_by_their_time_lines() {
        // p3 carried by a rotation (comment 20), p2 imported after a prune (comment 25): both
        // first posted in second 5, their originals gone.
        let mut items = vec![("p3", 20u64, 3i64), ("p2", 25, 2)];
        sort_by_place(&mut items, |(name, comment, written)| {
            (
                Place::of(Some(at(5)), at(90), Some(*comment)).written(at(*written)),
                Posting {
                    first: Some(at(5)),
                    id: Some(name.to_string()),
                    ..Posting::default()
                },
            )
        });
        let order: Vec<&str> = items.iter().map(|i| i.0).collect();
        assert_eq!(order, ["p2", "p3"]);
    }

    #[test]
    fn otherwise_the_comment_id_decides() {
        let order = sorted(&[("x", None, 5, 12, None), ("y", None, 5, 11, None)]);
        assert_eq!(order, ["y", "x"]);
    }

    #[test]
    fn originals_keep_the_store_s_order_whatever_their_times_say() {
        // A clock that stepped back: comment 2 says it was posted before comment 1.
        let order = sorted(&[("later", None, 100, 2, None), ("first", None, 500, 1, None)]);
        assert_eq!(order, ["first", "later"]);
        // A copy still ranks by its original's time among them.
        let order = sorted(&[
            ("later", None, 100, 2, None),
            ("first", None, 500, 1, None),
            ("copy", Some(300), 900, 3, None),
        ]);
        assert_eq!(order, ["copy", "first", "later"]);
    }

    #[test]
    fn a_lineage_loop_falls_back_to_comment_ids() {
        let order = sorted(&[
            ("a", None, 5, 1, Some("b")),
            ("b", None, 5, 2, Some("a")),
            ("c", None, 5, 3, None),
        ]);
        assert_eq!(order, ["c", "a", "b"]);
    }

    #[test]
    fn a_posted_at_later_than_the_comment_never_moves_it_forward() {
        let order = sorted(&[
            ("forged", Some(900), 1, 1, None),
            ("real", None, 2, 2, None),
        ]);
        assert_eq!(order, ["forged", "real"]);
    }
}
