//! The answer built from the mirror: trust and dedupe decided by [`crate::scan::classify`] (the
//! one copy of those rules) over the slots, and records built only for the entries an answer
//! keeps ([`Keep`]): every one for `list`, only the newest match for `latest` and `resume`.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::files::Data;
use super::slot::{Blob, Body, Head, Slot};
use super::summary::{Held, IdIndex, IdKey, id_key};
use crate::format::{ParseError, Record, marker_line, parse};
use crate::scan::{
    CommentInfo, Entry, Parsed, Scan, Trust, classify, conflict_warnings, not_believed_warnings,
    unsigned_count_warning,
};
use crate::store::Unreadable;

/// Which entries a scan builds.
#[derive(Clone, Copy)]
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
        let mut unreadable: Vec<Unreadable> = self
            .slots
            .iter()
            .filter_map(|slot| match &slot.b {
                Body::U(reason) => Some(Unreadable {
                    id: Some(slot.i),
                    author: Some(slot.a.clone()),
                    created_at: Some(slot.c.0),
                    updated_at: Some(slot.u.0),
                    url: slot.w.clone(),
                    reason: reason.clone(),
                    skipped: None,
                    head: None,
                }),
                _ => None,
            })
            .collect();
        unreadable.extend(self.extra.iter().cloned());
        // Each slot is classified as it is read, without its address (filled in below for the
        // comments an answer shows): a long thread's are not all copied at once.
        let first_signed = self.first_signed;
        // A record whose data cannot be read back fails the scan (after the classify).
        let mut failed = None;
        let parsed = self
            .slots
            .iter()
            .filter(|slot| !matches!(slot.b, Body::U(_)))
            .map(|slot| {
                let mut info = CommentInfo {
                    author: slot.a.clone(),
                    ..slot.info_bare()
                };
                let outcome = match &slot.b {
                    Body::R(head, blob) => match slot.doubt(first_signed, &mut info) {
                        None => match slot.posting_in(self.data.as_deref()) {
                            Ok(posting) => Parsed::Record(posting, Src::Slot(head, blob)),
                            Err(e) => {
                                failed.get_or_insert(e);
                                Parsed::Skipped
                            }
                        },
                        Some(why) => Parsed::Refused(why, Some(head.marker())),
                    },
                    Body::N | Body::U(_) => Parsed::NoMarker,
                    Body::S => Parsed::Skipped,
                    Body::I(body) => match parse(body) {
                        Ok(record) => Parsed::Record(
                            crate::scan::posting(&record),
                            Src::Parsed(Box::new(record)),
                        ),
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
                };
                (info, outcome)
            });
        // A later copy of a record `Id` that says something else is a conflict: both copies
        // are built whole to tell (rare: duplicates are).
        let differs = |first: &Src<'_>, copy: &Src<'_>| match (self.whole(first), self.whole(copy))
        {
            (Ok(first), Ok(copy)) => crate::scan::differs(&first, &copy),
            _ => None,
        };
        let (accepted, mut rejected) = classify(parsed, unreadable, &self.trust, &differs);
        if let Some(e) = failed {
            return Err(e);
        }
        for r in &mut rejected {
            self.address(&mut r.comment);
        }
        // The signature warnings, as a listed read words them (`crate::scan::scan_checked`).
        let unsigned = self
            .unsigned
            .unwrap_or_else(|| accepted.iter().filter(|(c, _)| c.unsigned).count());
        let mut warnings = self.warnings.clone();
        warnings.extend(not_believed_warnings(&rejected));
        warnings.extend(conflict_warnings(&rejected));
        warnings.extend(unsigned_count_warning(unsigned));
        let ids: HashSet<IdKey> = accepted
            .iter()
            .filter_map(|(_, src)| match src {
                Src::Slot(head, _) => head.id.as_deref().map(id_key),
                Src::Parsed(r) => r.id.as_deref().map(id_key),
            })
            .collect();
        let mut entries = Vec::new();
        // The fencing rule reads every header, so a `latest` never answers a fenced record.
        let fenced = match keep {
            Keep::Newest(_) => crate::scan::fenced_flags(
                accepted
                    .iter()
                    .map(|(_, src)| self.build_shell(src))
                    .collect::<Vec<_>>()
                    .iter(),
            ),
            _ => Vec::new(),
        };
        match keep {
            Keep::All => {
                for (mut comment, src) in accepted {
                    self.address(&mut comment);
                    let record = self.build(src)?;
                    entries.push(Entry {
                        record,
                        comment,
                        fenced: false,
                    });
                }
            }
            Keep::Newest(wanted) => {
                for (at, (mut comment, src)) in accepted.into_iter().enumerate().rev() {
                    if fenced.get(at).copied().unwrap_or(false) {
                        continue;
                    }
                    self.address(&mut comment);
                    let shell = self.build_shell(&src);
                    let mut entry = Entry {
                        record: shell,
                        comment,
                        fenced: false,
                    };
                    if wanted(&entry) {
                        entry.record = self.build(src)?;
                        entries.push(entry);
                        break;
                    }
                }
            }
            Keep::Pair(pair, whole, _) => {
                let mut mine = Vec::new();
                for (mut comment, src) in accepted {
                    let entry = Entry {
                        record: self.build_shell(&src),
                        comment: comment.clone(),
                        fenced: false,
                    };
                    if !pair(&entry) {
                        continue;
                    }
                    self.address(&mut comment);
                    mine.push((Entry { comment, ..entry }, src));
                }
                // The fencing rule first: the checkpoint built whole is the newest unfenced one.
                let fenced = crate::scan::fenced_flags(mine.iter().map(|(e, _)| &e.record));
                let mut built = false;
                for ((mut entry, src), fenced) in mine.into_iter().zip(fenced).rev() {
                    entry.fenced = fenced;
                    if !built && !fenced && whole(&entry) {
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
        ids.extend(self.known.iter().map(|id| id_key(id)));
        let held = Held {
            set: ids,
            index: self.index.take(),
        };
        Ok((scan, held))
    }

    /// Fills in a comment's web address from its slot.
    fn address(&self, comment: &mut CommentInfo) {
        let Some(id) = comment.id else {
            return;
        };
        if let Ok(at) = self.slots.binary_search_by_key(&id, |s| s.i) {
            comment.url.clone_from(&self.slots[at].w);
        }
    }

    /// The record without its data (a `null` in its place), to test a predicate on.
    fn build_shell(&self, src: &Src<'_>) -> Record {
        match src {
            Src::Slot(head, _) => head.record(Value::Null),
            Src::Parsed(r) => (**r).clone(),
        }
    }

    /// The whole record, its source kept.
    fn whole(&self, src: &Src<'_>) -> Result<Record, String> {
        match src {
            Src::Parsed(r) => Ok((**r).clone()),
            Src::Slot(head, blob) => self.build(Src::Slot(head, blob)),
        }
    }

    /// The whole record.
    fn build(&self, src: Src<'_>) -> Result<Record, String> {
        match src {
            Src::Parsed(r) => Ok(*r),
            Src::Slot(head, Blob::In(raw)) => serde_json::from_str(raw.get())
                .map(|data| head.record(data))
                .map_err(|e| format!("a record's data does not read: {e}")),
            Src::Slot(head, Blob::At(off, len, sum)) => {
                let data = self
                    .data
                    .as_ref()
                    .ok_or("a record's data is in a base that is gone")?;
                Ok(head.record(data.read(*off, *len, *sum)?))
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
