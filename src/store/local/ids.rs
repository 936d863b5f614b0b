//! The ids a thread file's lines are read under, so that no record of a merged or hand-edited
//! file is lost to a repeated id.
//!
//! The rule, applied to the lines that parse, in file order (so it depends only on the lines
//! before, and a warm read that starts after an offset agrees with a cold one):
//!
//! - a line whose id is above every id so far keeps it (the usual case, an append);
//! - a line with the same id and the same bytes as an earlier line is a copy (a file merged with
//!   a copy of itself, or two stores with a shared history): it is read once;
//! - a line whose id no earlier line holds keeps it, even out of order;
//! - a line whose id an earlier line holds, with other content, is a conflict: both records are
//!   kept, and the later one is read under the id after the largest so far (as if it had been
//!   appended there). An append takes the id after the largest so counted, so a new record never
//!   shares an id with a renumbered one, and `delete` writes the new id into the file.

use std::collections::HashMap;

/// How one line is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placed {
    /// Under its own id; `ordered` is false when it is not above every id before it.
    Own { id: u64, ordered: bool },
    /// A copy of line `of` (1-based): skipped.
    Copy { of: usize },
    /// A conflict with line `of`, which holds its id: read as `id`.
    Renumbered { id: u64, of: usize },
    /// A conflict with line `of` when no id is left above the largest (2^64 - 1): skipped.
    NoIdLeft { of: usize },
}

/// The numbering of a thread file's lines, fed one line at a time in file order.
pub(super) struct Numbering<'a> {
    max: Option<u64>,
    /// The lines placed before the index was built: own id, line number, bytes. Most files are
    /// in order and never need the index (nor a hash of every line).
    lines: Vec<(u64, usize, &'a [u8])>,
    index: Option<Index>,
}

#[derive(Default)]
struct Index {
    /// Id read under -> line number.
    taken: HashMap<u64, usize>,
    /// (own id, hash of the bytes) -> line number.
    content: HashMap<(u64, u64), usize>,
}

impl<'a> Numbering<'a> {
    /// A numbering that continues after lines whose largest id was `max`, unseen: a line not
    /// above `max` is then placed as its own, unordered (the caller reads the whole file again).
    pub fn after(max: Option<u64>) -> Numbering<'a> {
        Numbering {
            max,
            lines: Vec::new(),
            index: None,
        }
    }

    /// The largest id any line was read under: the next append takes the one after it.
    pub fn max(&self) -> Option<u64> {
        self.max
    }

    /// Places line `number` (1-based), whose own id is `id` and whose bytes are `bytes`.
    pub fn place(&mut self, number: usize, id: u64, bytes: &'a [u8]) -> Placed {
        if self.max.is_none_or(|m| id > m) {
            self.max = Some(id);
            self.record(id, number, bytes, id);
            return Placed::Own { id, ordered: true };
        }
        let lines = std::mem::take(&mut self.lines);
        let index = self.index.get_or_insert_with(|| {
            let mut index = Index::default();
            for (own, line, bytes) in lines {
                index.taken.insert(own, line);
                index.content.insert((own, content_hash(bytes)), line);
            }
            index
        });
        if let Some(&of) = index.content.get(&(id, content_hash(bytes))) {
            return Placed::Copy { of };
        }
        let Some(&of) = index.taken.get(&id) else {
            self.record(id, number, bytes, id);
            return Placed::Own { id, ordered: false };
        };
        let Some(new) = self.max.and_then(|m| m.checked_add(1)) else {
            return Placed::NoIdLeft { of };
        };
        self.max = Some(new);
        self.record(id, number, bytes, new);
        Placed::Renumbered { id: new, of }
    }

    fn record(&mut self, id: u64, number: usize, bytes: &'a [u8], read_as: u64) {
        match &mut self.index {
            Some(index) => {
                index.taken.insert(read_as, number);
                index.content.insert((id, content_hash(bytes)), number);
            }
            // Before the index, every line kept its own id.
            None => self.lines.push((id, number, bytes)),
        }
    }
}

/// FNV-1a over the line's bytes, surrounding whitespace left out.
fn content_hash(bytes: &[u8]) -> u64 {
    bytes
        .trim_ascii()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

#[cfg(test)]
fn read_ids(lines: &[(u64, &'static [u8])]) -> Vec<Placed> {
    let mut n = Numbering::after(None);
    lines
        .iter()
        .enumerate()
        .map(|(i, &(id, bytes))| n.place(i + 1, id, bytes))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_id_with_other_content_is_read_under_the_id_after_the_largest() {
        let placed = read_ids(&[(1, b"a1"), (2, b"a2"), (1, b"b1"), (2, b"a2"), (3, b"b3")]);
        assert_eq!(
            placed,
            [
                Placed::Own {
                    id: 1,
                    ordered: true
                },
                Placed::Own {
                    id: 2,
                    ordered: true
                },
                Placed::Renumbered { id: 3, of: 1 },
                Placed::Copy { of: 2 },
                Placed::Renumbered { id: 4, of: 3 },
            ]
        );
    }

    #[test]
    fn an_out_of_order_unique_id_keeps_its_id() {
        let placed = read_ids(&[(5, b"x"), (2, b"y"), (2, b"y"), (6, b"z")]);
        assert_eq!(
            placed,
            [
                Placed::Own {
                    id: 5,
                    ordered: true
                },
                Placed::Own {
                    id: 2,
                    ordered: false
                },
                Placed::Copy { of: 2 },
                Placed::Own {
                    id: 6,
                    ordered: true
                },
            ]
        );
    }

    #[test]
    fn a_conflict_at_the_largest_id_is_reported_not_wrapped() {
        let placed = read_ids(&[(u64::MAX, b"x"), (u64::MAX, b"y")]);
        assert_eq!(placed[1], Placed::NoIdLeft { of: 1 });
    }
}
