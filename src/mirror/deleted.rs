//! Noticing a comment deleted on the forge, which a `since` read cannot show: the head's
//! comment count ([`Thread::comment_count`](crate::store::Thread::comment_count), read with
//! every warm list) against how many of the head's comments the mirror holds. Every comment
//! the mirror held before a read existed when the count was read, unless it was deleted; so
//! did each comment the read brought that was created by the time the head last changed (the
//! count's `at`). More of them than the count means one of them is gone, and the read resyncs.
//!
//! The summary keeps how many comments the mirror holds on each issue ([`OnIssues`]), so a warm
//! read through it checks without the base. Only the head's count is read: a comment deleted on
//! an earlier issue of a rotated thread shows at the resync (`resync_after`). A count found
//! lower than the whole list right after a resync it caused is out of step with the comments
//! (a drifted database), not a deletion: the summary keeps the difference (`Summary::excess`)
//! until the next full read, so such a forge costs one resync, not one a read.

use std::collections::BTreeMap;

use super::slot::Slot;
use crate::store::{CommentCount, issue_in_url};

/// How many comments the mirror holds on each issue (its number), as the summary keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct OnIssues(BTreeMap<u64, u64>);

impl OnIssues {
    /// Counts `slot` on its issue (a comment whose address names none counts on none).
    pub(super) fn add(&mut self, slot: &Slot) {
        if let Some(n) = issue_of(slot) {
            *self.0.entry(n).or_default() += 1;
        }
    }

    /// As the summary keeps it: (issue, comments) pairs by issue.
    pub(super) fn into_pairs(self) -> Vec<(u64, u64)> {
        self.0.into_iter().collect()
    }

    /// From the summary's pairs.
    pub(super) fn from_pairs(pairs: &[(u64, u64)]) -> OnIssues {
        OnIssues(pairs.iter().copied().collect())
    }

    /// How many comments are held on issue `n`.
    pub(super) fn on(&self, n: u64) -> u64 {
        self.0.get(&n).copied().unwrap_or(0)
    }
}

/// The issue `slot`'s comment is on.
fn issue_of(slot: &Slot) -> Option<u64> {
    slot.w.as_deref().and_then(issue_in_url)
}

/// Whether a comment is missing: `held` comments on the head before the read, and the read's
/// `new` comments (ids the mirror did not hold), against the head's `count`. A new comment
/// created after the head last changed may be newer than the count: it is not counted (one
/// posted within the same second may still be, which costs a resync, never an answer).
pub(super) fn missed<'a>(
    held: u64,
    new: impl IntoIterator<Item = &'a Slot>,
    count: CommentCount,
) -> bool {
    let brought = new
        .into_iter()
        .filter(|s| issue_of(s) == Some(count.issue) && s.c.0 <= count.at)
        .count();
    held.saturating_add(u64::try_from(brought).unwrap_or(u64::MAX)) > count.count
}

/// [`missed`] for the slots of a mirror as loaded (`held`, before the read), counted by the
/// count's own rule: those created by the time the head last changed. (A count read earlier in
/// this process may be older than comments the mirror took since.)
pub(super) fn missed_in<'a>(held: impl IntoIterator<Item = &'a Slot>, count: CommentCount) -> bool {
    missed(0, held, count)
}

/// [`missed_in`] for a head whose count is known to lack `lacking` of the comments it lists
/// (`Summary::excess`: a count out of step, not a deletion).
pub(super) fn missed_in_lacking<'a>(
    held: impl IntoIterator<Item = &'a Slot>,
    count: CommentCount,
    lacking: u64,
) -> bool {
    let count = CommentCount {
        count: count.count.saturating_add(lacking),
        ..count
    };
    missed_in(held, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn slot(id: u64, issue: u64, created: i64) -> Slot {
        let at = DateTime::<Utc>::from_timestamp(created, 0).expect("a time");
        let comment = crate::store::Comment {
            id,
            author: "ca-bot".into(),
            created_at: at,
            updated_at: at,
            url: Some(format!(
                "https://f.example/o/r/issues/{issue}#issuecomment-{id}"
            )),
            body: "a note".into(),
        };
        Slot::of(comment, true, None).expect("a slot")
    }

    fn count(issue: u64, count: u64, at: i64) -> CommentCount {
        CommentCount {
            issue,
            count,
            at: DateTime::<Utc>::from_timestamp(at, 0).expect("a time"),
        }
    }

    #[test]
    fn more_held_on_the_head_than_it_counts_is_a_deletion() {
        let mut held = OnIssues::default();
        for s in [slot(1, 5, 10), slot(2, 5, 11), slot(3, 4, 12)] {
            held.add(&s);
        }
        let held = OnIssues::from_pairs(&held.into_pairs());
        assert_eq!((held.on(5), held.on(4), held.on(9)), (2, 1, 0));
        assert!(!missed(held.on(5), [], count(5, 2, 11)));
        assert!(missed(held.on(5), [], count(5, 1, 11)));
        // Another issue's comments do not count on the head.
        assert!(!missed(held.on(5), &[slot(7, 4, 11)], count(5, 2, 11)));
    }

    #[test]
    fn a_comment_posted_after_the_count_is_not_counted() {
        // One posted and one deleted: the new one counts, the deletion shows.
        assert!(missed(2, &[slot(9, 5, 11)], count(5, 2, 11)));
        // Posted after the head last changed (the count was read before it): not a deletion.
        assert!(!missed(2, &[slot(9, 5, 12)], count(5, 2, 11)));
        assert!(!missed_in(
            &[slot(1, 5, 10), slot(9, 5, 12)],
            count(5, 1, 11)
        ));
        assert!(missed_in(
            &[slot(1, 5, 10), slot(2, 5, 11)],
            count(5, 1, 11)
        ));
    }
}
