//! The answer built from the mirror: trust and dedupe decided by [`crate::scan::classify`] (the
//! one copy of those rules) over the slots, and records built only for the entries an answer
//! keeps ([`Keep`]): every one for `list`, only the newest match for `latest` and `resume`.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::files::Data;
use super::slot::{Blob, Body, Head, Slot};
use super::summary::{Held, IdIndex};
use crate::format::{ParseError, Record, marker_line, parse};
use crate::scan::{
    Entry, Parsed, Scan, Trust, classify, not_believed_warnings, unsigned_count_warning,
};
use crate::store::Unreadable;

/// Which entries a scan builds.
pub(crate) enum Keep<'a> {
    /// Every entry (`scan`, `list`).
    All,
    /// Only the newest entry the predicate accepts. The predicate sees the entry with its data
    /// (or metrics) still `null`, so it must decide on the header and the comment alone, and
    /// it must be monotone per (agent, session, kind): whenever it accepts a record, it accepts
    /// every newer record of the same agent, session and kind (the answer is then among the
    /// newest records of each, which is all a warm read through the mirror's summary holds).
    Newest(&'a (dyn Fn(&Entry) -> bool + Send + Sync)),
    /// Every entry the first predicate accepts, without its data (`null`), except the newest the
    /// second accepts, which is built whole (a session's story and its newest checkpoint). Both
    /// predicates decide on the header and the comment alone. The names are the (agent,
    /// session) the first predicate accepts, for a warm read through the summary.
    Pair(Pred<'a>, Pred<'a>, (&'a str, &'a str)),
}

/// A predicate on an entry's header and comment.
pub(crate) type Pred<'a> = &'a (dyn Fn(&Entry) -> bool + Send + Sync);

/// The thread as the mirror holds it after a read.
#[derive(Debug)]
pub(crate) struct View {
    pub(super) slots: Vec<Slot>,
    pub(super) data: Option<Arc<Data>>,
    /// Whom the read trusted.
    pub trust: Trust,
    pub(super) warnings: Vec<String>,
    /// Unreadable comments without an id (not kept in the mirror).
    pub(super) extra: Vec<Unreadable>,
    /// The record id index, when `slots` are the summary's and not the whole thread.
    pub(super) index: Option<IdIndex>,
    /// Record `Id`s the thread holds beyond those of `slots` (a summary's `recent`).
    pub(super) known: Vec<String>,
    /// The read behind this view may have missed comments (see [`Listing::incomplete`]).
    ///
    /// [`Listing::incomplete`]: crate::store::Listing::incomplete
    pub(super) incomplete: bool,
    /// The comment id of the thread's first validly signed record (with signing keys).
    pub(super) first_signed: Option<u64>,
    /// How many believed records carry no signature, when `slots` are not all of them (a
    /// summary's count); `None`: count them.
    pub(super) unsigned: Option<usize>,
}

/// What stands for an accepted record until it is built.
enum Src<'a> {
    Slot(&'a Head, &'a Blob),
    Parsed(Box<Record>),
}

impl View {
    /// The scan of the thread, with the entries `keep` asks for, and the `Id`s of the records
    /// the thread holds (for the outbox's dedupe). Fails when a record's data cannot be read
    /// back (the mirror's data area changed under it).
    pub(crate) fn scan(mut self, keep: Keep<'_>) -> Result<(Scan, Held), String> {
        let mut unreadable = Vec::new();
        let mut parsed = Vec::with_capacity(self.slots.len());
        for slot in &self.slots {
            let mut info = slot.info();
            let outcome = match &slot.b {
                Body::R(head, blob) => match slot.doubt(self.first_signed, &mut info) {
                    None => Parsed::Record(head.posting(), Src::Slot(head, blob)),
                    Some(why) => Parsed::Refused(why, Some(head.marker())),
                },
                Body::N => Parsed::NoMarker,
                Body::S => Parsed::Skipped,
                Body::I(body) => match parse(body) {
                    Ok(record) => {
                        Parsed::Record(crate::scan::posting(&record), Src::Parsed(Box::new(record)))
                    }
                    Err(ParseError::NoMarker) => Parsed::NoMarker,
                    Err(ParseError::TooLarge { .. })
                        if crate::format::marker_in_head(body) == Some(None) =>
                    {
                        Parsed::NoMarker
                    }
                    Err(e) => Parsed::Invalid(e, marker_line(body)),
                },
                Body::L(len, cap) => Parsed::Invalid(too_large(*len, *cap), None),
                Body::Lh(len, cap, head) => Parsed::Invalid(
                    too_large(*len, *cap),
                    crate::format::marker_in_head(head).flatten(),
                ),
                Body::U(reason) => {
                    unreadable.push(Unreadable {
                        id: Some(slot.i),
                        author: Some(slot.a.clone()),
                        created_at: Some(slot.c.0),
                        updated_at: Some(slot.u.0),
                        url: slot.w.clone(),
                        reason: reason.clone(),
                        skipped: None,
                        head: None,
                    });
                    continue;
                }
            };
            parsed.push((info, outcome));
        }
        unreadable.extend(self.extra.iter().cloned());
        let (accepted, rejected) = classify(parsed, unreadable, &self.trust);
        // The signature warnings, as a listed read words them (`crate::scan::scan_checked`).
        let unsigned = self
            .unsigned
            .unwrap_or_else(|| accepted.iter().filter(|(c, _)| c.unsigned).count());
        let mut warnings = self.warnings.clone();
        warnings.extend(not_believed_warnings(&rejected));
        warnings.extend(unsigned_count_warning(unsigned));
        let ids: HashSet<String> = accepted
            .iter()
            .filter_map(|(_, src)| match src {
                Src::Slot(head, _) => head.id.clone(),
                Src::Parsed(r) => r.id.clone(),
            })
            .collect();
        let mut entries = Vec::new();
        match keep {
            Keep::All => {
                for (comment, src) in accepted {
                    let record = self.build(src)?;
                    entries.push(Entry { record, comment });
                }
            }
            Keep::Newest(wanted) => {
                for (comment, src) in accepted.into_iter().rev() {
                    let shell = self.build_shell(&src);
                    let mut entry = Entry {
                        record: shell,
                        comment,
                    };
                    if wanted(&entry) {
                        entry.record = self.build(src)?;
                        entries.push(entry);
                        break;
                    }
                }
            }
            Keep::Pair(pair, whole, _) => {
                let mut built = false;
                for (comment, src) in accepted.into_iter().rev() {
                    let mut entry = Entry {
                        record: self.build_shell(&src),
                        comment,
                    };
                    if !pair(&entry) {
                        continue;
                    }
                    if !built && whole(&entry) {
                        entry.record = self.build(src)?;
                        built = true;
                    }
                    entries.push(entry);
                }
                entries.reverse();
            }
        }
        let scan = Scan {
            entries,
            rejected,
            warnings,
            offline: false,
            incomplete: self.incomplete,
        };
        let mut ids = ids;
        ids.extend(self.known.drain(..));
        let held = Held {
            set: ids,
            index: self.index.take(),
        };
        Ok((scan, held))
    }

    /// The record without its data (a `null` in its place), to test a predicate on.
    fn build_shell(&self, src: &Src<'_>) -> Record {
        match src {
            Src::Slot(head, _) => head.record(Value::Null),
            Src::Parsed(r) => (**r).clone(),
        }
    }

    /// The whole record.
    fn build(&self, src: Src<'_>) -> Result<Record, String> {
        match src {
            Src::Parsed(r) => Ok(*r),
            Src::Slot(head, Blob::In(raw)) => serde_json::from_str(raw.get())
                .map(|data| head.record(data))
                .map_err(|e| format!("a record's data does not read: {e}")),
            Src::Slot(head, Blob::At(off, len)) => {
                let data = self
                    .data
                    .as_ref()
                    .ok_or("a record's data is in a base that is gone")?;
                Ok(head.record(data.read(*off, *len)?))
            }
        }
    }
}

/// A body skipped as `len` bytes, over the `cap`, as a parse error.
fn too_large(len: u64, cap: u64) -> ParseError {
    ParseError::TooLarge {
        len: usize::try_from(len).unwrap_or(usize::MAX),
        cap: usize::try_from(cap).unwrap_or(usize::MAX),
    }
}
