//! A thread's slots in comment id order, wherever they are: a list in memory, or a full read's
//! slots spilled to disk as they were decoded (`fresh.rs`). Writing a base (`disk.rs`) and
//! summarizing it (`summary.rs`) go through them once, in order, and read back only the few
//! they pick.

use std::borrow::Cow;

use super::slot::Slot;

/// A slot as [`Slots::walk`] meets it.
pub(super) enum Walked<'a> {
    /// The slot.
    Slot(&'a Slot),
    /// The slot as the JSON it was spilled as (it reads back as it is, trusted as it is), its
    /// record's data at `data` (offset, length) of the data spill; `None`: it holds no record.
    Spilled {
        json: &'a [u8],
        data: Option<(u64, u64)>,
    },
}

/// Slots in comment id order, gone through one at a time.
pub(super) trait Slots {
    /// Calls `f` with each slot, in order; the first error stops the walk.
    fn each(&self, f: &mut dyn FnMut(&Slot) -> Result<(), String>) -> Result<(), String>;

    /// [`Slots::each`], giving a slot spilled as it reads back as its JSON, unread.
    fn walk(&self, f: &mut dyn FnMut(Walked<'_>) -> Result<(), String>) -> Result<(), String> {
        self.each(&mut |slot| f(Walked::Slot(slot)))
    }

    /// The slot at `n`.
    fn nth(&self, n: usize) -> Result<Cow<'_, Slot>, String>;

    /// The comment id of the last slot.
    fn last_id(&self) -> Option<u64>;

    /// The comment id of the first validly signed record (see [`super::slot::first_signed`]).
    fn first_signed(&self) -> Result<Option<u64>, String>;

    /// Every slot at once (the rare summary that needs the whole thread).
    fn whole(&self) -> Result<Cow<'_, [Slot]>, String>;
}

impl Slots for [Slot] {
    fn each(&self, f: &mut dyn FnMut(&Slot) -> Result<(), String>) -> Result<(), String> {
        self.iter().try_for_each(f)
    }

    fn nth(&self, n: usize) -> Result<Cow<'_, Slot>, String> {
        self.get(n)
            .map(Cow::Borrowed)
            .ok_or_else(|| format!("no slot {n} among {}", self.len()))
    }

    fn last_id(&self) -> Option<u64> {
        self.last().map(|s| s.i)
    }

    fn first_signed(&self) -> Result<Option<u64>, String> {
        Ok(super::slot::first_signed(self))
    }

    fn whole(&self) -> Result<Cow<'_, [Slot]>, String> {
        Ok(Cow::Borrowed(self))
    }
}
