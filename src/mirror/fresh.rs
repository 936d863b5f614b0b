//! A full read's slots as the read goes on with them: each comment the digest made a slot of as
//! it was decoded (`digest.rs`) is a few bytes here (its id and where its slot was spilled), read
//! back from the spill one at a time when the base is written (its JSON copied as it is, where
//! its record's data keeps its offset: `Slots::walk`) and, when the digest's fold cannot stand
//! for them, the summary folded; the few others (unreadable comments, a slot the spill could not
//! take) are held. So a cold read of a long thread never holds its slots all at once, unless an
//! answer needs the whole thread.

use std::borrow::Cow;
use std::sync::Arc;

use super::files::Data;
use super::slot::Slot;
use super::slots::{Slots, Walked};
use super::summary::Streamed;
use crate::scan::Trust;

/// One slot of a full read.
pub(super) enum Item {
    /// In memory.
    Held(Box<Slot>),
    /// Spilled: comment `i`'s slot is at `at`.
    At { i: u64, at: Spot },
}

/// Where a spilled slot is.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spot {
    /// Its JSON's offset in the slot spill.
    pub off: u64,
    /// Its JSON's length.
    pub len: u32,
    /// Whether it is a validly signed record.
    pub signed: bool,
    /// Whether it is a record (its data in the data spill, where its JSON says: [`data_at`]).
    pub record: bool,
}

/// Where the data of the record a spilled slot's JSON holds is in the data spill. A slot's last
/// field is its body, `"b":{"R":[head,{"At":[offset,length,checksum]}]}` as `serde_json` writes
/// a spilled record's, so its JSON ends `{"At":[<offset>,<length>,<checksum>]}]}}`; `None` when
/// it does not. (The checksum goes with the JSON, copied as it is.)
fn data_at(json: &[u8]) -> Option<(u64, u64)> {
    fn number(digits: &[u8]) -> Option<u64> {
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    }
    let rest = json.strip_suffix(b"]}]}}")?;
    let comma = rest.iter().rposition(|&b| b == b',')?;
    u32::try_from(number(&rest[comma + 1..])?).ok()?;
    let rest = &rest[..comma];
    let comma = rest.iter().rposition(|&b| b == b',')?;
    let len = number(&rest[comma + 1..])?;
    let rest = &rest[..comma];
    let open = rest.iter().rposition(|&b| b == b'[')?;
    let off = number(&rest[open + 1..])?;
    rest[..open].ends_with(b"{\"At\":").then_some((off, len))
}

impl Item {
    fn id(&self) -> u64 {
        match self {
            Item::Held(slot) => slot.i,
            Item::At { i, .. } => *i,
        }
    }
}

/// A full read's slots, in the listing's order until [`Fresh::sort_dedupe`].
pub(super) struct Fresh {
    items: Vec<Item>,
    /// The slot spill the [`Item::At`] are in.
    spill: Option<Arc<Data>>,
    /// Set when some spilled slot's author is one the read does not trust: such a slot is
    /// read back as that author's ([`super::slot::Body::distrusted`]).
    distrust: Option<Trust>,
    /// The summary the digest folded as it made these slots, while it may stand for theirs:
    /// dropped when a slot is pushed, or when the sorted slots are not the ones it folded.
    stream: Option<Streamed>,
    /// Sorted by comment id, with no repeats.
    sorted: bool,
}

/// How much of the slot spill is read at once.
const WINDOW: usize = 256 * 1024;

impl Fresh {
    /// Slots `items`, the spilled ones in `spill`; `distrust` as [`Fresh::distrust`] says.
    pub(super) fn new(items: Vec<Item>, spill: Option<Arc<Data>>, distrust: Option<Trust>) -> Self {
        Fresh {
            items,
            spill,
            distrust,
            stream: None,
            sorted: false,
        }
    }

    /// These slots, with the summary `stream` folded from them as they were made (in their
    /// order, each as it reads back).
    pub(super) fn streamed(mut self, stream: Option<Streamed>) -> Self {
        self.stream = stream;
        self
    }

    /// Adds a slot the digest did not make (an unreadable comment): the summary it folded
    /// takes it in, as long as it holds no record.
    pub(super) fn push(&mut self, slot: Slot) {
        if let Some(stream) = &mut self.stream
            && !stream.extra(&slot)
        {
            self.stream = None;
        }
        self.items.push(Item::Held(Box::new(slot)));
    }

    /// The summary folded as the slots were made, when it stands for these slots, sorted
    /// ([`Fresh::sort_dedupe`]): they are exactly the ones it folded (each once, in ascending
    /// comment id order) and the ones pushed.
    pub(super) fn take_stream(&mut self) -> Option<Streamed> {
        let mut stream = self.stream.take()?;
        (self.sorted && stream.place(self.items.iter().map(Item::id))).then_some(stream)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sorts by comment id, keeping the last copy of an id (as `merge::sort_dedupe`).
    pub(super) fn sort_dedupe(&mut self) {
        self.items.reverse();
        self.items.sort_by_key(Item::id);
        self.items.dedup_by_key(|item| item.id());
        self.sorted = true;
    }

    /// Every slot, in memory.
    pub(super) fn into_slots(self) -> Result<Vec<Slot>, String> {
        let mut window = Window::default();
        let mut slots = Vec::with_capacity(self.items.len());
        for item in &self.items {
            slots.push(self.read(item, Some(&mut window))?.into_owned());
        }
        Ok(slots)
    }

    /// The slot `item` is, read through `window` when spilled; without one (a slot picked
    /// alone), just its own bytes are read.
    fn read<'a>(
        &self,
        item: &'a Item,
        window: Option<&mut Window>,
    ) -> Result<Cow<'a, Slot>, String> {
        let (off, len) = match item {
            Item::Held(slot) => return Ok(Cow::Borrowed(slot)),
            Item::At { at, .. } => (at.off, at.len as usize),
        };
        let spill = self
            .spill
            .as_deref()
            .ok_or("a spilled slot without its spill")?;
        let alone;
        let bytes = match window {
            Some(window) => window.get(spill, off, len)?,
            None => {
                alone = spill.bytes(off, len as u64)?;
                &alone[..]
            }
        };
        let mut slot: Slot = serde_json::from_slice(bytes)
            .map_err(|e| format!("a spilled slot does not read: {e}"))?;
        if let Some(trust) = &self.distrust
            && !trust.allows(&slot.a)
        {
            slot.b = slot.b.distrusted();
        }
        Ok(Cow::Owned(slot))
    }
}

/// The part of the slot spill last read: slots are read back in the order they were spilled,
/// so one read serves many.
#[derive(Default)]
struct Window {
    start: u64,
    buf: Vec<u8>,
}

impl Window {
    fn get(&mut self, spill: &Data, off: u64, len: usize) -> Result<&[u8], String> {
        let end = off
            .checked_add(len as u64)
            .ok_or("a spilled slot past the end")?;
        let held = off >= self.start && end <= self.start + self.buf.len() as u64;
        if !held {
            spill.chunk_into(off, WINDOW.max(len), &mut self.buf)?;
            self.start = off;
            if self.buf.len() < len {
                return Err("the slot spill is cut short".into());
            }
        }
        let from = usize::try_from(off - self.start).map_err(|e| e.to_string())?;
        Ok(&self.buf[from..from + len])
    }
}

impl Slots for Fresh {
    fn each(&self, f: &mut dyn FnMut(&Slot) -> Result<(), String>) -> Result<(), String> {
        let mut window = Window::default();
        for item in &self.items {
            f(&*self.read(item, Some(&mut window))?)?;
        }
        Ok(())
    }

    fn walk(&self, f: &mut dyn FnMut(Walked<'_>) -> Result<(), String>) -> Result<(), String> {
        if self.distrust.is_some() {
            // Some slot reads back otherwise than it was spilled.
            return self.each(&mut |slot| f(Walked::Slot(slot)));
        }
        let mut window = Window::default();
        for item in &self.items {
            match item {
                Item::Held(slot) => f(Walked::Slot(slot))?,
                Item::At { at, .. } => {
                    let spill =
                        (self.spill.as_deref()).ok_or("a spilled slot without its spill")?;
                    let json = window.get(spill, at.off, at.len as usize)?;
                    match (at.record, data_at(json)) {
                        (false, _) => f(Walked::Spilled { json, data: None })?,
                        (true, Some(data)) => f(Walked::Spilled {
                            json,
                            data: Some(data),
                        })?,
                        // Never (a record is spilled only with its data spilled): read as is.
                        (true, None) => {
                            let slot: Slot = serde_json::from_slice(json)
                                .map_err(|e| format!("a spilled slot does not read: {e}"))?;
                            f(Walked::Slot(&slot))?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn nth(&self, n: usize) -> Result<Cow<'_, Slot>, String> {
        let item = self
            .items
            .get(n)
            .ok_or_else(|| format!("no slot {n} among {}", self.items.len()))?;
        self.read(item, None)
    }

    fn last_id(&self) -> Option<u64> {
        self.items.last().map(Item::id)
    }

    fn first_signed(&self) -> Result<Option<u64>, String> {
        if self.distrust.is_some() {
            // Whose records are believed is decided as each slot is read back.
            let mut first = None;
            self.each(&mut |slot| {
                if slot.signed() {
                    first = Some(first.map_or(slot.i, |f: u64| f.min(slot.i)));
                }
                Ok(())
            })?;
            return Ok(first);
        }
        Ok(self
            .items
            .iter()
            .filter(|item| match item {
                Item::Held(slot) => slot.signed(),
                Item::At { at, .. } => at.signed,
            })
            .map(Item::id)
            .min())
    }

    fn whole(&self) -> Result<Cow<'_, [Slot]>, String> {
        let mut window = Window::default();
        let slots = (self.items.iter())
            .map(|item| self.read(item, Some(&mut window)).map(Cow::into_owned))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Cow::Owned(slots))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::slot::{Blob, Body};

    #[test]
    fn a_spilled_record_names_its_data_at_the_end_of_its_json() {
        // A header whose strings look like the end of a spilled record's JSON.
        let mut record = crate::format::Record::checkpoint(
            "w",
            "s",
            "p",
            serde_json::json!({"x": "{\"At\":[3,4,1]}]}}"}),
        )
        .expect("a record");
        record.next = Some("{\"At\":[5,6,1]}]}}".into());
        let body = crate::format::Renderer::embedded()
            .and_then(|r| r.render(&record))
            .expect("a rendered record");
        let comment = crate::store::Comment {
            id: 7,
            author: "{\"At\":[8,9,1]}]}}".into(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            updated_at: chrono::DateTime::UNIX_EPOCH,
            url: None,
            body,
        };
        let mut slot = Slot::of(comment, true, None).expect("a slot");
        let Body::R(_, blob) = &mut slot.b else {
            panic!("a record");
        };
        *blob = Blob::At(123_456_789_012, 77, u32::MAX);
        let json = serde_json::to_vec(&slot).expect("json");
        assert_eq!(data_at(&json), Some((123_456_789_012, 77)));
        // Anything else names no data.
        slot.b = Body::U("{\"At\":[1,2,3]}]}}".into());
        assert_eq!(data_at(&serde_json::to_vec(&slot).expect("json")), None);
        for odd in [
            &b"{\"At\":[+1,2,3]}]}}"[..],
            b"{\"At\":[1,,3]}]}}",
            b"{\"At\":[1,2,]}]}}",
            b"{\"At\":[1,2]}]}}",
            b"{\"At\":[1,2,4294967296]}]}}",
            b"[1,2,3]}]}}",
            b"",
        ] {
            assert_eq!(data_at(odd), None, "{}", String::from_utf8_lossy(odd));
        }
    }
}
