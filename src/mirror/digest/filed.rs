//! The slots a listing's digest made, by comment id (`digest.rs`): kept in the order they were
//! made while their ids ascend (a list's own order), with no hash table around them (none of its
//! empty room, nor its copy when it grows), and handed over in that order all at once; by a hash
//! table from the first id out of order on.

use std::collections::HashMap;

/// What a digest made of each comment, by comment id.
pub(super) enum Filed<K> {
    /// In ascending id order; `None`: taken out.
    InOrder(Vec<(u64, Option<K>)>),
    ById(HashMap<u64, K>),
}

impl<K> Default for Filed<K> {
    fn default() -> Self {
        Filed::InOrder(Vec::new())
    }
}

impl<K> Filed<K> {
    /// Keeps `kept` as comment `id`'s, in place of what it had.
    pub(super) fn insert(&mut self, id: u64, kept: K) {
        if let Filed::InOrder(made) = self {
            if made.last().is_none_or(|(last, _)| *last < id) {
                made.push((id, Some(kept)));
                return;
            }
            let by_id = (std::mem::take(made).into_iter())
                .filter_map(|(id, kept)| kept.map(|kept| (id, kept)))
                .collect();
            *self = Filed::ById(by_id);
        }
        if let Filed::ById(made) = self {
            made.insert(id, kept);
        }
    }

    /// Takes comment `id`'s out.
    pub(super) fn remove(&mut self, id: u64) -> Option<K> {
        match self {
            Filed::InOrder(made) => {
                let at = made.binary_search_by_key(&id, |(id, _)| *id).ok()?;
                made[at].1.take()
            }
            Filed::ById(made) => {
                let kept = made.remove(&id);
                // The table gives its memory back as the slots are taken out of it.
                if made.capacity() >= 1024 && made.len() < made.capacity() / 4 {
                    made.shrink_to_fit();
                }
                kept
            }
        }
    }

    /// Every one kept, in the order made, when `ids` are exactly theirs in that order (none
    /// taken out yet); they are all taken out. `None` (nothing taken) otherwise.
    pub(super) fn take_in_order(&mut self, ids: &[u64]) -> Option<Vec<(u64, K)>> {
        let Filed::InOrder(made) = self else {
            return None;
        };
        let same = made.len() == ids.len()
            && (made.iter().zip(ids)).all(|((id, kept), want)| id == want && kept.is_some());
        if !same {
            return None;
        }
        let all = (std::mem::take(made).into_iter())
            .filter_map(|(id, kept)| kept.map(|kept| (id, kept)))
            .collect();
        Some(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_made_in_order_are_handed_over_in_order_and_any_other_order_by_id() {
        let mut filed = Filed::default();
        for id in [3, 5, 9] {
            filed.insert(id, id * 10);
        }
        assert!(filed.take_in_order(&[3, 9]).is_none(), "not every one");
        assert!(filed.take_in_order(&[5, 3, 9]).is_none(), "not in order");
        assert_eq!(filed.remove(5), Some(50));
        assert_eq!(filed.remove(5), None, "taken once");
        assert!(filed.take_in_order(&[3, 9]).is_none(), "one was taken out");
        assert_eq!(filed.remove(4), None);
        let mut filed = Filed::default();
        for id in [3, 5, 9] {
            filed.insert(id, id * 10);
        }
        assert_eq!(
            filed.take_in_order(&[3, 5, 9]),
            Some(vec![(3, 30), (5, 50), (9, 90)])
        );
        assert_eq!(filed.remove(3), None, "all were taken");
        // An id out of order, or made again: by id from then on, the last one made kept.
        let mut filed = Filed::default();
        for (id, kept) in [(3, 1), (9, 2), (5, 3), (9, 4)] {
            filed.insert(id, kept);
        }
        assert!(matches!(filed, Filed::ById(_)));
        assert!(filed.take_in_order(&[3, 5, 9]).is_none());
        assert_eq!(
            (filed.remove(3), filed.remove(5), filed.remove(9)),
            (Some(1), Some(3), Some(4))
        );
    }
}
