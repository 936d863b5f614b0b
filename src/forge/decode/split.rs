//! The driving loop of the list's decode: the answer read in pieces, each element handed whole
//! to serde_json's slice reader (three to four times its byte-at-a-time reader), one element
//! held at a time. An object already read whole is decoded in place, where the reader stops
//! saying where it ends ([`in_place`]: one pass over its bytes); any other element, or one not
//! yet read whole, has its end found first by a byte scan ([`Scan`]).
//!
//! Whatever the splitter is not sure of goes back to serde_json's streaming reader, fed the
//! bytes from the last mark on, placed where they are in the whole answer ([`Replay`]), so an
//! error is worded and placed exactly as reading the whole answer with it says it:
//! - an answer that does not open an array, a separator or an end that is not one (a list cut
//!   short, a trailing comma, trailing bytes): the rest of the answer is read by that reader;
//! - an element serde_json's slice reader refuses (read again by the streaming reader: the error
//!   it gives is the one to report), or one nested as deep as the reader's limit;
//! - an element longer than the most the splitter holds (an untrusted author's huge comment):
//!   read by the streaming reader, nothing held, and the splitter carries on after it (only a
//!   number or a word, which that reader must look past, sends the rest of the list there).

use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, SeqAccess, Visitor};

use super::scan::Scan;
use super::source::{Lead, Replay, Source};
use super::{Element, Filter, Piece, State};

/// The nesting of an element from which the whole answer's reader may refuse it (its limit is
/// 128 levels of what it reads, the array itself being one; the slice reader, given the element
/// alone, would allow one more): such an element is read by that reader.
const DEEP: u32 = 127;

/// What a decode did, for the tests.
#[derive(Debug, Default)]
pub(super) struct Split {
    /// The most bytes the read buffer held.
    pub peak: usize,
    /// The elements read through the slice reader.
    pub sliced: usize,
}

/// How much of the rest a fallback reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The next element, then the splitter carries on.
    One,
    /// Everything to the answer's end.
    Rest,
}

/// Decodes the JSON array from `reader` into `state`, holding at most about `hold` bytes of an
/// element (plus one read) before handing it to the streaming reader.
pub(super) fn run<R: Read>(
    reader: R,
    state: &mut State,
    hold: usize,
) -> (Result<(), serde_json::Error>, Split) {
    let mut split = Split::default();
    let mut source = Source::new(reader);
    let done = drive(&mut source, state, hold, &mut split);
    split.peak = source.peak;
    (done, split)
}

fn drive<R: Read>(
    source: &mut Source<R>,
    state: &mut State,
    hold: usize,
    split: &mut Split,
) -> Result<(), serde_json::Error> {
    match source.skip_space(0, true) {
        Ok(Some((_, b'['))) => {}
        Ok(_) => return fallback(source, Lead::Start, Mode::Rest, state).map(drop),
        Err(e) => {
            source.failed = Some(e);
            return fallback(source, Lead::Start, Mode::Rest, state).map(drop);
        }
    }
    // `pos` is past the last element split (or the opening bracket), `lead` how the whole
    // answer's reader stood there, `from` where the element's separator (or the bracket) is:
    // what counts toward `hold`.
    let mut lead = Lead::Start;
    let mut pos = source.marked() + 1;
    let mut from = source.marked();
    // About how long the last element was, for the next one's read in place.
    let mut last_len = 4096;
    macro_rules! read {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => {
                    source.failed = Some(e);
                    return fallback(source, lead, Mode::Rest, state).map(drop);
                }
            }
        };
    }
    loop {
        if lead == Lead::Value {
            match read!(source.skip_space(pos, false)) {
                Some((at, b',')) => {
                    pos = at + 1;
                    from = at;
                }
                Some((at, b']')) => {
                    source.mark(at + 1);
                    break;
                }
                _ => return fallback(source, lead, Mode::Rest, state).map(drop),
            }
        }
        let Some((start, first)) = read!(source.skip_space(pos, false)) else {
            return fallback(source, lead, Mode::Rest, state).map(drop);
        };
        if first == b']' {
            if lead != Lead::Start {
                // A trailing comma.
                return fallback(source, lead, Mode::Rest, state).map(drop);
            }
            source.mark(start + 1);
            break;
        }
        if first == b'{'
            && let Some((piece, end)) = in_place(source, start, 2 * last_len + 1024, state)
        {
            if state.apply(piece).is_err() {
                return Err(de::Error::custom("the kept comments are over the cap"));
            }
            split.sliced += 1;
            last_len = end - start;
            source.mark(end);
            pos = end;
            from = pos;
            lead = Lead::Value;
            continue;
        }
        let mut scan = Scan::new(first);
        let mut at = start + 1;
        let end = loop {
            if let Some(end) = scan.feed(source.bytes(start, source.end()), at - start) {
                break Some(start + end);
            }
            at = source.end();
            if at - from > hold {
                break None;
            }
            if !read!(source.more()) {
                break None;
            }
        };
        let closed = scan.closed_kind();
        let sliced = match end {
            Some(end) if scan.deepest < DEEP => {
                let deferred = &state.out.deferred;
                slice(source.bytes(start, end), closed, state.filter, deferred)
                    .map(|piece| (piece, end))
            }
            _ => None,
        };
        match sliced {
            Some((piece, end)) => {
                if state.apply(piece).is_err() {
                    return Err(de::Error::custom("the kept comments are over the cap"));
                }
                split.sliced += 1;
                last_len = end - start;
                source.mark(end);
                pos = end;
            }
            // Read again by the streaming reader: one of a closed kind, then the splitter
            // carries on after it; any other, the rest of the answer with it.
            None if closed => {
                if !fallback(source, lead, Mode::One, state)? {
                    return Ok(());
                }
                pos = source.marked();
            }
            None => return fallback(source, lead, Mode::Rest, state).map(drop),
        }
        from = pos;
        lead = Lead::Value;
    }
    match source.skip_space(source.marked(), true) {
        Ok(None) => Ok(()),
        Ok(Some(_)) => fallback(source, Lead::List, Mode::Rest, state).map(drop),
        Err(e) => {
            source.failed = Some(e);
            fallback(source, Lead::List, Mode::Rest, state).map(drop)
        }
    }
}

/// Decodes the object starting at answer offset `start` straight from the bytes read, as the
/// slice reader decodes it given exactly its bytes (it stops on the object's closing brace),
/// and where it ends: one pass over the element, no scan for its end first. Only the first
/// `window` bytes are taken (checked as UTF-8 once, read as text). `None` when the object does
/// not end within them (the splitter reads on), when the reader refuses it (the splitter
/// decides, as for any element), or when it may be nested as deep as the whole answer's reader
/// refuses (it has that many brackets; the scan measures its depth).
fn in_place<R: Read>(
    source: &Source<R>,
    start: usize,
    window: usize,
    state: &State,
) -> Option<(Piece, usize)> {
    let bytes = source.bytes(start, source.end().min(start.saturating_add(window)));
    // Cut short of a character (the window's end, or a byte that is not UTF-8): the text before.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let element = Element {
        filter: state.filter,
        deferred: &state.out.deferred,
    };
    let piece = element.deserialize(&mut de).ok()?;
    let len = de.into_iter::<IgnoredAny>().byte_offset();
    let brackets = memchr::memchr2_iter(b'{', b'[', text.as_bytes().get(..len)?);
    (brackets.take(DEEP as usize).count() < DEEP as usize).then_some((piece, start + len))
}

/// Decodes one whole element through the slice reader: `None` when it refuses it. A number or a
/// word is checked whole first, as its decode files it before the reader can see what follows
/// it. A body on an issue of `deferred` is skipped unread ([`Element`]).
fn slice(bytes: &[u8], closed: bool, filter: &Filter, deferred: &BTreeSet<u64>) -> Option<Piece> {
    if !closed {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        <IgnoredAny as de::Deserialize>::deserialize(&mut de)
            .and_then(|_| de.end())
            .ok()?;
    }
    let element = Element { filter, deferred };
    // Text checked once is read as text: serde_json checks no string of it again.
    if let Ok(text) = std::str::from_utf8(bytes) {
        let mut de = serde_json::Deserializer::from_str(text);
        let piece = element.deserialize(&mut de).ok()?;
        return de.end().ok().map(|()| piece);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let piece = element.deserialize(&mut de).ok()?;
    de.end().ok().map(|()| piece)
}

/// Reads on with serde_json's streaming reader from the source's mark, as `lead` says the whole
/// answer's reader stood there: the next element (`Mode::One`, `Ok(true)` when the splitter may
/// carry on after it) or the rest of the answer (`Ok(false)`).
fn fallback<R: Read>(
    source: &mut Source<R>,
    lead: Lead,
    mode: Mode,
    state: &mut State,
) -> Result<bool, serde_json::Error> {
    let close = Cell::new(false);
    let mut de = serde_json::Deserializer::from_reader(Replay::new(lead, source, &close));
    if lead == Lead::List {
        <IgnoredAny as de::Deserialize>::deserialize(&mut de)?;
        return de.end().map(|()| false);
    }
    let tail = Tail {
        state,
        after_value: lead == Lead::Value,
        close: (mode == Mode::One).then_some(&close),
    };
    de::Deserializer::deserialize_seq(&mut de, tail)?;
    if close.get() {
        return Ok(true);
    }
    de.end().map(|()| false)
}

/// The elements of the array from the mark on, read by the streaming reader.
pub(super) struct Tail<'s, 'f, 'c> {
    pub state: &'s mut State<'f>,
    /// The reader was given `[0` first: one value to pass over.
    pub after_value: bool,
    /// Set after one element, to end the array there.
    pub close: Option<&'c Cell<bool>>,
}

impl<'de> Visitor<'de> for Tail<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of comments")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.after_value {
            seq.next_element::<IgnoredAny>()?;
        }
        let filter = self.state.filter;
        loop {
            let element = Element {
                filter,
                deferred: &self.state.out.deferred,
            };
            let Some(piece) = seq.next_element_seed(element)? else {
                break;
            };
            if self.state.apply(piece).is_err() {
                return Err(de::Error::custom("the kept comments are over the cap"));
            }
            if let Some(close) = self.close {
                close.set(true);
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
