//! Merging comments into the mirror by id: the sort that keeps the last copy of an id, the
//! merge of a newer list into an older one, and whether a comment `since` sent again is one the
//! mirror already holds.

use super::files;
use super::slot::{Blob, Body, Slot};

/// Sorts by comment id, keeping the last copy of an id.
pub(super) fn sort_dedupe(slots: &mut Vec<Slot>) {
    slots.reverse();
    slots.sort_by_key(|s| s.i);
    slots.dedup_by_key(|s| s.i);
}

/// `old` with `new` merged in by comment id (both sorted); `new` replaces `old`.
pub(super) fn merge(old: &[Slot], new: &[Slot]) -> Vec<Slot> {
    let mut out = Vec::with_capacity(old.len() + new.len());
    let (mut a, mut b) = (old.iter().peekable(), new.iter().peekable());
    loop {
        match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.i < y.i => out.extend(a.next().cloned()),
            (Some(x), Some(y)) if x.i == y.i => {
                a.next();
                out.extend(b.next().cloned());
            }
            (_, Some(_)) => out.extend(b.next().cloned()),
            (Some(_), None) => out.extend(a.next().cloned()),
            (None, None) => return out,
        }
    }
}

/// Whether `new` is a copy the mirror already holds (the inclusive `since` boundary sends the
/// newest comments again). In doubt, it is not.
pub(super) fn unchanged(held: &[Slot], new: &Slot, data: Option<&files::Data>) -> bool {
    let Ok(at) = held.binary_search_by_key(&new.i, |s| s.i) else {
        return false;
    };
    let old = &held[at];
    if old.u != new.u || old.a != new.a || old.w != new.w {
        return false;
    }
    match (&old.b, &new.b) {
        (Body::R(h1, b1), Body::R(h2, Blob::In(raw))) => {
            let same_head = serde_json::to_string(h1).ok() == serde_json::to_string(h2).ok();
            let old_data = match b1 {
                Blob::In(r) => serde_json::from_str(r.get()).ok(),
                // Data that does not read back (changed on disk: its checksum) is no copy of
                // anything: the new copy replaces it.
                Blob::At(off, len, sum) => data.and_then(|d| d.read(*off, *len, *sum).ok()),
            };
            let new_data: Option<serde_json::Value> = serde_json::from_str(raw.get()).ok();
            same_head && old_data.is_some() && old_data == new_data
        }
        (a, b) => serde_json::to_string(a).ok() == serde_json::to_string(b).ok(),
    }
}
