//! The summary built one slot at a time (issue #44's streaming summary): from a walk of a
//! thread's slots ([`Summary::of`]), or as a full read's digest makes each slot, while the list
//! still downloads ([`Streamed`]), so the slots need not be read back from the spill for it.
//!
//! A streamed summary stands for [`Summary::of`] of the read's slots only when it saw exactly
//! them, in the same order, as the reader reads them: every slot in ascending comment id order
//! with no repeats (the read sorts them so), every one the digest's (no comment parsed later, no
//! unreadable one pushed after), and every author one the reader trusts (the digest makes each
//! slot as a trusted author's; the reader's trust is known only once the listing is done). Then
//! the thread's first signed record is the first signed slot folded, known for every slot when
//! it is folded (a record is refused by a signed one before it). Whenever one of these does not
//! hold, the caller summarizes the slots as before.

use std::collections::BTreeSet;

use super::fold::Fold;
use super::{ID_BYTES, Role, Summary, inline, role, tail_of};
use crate::mirror::deleted::OnIssues;
use crate::mirror::files::Data;
use crate::mirror::slot::Slot;
use crate::mirror::slots::Slots;
use crate::scan::Trust;

/// A summary being folded, one slot at a time in comment id order.
pub(super) struct Folding<'a> {
    fold: Fold<'a>,
    /// The slots updated in the newest second so far (the tail is among them).
    newest: Option<(i64, Vec<Slot>)>,
    /// How many slots were folded.
    n: usize,
    /// How many comments on each issue were folded, and taken as extra slots.
    held: OnIssues,
}

/// What a finished fold gives: the summary and the accepted records' `Id`s, or `None` when
/// the fold cannot be exact (the whole thread is then classified).
pub(in crate::mirror) type Finished = Option<(Summary, Vec<[u8; ID_BYTES]>)>;

impl<'a> Folding<'a> {
    /// A fold of a thread whose first validly signed record is comment `first_signed` (as far
    /// as it is known: see [`Folding::signed`]).
    pub(super) fn new(data: Option<&'a Data>, trust: &'a Trust, first_signed: Option<u64>) -> Self {
        Folding {
            fold: Fold::new(data, trust, first_signed),
            newest: None,
            n: 0,
            held: OnIssues::default(),
        }
    }

    /// Folds in the next slot (for the table, the rejected, the lineage and the `Id`s).
    pub(super) fn fold(&mut self, slot: &Slot) -> Result<(), String> {
        self.fold.add(self.n, slot)?;
        self.n += 1;
        self.held.add(slot);
        Ok(())
    }

    /// Notes the slot just folded for the tail (`slot` may hold its data elsewhere than the
    /// copy folded: the data the summary is finished with).
    pub(super) fn tail(&mut self, slot: &Slot) {
        let second = slot.u.0.timestamp();
        match &mut self.newest {
            Some((top, _)) if second < *top => {}
            Some((top, tail)) if second == *top => tail.push(slot.clone()),
            _ => self.newest = Some((second, vec![slot.clone()])),
        }
    }

    /// The summary of `slots` (their data in `data`) under `trust`: the folded ones, and
    /// `extra`, slots that were not folded and no record (see [`Extra`]).
    pub(super) fn finish<S: Slots + ?Sized>(
        self,
        slots: &S,
        data: Option<&Data>,
        trust: &Trust,
        extra: &Extra,
    ) -> Result<Finished, String> {
        let Folding {
            mut fold,
            newest,
            held,
            ..
        } = self;
        let Some((picked, latest)) = fold.newest() else {
            return Ok(None);
        };
        let first_signed = fold.first_signed();
        let Fold {
            ids,
            mut lines,
            unsigned,
            mut rejected,
            ..
        } = fold;
        for (agent, session, n) in latest {
            let slot = slots.nth(extra.position(n))?;
            if let Role::Record(_, Some(id)) = role(&slot, trust, first_signed) {
                lines.add(&agent, &session, None, Some(&id));
            }
        }
        let table = picked
            .into_iter()
            .map(|n| inline(&*slots.nth(extra.position(n))?, data))
            .collect::<Result<Vec<_>, _>>()?;
        // What the fold would have made of the extra slots: no record, so no key, lineage or
        // `Id`; only the stale ones, and the tail (the tail is sorted by `tail_of`).
        for slot in &extra.slots {
            match role(slot, trust, first_signed) {
                Role::Stale => rejected.push(inline(slot, data)?),
                Role::Ignored => {}
                Role::Record(..) => return Err("a slot not folded holds a record".into()),
            }
        }
        rejected.sort_by_key(|s| s.i);
        let tail = newest.map_or(Vec::new(), |(_, tail)| tail);
        let summary = Summary {
            max_id: slots.last_id().unwrap_or(0),
            table,
            rejected,
            tail: tail_of(tail.iter().chain(&extra.slots), data)?,
            lines: lines.finish(),
            lined: true,
            first_signed,
            unsigned,
            held: Some(held.into_pairs()),
            ..Summary::default()
        };
        Ok(Some((summary, ids.into_iter().collect())))
    }
}

/// The slots of a read that its digest did not fold, each one no record (an unreadable
/// comment, an untrusted author's): where they are among the read's slots.
#[derive(Default)]
pub(super) struct Extra {
    slots: Vec<Slot>,
    /// Their places among the read's slots, ascending.
    at: Vec<usize>,
}

impl Extra {
    /// The place among all the slots of the `n`th slot folded: after every extra slot placed
    /// at or before it.
    fn position(&self, n: usize) -> usize {
        let mut at = n;
        for &p in &self.at {
            if p > at {
                break;
            }
            at += 1;
        }
        at
    }
}

/// Trust as the digest makes slots: everyone's (the reader's is checked at the end).
static EVERYONE: Trust = Trust::Everyone;

/// The summary folded as a full read's digest makes its slots, in the order it makes them.
pub(in crate::mirror) struct Streamed {
    folding: Folding<'static>,
    /// The authors of the slots folded.
    authors: BTreeSet<String>,
    /// The comment id of the last slot folded.
    last: Option<u64>,
    /// Every slot came after the one before it in comment id order.
    ascending: bool,
    /// The read's slots the digest did not make.
    extra: Extra,
}

impl Default for Streamed {
    fn default() -> Self {
        Streamed {
            folding: Folding::new(None, &EVERYONE, None),
            authors: BTreeSet::new(),
            last: None,
            ascending: true,
            extra: Extra::default(),
        }
    }
}

impl Streamed {
    /// Folds in the digest's next slot, as the digest made it (its data inline).
    pub(in crate::mirror) fn fold(&mut self, slot: &Slot) -> Result<(), String> {
        if self.last.is_some_and(|last| slot.i <= last) {
            self.ascending = false;
        }
        self.last = Some(slot.i);
        if !self.authors.contains(&slot.a) {
            self.authors.insert(slot.a.clone());
        }
        if slot.signed() {
            self.folding.fold.signed(slot.i);
        }
        self.folding.fold(slot)
    }

    /// Notes the slot just folded for the tail, as the read will read it back (its data
    /// spilled, when it was).
    pub(in crate::mirror) fn tail(&mut self, slot: &Slot) {
        self.folding.tail(slot);
    }

    /// A slot of the read the digest did not make, and so not folded: `false` when it may hold
    /// a record (the fold cannot stand for the read's summary then).
    pub(in crate::mirror) fn extra(&mut self, slot: &Slot) -> bool {
        use crate::mirror::slot::Body;
        if matches!(slot.b, Body::R(..) | Body::I(_)) {
            return false;
        }
        self.extra.slots.push(slot.clone());
        self.folding.held.add(slot);
        true
    }

    /// Where the read's slots, sorted by comment id with no repeats, are: their ids in order.
    /// `false` when they are not exactly the slots folded and the extra ones (each once).
    pub(in crate::mirror) fn place(&mut self, ids: impl Iterator<Item = u64>) -> bool {
        self.extra.slots.sort_by_key(|s| s.i);
        let mut extra = self.extra.slots.iter().map(|s| s.i).peekable();
        let mut at = Vec::with_capacity(self.extra.slots.len());
        let mut total = 0;
        for (n, id) in ids.enumerate() {
            if extra.peek() == Some(&id) {
                extra.next();
                at.push(n);
            }
            total += 1;
        }
        self.extra.at = at;
        extra.next().is_none() && total == self.folding.n + self.extra.slots.len()
    }

    /// Whether this fold may stand for the summary of a read trusting `trust` whose slots are
    /// exactly the ones folded (the caller knows that): they came in comment id order, and
    /// the reader trusts each of their authors.
    pub(in crate::mirror) fn holds_under(&self, trust: &Trust) -> bool {
        self.ascending && self.authors.iter().all(|a| trust.allows(a))
    }

    /// The summary of `slots` (the slots folded, in the same order, their data in `data`)
    /// under `trust`, as [`Summary::of`] makes it; `None` when this fold cannot stand for it
    /// (the caller summarizes the slots as before).
    pub(in crate::mirror) fn finish<S: Slots + ?Sized>(
        self,
        slots: &S,
        data: Option<&Data>,
        trust: &Trust,
    ) -> Result<Finished, String> {
        if !self.holds_under(trust) {
            return Ok(None);
        }
        match self.folding.finish(slots, data, trust, &self.extra)? {
            Some(made) => Ok(Some(made)),
            None => {
                tracing::debug!(
                    "a record carried from a second already folded: summarizing it whole"
                );
                Summary::of_whole(&slots.whole()?, data, trust).map(Some)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::fold::tests::comments;
    use super::*;
    use crate::format::{SigningKey, sign};
    use crate::mirror::digest::Digested;
    use crate::mirror::fresh::Fresh;
    use crate::scan::Verifier;
    use crate::store::{Comment, Skip, Unreadable};

    /// What a comment of a read is to the test's forge.
    enum Listed {
        /// Taken whole by the digest.
        Digested(Comment),
        /// Rejected by the store: pushed after the listing.
        Rejected(Unreadable),
    }

    fn key() -> SigningKey {
        SigningKey::new("a test signing key").expect("a key")
    }

    /// A thread of `n` comments (the fold's: repeated keys, health, forks, copies, people's
    /// comments, broken records) with, when `signing`, records signed from a third of the way
    /// on, some unsigned after that and some whose signature is wrong; and some comments the
    /// store rejects (by an author not trusted, unreadable, too large).
    fn varied(n: u64, seed: u64, carry_old: bool, signing: bool) -> Vec<Listed> {
        let key = key();
        (comments(n, seed, carry_old).into_iter().enumerate())
            .map(|(k, mut c)| {
                let k = k as u64;
                let record = c.body.contains("[CHECKPOINT]") || c.body.contains("[HEALTH]");
                if signing && record && k > n / 3 {
                    match k % 7 {
                        0 => {}
                        1 => c.body = sign(&c.body, &key).replace("\"i\"", "\"j\""),
                        _ => c.body = sign(&c.body, &key),
                    }
                }
                let unreadable = |author: Option<&str>, skipped| Unreadable {
                    id: Some(c.id),
                    author: author.map(str::to_string),
                    created_at: Some(c.created_at),
                    updated_at: Some(c.updated_at),
                    url: c.url.clone(),
                    reason: "it does not read".into(),
                    skipped,
                    head: None,
                };
                match (k * 31 + seed) % 53 {
                    0 => Listed::Rejected(unreadable(Some("a-stranger"), Some(Skip::Untrusted))),
                    1 => Listed::Rejected(unreadable(None, None)),
                    2 => Listed::Rejected(unreadable(Some("ca-bot"), None)),
                    3 => Listed::Rejected(unreadable(
                        Some("ca-bot"),
                        Some(Skip::TooLarge { len: 9, cap: 8 }),
                    )),
                    _ => Listed::Digested(c),
                }
            })
            .collect()
    }

    /// How a test read goes wrong for the fold.
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Twist {
        None,
        /// Two comments handed to the digest out of comment id order.
        Swapped,
        /// A comment handed to the digest twice.
        Repeated,
        /// A comment the digest took that the listing leaves out.
        LeftOut,
        /// A comment whose body the digest did not take: parsed after the listing.
        ParsedAfter,
        /// An unreadable comment with the id of one the digest took.
        SameId,
        /// A pushed slot holding a record.
        PushedRecord,
        /// The slots not sorted.
        Unsorted,
    }

    /// The slots of a full read of `listed` under `trust`, as `read.rs` makes them, and the
    /// spilled data.
    fn read(
        mut listed: Vec<Listed>,
        trust: &Trust,
        signing: bool,
        twist: Twist,
        dir: &std::path::Path,
    ) -> (Fresh, Option<Arc<Data>>) {
        let verify = signing.then(|| Verifier::new(&[key()], false)).flatten();
        let digested = Digested::spilling(dir).verifying(verify.as_ref());
        let digest = digested.digest();
        let mut ids = Vec::new();
        let mut rejects = Vec::new();
        let mut after = Vec::new();
        if twist == Twist::Swapped {
            listed.swap(10, 20);
        }
        for (k, one) in listed.into_iter().enumerate() {
            match one {
                Listed::Digested(c) if twist == Twist::ParsedAfter && k == 30 => after.push(c),
                Listed::Digested(mut c) => {
                    let again = c.clone();
                    assert!(digest.apply(&mut c), "the digest takes the comment whole");
                    if twist == Twist::Repeated && k == 30 {
                        assert!(digest.apply(&mut again.clone()));
                    }
                    if !(twist == Twist::LeftOut && k == 30) {
                        ids.push(again.id);
                    }
                    if twist == Twist::SameId && k == 40 {
                        let mut u = Slot::of(again.clone(), true, None).expect("a slot");
                        u.b = crate::mirror::slot::Body::U("odd".into());
                        rejects.push(u);
                    }
                    if twist == Twist::PushedRecord && k == 40 {
                        let mut pushed = again;
                        pushed.id += 1_000_000;
                        rejects.push(Slot::of(pushed, true, None).expect("a slot"));
                    }
                }
                Listed::Rejected(u) => {
                    let id = u.id.expect("an id");
                    rejects.push(Slot::unreadable(&u, id));
                }
            }
        }
        digest.listed(ids, None);
        let data = digested.data().expect("the spills read back");
        let mut fresh = digested.fresh(after, trust).expect("the slots");
        for slot in rejects {
            fresh.push(slot);
        }
        if twist != Twist::Unsorted {
            fresh.sort_dedupe();
        }
        (fresh, data)
    }

    /// The summary folded as the digest made the slots (`None`: it does not stand for them)
    /// and the one `Summary::of` makes of them, as JSON with their sorted `Id`s.
    fn both(mut fresh: Fresh, data: Option<&Data>, trust: &Trust) -> (Option<String>, String) {
        let shown = |(sum, mut ids): (Summary, Vec<[u8; ID_BYTES]>)| {
            ids.sort_unstable();
            ids.dedup();
            format!(
                "{}\n{ids:?}",
                serde_json::to_string_pretty(&sum).expect("json")
            )
        };
        let streamed = fresh.take_stream().map(|stream| {
            let made = stream.finish(&fresh, data, trust).expect("a summary");
            shown(made.expect("the fold stands for the read"))
        });
        let of = shown(Summary::of(&fresh, data, trust).expect("a summary"));
        (streamed, of)
    }

    fn trusting(authors: &[&str]) -> Trust {
        Trust::Only(authors.iter().map(|a| a.to_string()).collect())
    }

    #[test]
    fn the_summary_folded_as_the_slots_are_made_is_the_summary_of_the_slots() {
        let dir = tempfile::tempdir().expect("a directory");
        let cases = [
            (300, 1, false, false, Trust::Everyone),
            (2000, 2, false, true, Trust::Everyone),
            (2000, 3, false, true, trusting(&["ca-bot"])),
            (9000, 4, false, false, trusting(&["ca-bot", "someone"])),
            // Copies carried from seconds the fold dropped: the whole thread is classified.
            (9000, 7, true, true, trusting(&["ca-bot"])),
        ];
        for (n, seed, carry_old, signing, trust) in cases {
            let listed = varied(n, seed, carry_old, signing);
            let rejected = (listed.iter())
                .filter(|l| matches!(l, Listed::Rejected(_)))
                .count();
            assert!(rejected > 10, "the store rejects comments along the thread");
            let (fresh, data) = read(listed, &trust, signing, Twist::None, dir.path());
            let (streamed, of) = both(fresh, data.as_deref(), &trust);
            let streamed = streamed.expect("the fold stands for the read's slots");
            assert_eq!(streamed, of, "{n} comments, seed {seed}");
            if signing {
                assert!(of.contains("\"first_signed\""), "some records are signed");
                assert!(of.contains("does not match"), "a wrong signature is stale");
                assert!(
                    of.contains("\"unsigned\""),
                    "unsigned records before the first"
                );
            }
        }
    }

    #[test]
    fn a_fold_of_copies_carried_late_classifies_the_whole_thread() {
        // The case above whose fold is inexact: its summary came from `of_whole`.
        let slots: Vec<Slot> = (comments(9000, 7, true).into_iter())
            .map(|c| Slot::of(c, true, None).expect("a slot"))
            .collect();
        let mut folding = Folding::new(None, &EVERYONE, None);
        for slot in &slots {
            folding.fold(slot).expect("folded");
        }
        let made = folding.finish(&*slots, None, &EVERYONE, &Extra::default());
        assert!(made.expect("no error").is_none(), "the fold is inexact");
    }

    #[test]
    fn a_fold_that_cannot_stand_for_the_read_s_slots_is_not_used() {
        let dir = tempfile::tempdir().expect("a directory");
        let trust = trusting(&["ca-bot"]);
        for twist in [
            Twist::Swapped,
            Twist::Repeated,
            Twist::LeftOut,
            Twist::ParsedAfter,
            Twist::SameId,
            Twist::PushedRecord,
            Twist::Unsorted,
        ] {
            let listed = varied(300, 11, false, true);
            let (fresh, data) = read(listed, &trust, true, twist, dir.path());
            let (streamed, _) = both(fresh, data.as_deref(), &trust);
            assert_eq!(streamed, None, "{twist:?}");
        }
        // An author the reader does not trust, among the digest's slots.
        let listed = varied(300, 11, false, true);
        let (fresh, data) = read(listed, &trusting(&["other"]), true, Twist::None, dir.path());
        let (streamed, _) = both(fresh, data.as_deref(), &trust);
        assert_eq!(streamed, None, "an untrusted author");
        // The same read, untwisted: the fold stands for it (so each case above can fail).
        let listed = varied(300, 11, false, true);
        let (fresh, data) = read(listed, &trust, true, Twist::None, dir.path());
        let (streamed, of) = both(fresh, data.as_deref(), &trust);
        assert_eq!(streamed, Some(of));
    }
}
