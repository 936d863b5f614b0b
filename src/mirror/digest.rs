//! What the mirror makes of each comment as a listing streams in ([`crate::store::Digest`]): the
//! body is parsed on the decoding thread while the rest of the answer downloads, a record's data
//! goes straight to a spill file beside the mirror, and the comment's slot (its header, author,
//! times and address, the data's place in the spill) to a second one. So a cold read holds a few
//! bytes per comment (where its slot is), not its body, data or header: the slots are read back
//! one at a time when the base is written (`fresh.rs`). The summary is folded as each slot is
//! made, while its data is still in memory (`summary/stream.rs`); the read summarizes the slots
//! read back only when that fold cannot stand for them.
//!
//! The spills are unlinked as soon as they are created (they live while this process holds them
//! open), so nothing is left behind by a crash; the base written from a full read copies the data
//! out of the data spill, and an incremental read takes its few records back in memory before the
//! delta is saved (the delta keeps its data inline). Without a spill (none can be made, or a
//! write to it failed) the slots are held in memory, as they are made.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

mod filed;

use super::files::Data;
use super::fresh::{Fresh, Item, Spot};
use super::slot::{Blob, Body, Slot};
use super::summary::Streamed;
use crate::scan::{Trust, Verifier};
use crate::store::{Comment, Digest};

/// A body as the digest parses it.
type Parsed = Result<Body, String>;

/// The slots one listing's digest made, by comment id, and the spills they went to.
#[derive(Clone, Default)]
pub(super) struct Digested(Arc<Mutex<Made>>);

#[derive(Default)]
struct Made {
    slots: filed::Filed<Kept>,
    /// The records' data.
    spill: Option<Spill>,
    /// The slots, as JSON.
    slot_spill: Option<Spill>,
    /// The slot spill, open for reading once the listing is done ([`Digested::data`]).
    spilled: Option<Arc<Data>>,
    /// The authors of the spilled slots (a thread has few).
    authors: BTreeSet<String>,
    /// The comments taken whole that the listing holds, by id ([`Digest::listed`]).
    listed: Vec<u64>,
    /// The reader's signature check, when it has keys.
    verify: Option<Arc<Verifier>>,
    /// The summary, folded as the slots are made ([`Streamed`]).
    stream: Streamed,
    /// A slot could not be folded: the summary is made from the slots read back.
    unstreamed: bool,
}

/// A slot the digest made: held, or where it was spilled.
enum Kept {
    Held(Box<Result<Slot, String>>),
    At(Spot),
}

struct Spill {
    file: BufWriter<File>,
    /// Where the next write goes.
    len: u64,
    /// A write failed: the spill is not read back (and later records stay in memory).
    broken: bool,
}

impl Spill {
    fn new(file: File) -> Spill {
        Spill {
            file: BufWriter::with_capacity(256 * 1024, file),
            len: 0,
            broken: false,
        }
    }

    /// Appends `bytes`: where they went, `None` when the spill is broken.
    fn put(&mut self, bytes: &[u8]) -> Option<(u64, u64)> {
        if self.broken {
            return None;
        }
        match self.file.write_all(bytes) {
            Ok(()) => {
                let len = bytes.len() as u64;
                self.len += len;
                Some((self.len - len, len))
            }
            Err(e) => {
                tracing::debug!("cannot spill the read cache's data ({e}); keeping it in memory");
                self.broken = true;
                None
            }
        }
    }

    /// Moves a record's data from memory to the end of the spill, with its checksum (taken
    /// here, on the decoding thread, while the bytes are in memory: a base copies it as it is).
    fn take(&mut self, blob: &mut Blob) {
        let Blob::In(raw) = blob else {
            return;
        };
        let bytes = raw.get().as_bytes();
        if let Some((off, len)) = self.put(bytes) {
            *blob = Blob::At(off, len, super::files::sum(bytes));
        }
    }

    /// The spill, open for reading; `None` when nothing went to it.
    fn finish(self) -> Result<Option<Arc<Data>>, String> {
        if self.broken {
            return Err("a write to the read cache's spill failed".into());
        }
        let len = self.len;
        let file = self.file.into_inner().map_err(|e| e.error().to_string())?;
        Ok((len > 0).then(|| Arc::new(Data::whole(file))))
    }
}

impl Made {
    /// Keeps `slot`: spilled when its data is (so it reads back whole from the two spills),
    /// else held.
    fn keep(&mut self, slot: Slot) -> Kept {
        let inline = matches!(&slot.b, Body::R(_, Blob::In(_)));
        if let (false, Some(spill)) = (inline, self.slot_spill.as_mut())
            && let Ok(json) = serde_json::to_vec(&slot)
            && let Some((off, len)) = spill.put(&json)
            && let Ok(len) = u32::try_from(len)
        {
            if !self.authors.contains(&slot.a) {
                self.authors.insert(slot.a.clone());
            }
            return Kept::At(Spot {
                off,
                len,
                signed: slot.signed(),
                record: matches!(slot.b, Body::R(..)),
            });
        }
        Kept::Held(Box::new(Ok(slot)))
    }
}

impl Digested {
    /// A digested listing whose records' data and slots spill into new files in `dir` (when
    /// they can be made there; else they stay in memory).
    pub fn spilling(dir: &Path) -> Digested {
        Digested::into(spill_file(dir), spill_file(dir))
    }

    /// A digested listing whose records' data spills into `file`, and its slots into `slots`.
    fn into(file: Option<File>, slots: Option<File>) -> Digested {
        let made = Made {
            spill: file.map(Spill::new),
            slot_spill: slots.map(Spill::new),
            ..Made::default()
        };
        Digested(Arc::new(Mutex::new(made)))
    }

    /// This digest, checking each record's signature with `verify`.
    pub fn verifying(self, verify: Option<&Verifier>) -> Digested {
        if let Ok(mut made) = self.0.lock() {
            made.verify = verify.cloned().map(Arc::new);
        }
        self
    }

    /// The digest to hand the store: it takes each kept comment whole and keeps the slot
    /// [`Body::of`] makes of it (as for a trusted author: a store keeps only those; the
    /// reader's trust is applied when the slot is taken out), a record's data in the spill, in
    /// the comments' order.
    pub fn digest(&self) -> Digest {
        let verify = self.0.lock().ok().and_then(|m| m.verify.clone());
        let made = self.clone();
        let take = move |c: &mut Comment| {
            // Poisoned: the comment stays where it is, and is read as usual.
            if made.0.is_poisoned() {
                return false;
            }
            let body = Body::of(std::mem::take(&mut c.body), true, verify.as_deref())
                .map_err(|e| e.to_string());
            made.file(c, body)
        };
        let made = self.clone();
        let listed = move |ids| {
            if let Ok(mut made) = made.0.lock() {
                made.listed = ids;
            }
        };
        Digest::whole(take, listed)
    }

    /// Files comment `c` (its body taken, and parsed as `body`): its record's data to the
    /// spill, its slot kept. `false` when the digest cannot take it (poisoned).
    fn file(&self, c: &mut Comment, body: Parsed) -> bool {
        let Ok(mut made) = self.0.lock() else {
            return false;
        };
        let comment = Comment {
            id: c.id,
            author: std::mem::take(&mut c.author),
            created_at: c.created_at,
            updated_at: c.updated_at,
            url: c.url.take(),
            body: String::new(),
        };
        let kept = match body {
            Ok(body) => {
                let mut slot = Slot::holding(comment, body);
                // Folded while its data is in memory; its tail copy as the read reads it back.
                if !made.unstreamed && made.stream.fold(&slot).is_err() {
                    made.unstreamed = true;
                }
                if let (Body::R(_, blob), Some(spill)) = (&mut slot.b, made.spill.as_mut()) {
                    spill.take(blob);
                }
                if !made.unstreamed {
                    made.stream.tail(&slot);
                }
                made.keep(slot)
            }
            Err(e) => Kept::Held(Box::new(Err(e))),
        };
        made.slots.insert(c.id, kept);
        true
    }

    /// What the digest made of comment `id`, when it took it (or its body).
    fn made(&self, id: u64) -> Option<Kept> {
        let mut m = self.0.lock().ok()?;
        m.slots.remove(id)
    }

    /// `comment` (a comment of the listing) as an item of the read's slots, trusted as `trust`
    /// says: from what the digest made of it when it took its body, else parsed now.
    /// `true` with it when the digest made it.
    fn slot(&self, comment: Comment, trust: &Trust) -> Result<(Item, bool), String> {
        let made = match comment.body.is_empty() {
            true => self.made(comment.id),
            false => None,
        };
        let Some(made) = made else {
            let verify = self.0.lock().ok().and_then(|m| m.verify.clone());
            let trusted = trust.allows(&comment.author);
            let slot = Slot::of(comment, trusted, verify.as_deref()).map_err(|e| e.to_string())?;
            return Ok((Item::Held(Box::new(slot)), false));
        };
        Ok((Digested::item(comment.id, made, trust)?, true))
    }

    /// What the digest made of comment `id` as an item of the read's slots, trusted as `trust`
    /// says.
    fn item(id: u64, made: Kept, trust: &Trust) -> Result<Item, String> {
        let slot = match made {
            Kept::Held(made) => {
                let mut slot = (*made)?;
                if !trust.allows(&slot.a) {
                    slot.b = slot.b.distrusted();
                }
                slot
            }
            Kept::At(at) => return Ok(Item::At { i: id, at }),
        };
        Ok(Item::Held(Box::new(slot)))
    }

    /// The listing's `comments` and the comments it holds that the digest took whole, as the
    /// read's slots (in that order), trusted as `trust` says. The listing gives its memory back
    /// as they are made. The summary folded as the digest made them goes with them, when every
    /// slot is one the digest made.
    pub fn fresh(&self, comments: Vec<Comment>, trust: &Trust) -> Result<Fresh, String> {
        let mut failed = None;
        let mut all_made = true;
        let mut items = crate::store::map_shrinking(comments, |c| match self.slot(c, trust) {
            Ok((item, made)) => {
                all_made &= made;
                Some(item)
            }
            Err(e) => {
                failed.get_or_insert(e);
                None
            }
        });
        let listed = match self.0.lock() {
            Ok(mut m) => std::mem::take(&mut m.listed),
            Err(_) => Vec::new(),
        };
        // The usual case: the listing holds the comments the digest took, in the order taken,
        // and their slots become the items where they are.
        let in_order = (self.0.lock().ok()).and_then(|mut m| m.slots.take_in_order(&listed));
        let listed = match in_order {
            Some(made) => {
                let made = (made.into_iter())
                    .map(|(id, kept)| Digested::item(id, kept, trust))
                    .collect::<Result<Vec<_>, _>>();
                match made {
                    Ok(made) if items.is_empty() => items = made,
                    Ok(made) => items.extend(made),
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
                Vec::new()
            }
            None => listed,
        };
        items.reserve_exact(listed.len());
        for id in listed {
            let item = match self.made(id) {
                Some(made) => Digested::item(id, made, trust),
                None => Err("a comment the read cache took is gone".to_string()),
            };
            match item {
                Ok(item) => items.push(item),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let (spilled, distrust, stream) = match self.0.lock() {
            Ok(mut m) => {
                let all = m.authors.iter().all(|a| trust.allows(a));
                let stream = std::mem::take(&mut m.stream);
                let stream =
                    (all_made && !m.unstreamed && stream.holds_under(trust)).then_some(stream);
                (m.spilled.clone(), (!all).then(|| trust.clone()), stream)
            }
            Err(_) => (None, None, None),
        };
        Ok(Fresh::new(items, spilled, distrust).streamed(stream))
    }

    /// The data spill, for reading the data of the slots made from it (`None` when nothing
    /// spilled). The digest spills no more after this. An error when a spill cannot be read
    /// back (its last writes failed): the slots that point into it are lost, so the listing
    /// must be read again (without a spill).
    pub fn data(&self) -> Result<Option<Arc<Data>>, String> {
        let Ok(mut made) = self.0.lock() else {
            return Ok(None);
        };
        if let Some(slots) = made.slot_spill.take() {
            made.spilled = slots.finish()?;
        }
        match made.spill.take() {
            Some(spill) => spill.finish(),
            None => Ok(None),
        }
    }
}

/// A new private file in `dir`, unlinked at once (Unix: it lives while open); `None` when it
/// cannot be made, or on a system where an open file cannot be unlinked.
fn spill_file(dir: &Path) -> Option<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        crate::fsutil::create_private_dir(dir).ok()?;
        let path = dir.join(format!(".spill-{}", super::random_hex()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .ok()?;
        std::fs::remove_file(&path).ok()?;
        Some(file)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Takes the data of `slots` that lives in `data` (a spill) back into memory: for slots that
/// outlive the spill (an incremental read's delta).
pub(super) fn inline(slots: &mut [Slot], data: &Data) -> Result<(), String> {
    for slot in slots {
        if let Body::R(_, blob @ Blob::At(..)) = &mut slot.b {
            let Blob::At(offset, len, sum) = *blob else {
                continue;
            };
            let bytes = data.checked(offset, len, sum)?;
            let raw = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            *blob = Blob::In(raw);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::slots::Slots;
    use chrono::DateTime;

    fn comment(id: u64, body: &str) -> Comment {
        Comment {
            id,
            author: "ca-bot".into(),
            created_at: DateTime::UNIX_EPOCH,
            updated_at: DateTime::from_timestamp(id as i64, 0).unwrap(),
            url: Some(format!("https://forge/o/r/issues/1#issuecomment-{id}")),
            body: body.into(),
        }
    }

    fn trust(trusted: bool) -> Trust {
        match trusted {
            true => Trust::Everyone,
            false => Trust::Only(["someone-else".to_string()].into()),
        }
    }

    fn record(phase: &str) -> String {
        let record =
            crate::format::Record::checkpoint("w", "s", phase, serde_json::json!({"p": phase}))
                .expect("a record");
        crate::format::Renderer::embedded()
            .and_then(|r| r.render(&record))
            .expect("a rendered record")
    }

    /// A slot as JSON, its data read from `data` when it is not inline.
    fn shown(mut slot: Slot, data: Option<&Data>) -> String {
        if let Some(data) = data {
            inline(std::slice::from_mut(&mut slot), data).unwrap();
        }
        serde_json::to_string(&slot).unwrap()
    }

    /// A base's header for the tests' bases.
    fn base_header() -> super::super::disk::Header {
        super::super::disk::Header {
            schema: super::super::disk::SCHEMA,
            generation: "g".into(),
            location: "here".into(),
            trust: None,
            synced_at: chrono::Utc::now(),
            cursor: None,
            warnings: Vec::new(),
            incomplete: false,
            index_len: 0,
            index_sum: 0,
            signing: None,
        }
    }

    /// Hands `bodies` to `digested`'s digest as comments 0, 1, …, and says the listing holds
    /// them (in the reverse order).
    fn digest_all(digested: &Digested, bodies: &[&str]) {
        let digest = digested.digest();
        for (i, body) in bodies.iter().enumerate() {
            let mut c = comment(i as u64, body);
            assert!(digest.apply(&mut c), "the digest takes the comment whole");
            assert!(c.body.is_empty() && c.author.is_empty() && c.url.is_none());
        }
        digest.listed((0..bodies.len() as u64).rev().collect(), None);
    }

    #[test]
    fn a_digested_comment_makes_the_slot_a_parse_after_the_listing_makes() {
        let one = record("clone_complete");
        let two = record("subtask_1_complete");
        let bodies = [
            one.as_str(),
            "[CHECKPOINT] not json",
            "a person's comment",
            two.as_str(),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (trusted, spill) in [(true, true), (false, true), (true, false), (false, false)] {
            let digested = match spill {
                true => Digested::spilling(dir.path()),
                false => Digested::default(),
            };
            digest_all(&digested, &bodies);
            let data = digested.data().unwrap();
            assert_eq!(data.is_some(), spill, "the records' data is in the spill");
            // A comment the digest did not take is parsed as usual; the others come in the
            // order the listing gives them, after it.
            let listing = vec![comment(9, "a person's comment")];
            let fresh = digested.fresh(listing, &trust(trusted)).unwrap();
            let want: Vec<String> = [Slot::of(comment(9, "a person's comment"), trusted, None)]
                .into_iter()
                .chain(
                    (bodies.iter().enumerate().rev())
                        .map(|(i, body)| Slot::of(comment(i as u64, body), trusted, None)),
                )
                .map(|slot| shown(slot.unwrap(), None))
                .collect();
            let mut walked = Vec::new();
            fresh
                .each(&mut |slot| {
                    walked.push(shown(slot.clone(), data.as_deref()));
                    Ok(())
                })
                .unwrap();
            assert_eq!(walked, want, "trusted: {trusted}, spill: {spill}");
            let third = fresh.nth(3).unwrap().into_owned();
            assert_eq!(shown(third, data.as_deref()), want[3]);
            let made: Vec<String> = (fresh.into_slots().unwrap().into_iter())
                .map(|slot| shown(slot, data.as_deref()))
                .collect();
            assert_eq!(made, want, "trusted: {trusted}, spill: {spill}");
        }
        // The spills are unlinked at once: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn only_the_comments_the_listing_holds_are_the_read_s() {
        let dir = tempfile::tempdir().unwrap();
        let digested = Digested::spilling(dir.path());
        let digest = digested.digest();
        for i in 0..3 {
            digest.apply(&mut comment(i, &record(&format!("subtask_{i}_complete"))));
        }
        // Comment 1 was another issue's, or of a list read again: the listing left it out.
        digest.listed(vec![2, 0], None);
        digested.data().unwrap();
        let mut fresh = digested.fresh(Vec::new(), &Trust::Everyone).unwrap();
        fresh.sort_dedupe();
        let ids: Vec<u64> = (fresh.into_slots().unwrap().iter()).map(|s| s.i).collect();
        assert_eq!(ids, [0, 2]);
        // A listed comment the digest never took is an error, never a comment dropped.
        let digested = Digested::spilling(dir.path());
        digested.digest().listed(vec![5], None);
        digested.data().unwrap();
        assert!(digested.fresh(Vec::new(), &Trust::Everyone).is_err());
    }

    #[test]
    fn a_spill_that_cannot_be_written_is_never_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read-only");
        std::fs::write(&path, "").unwrap();
        // Every write to it fails (once the buffer is flushed): the data's spill, or the slots'.
        for (data, slots) in [(true, false), (false, true)] {
            let broken = || Some(File::open(&path).unwrap());
            let digested =
                Digested::into(data.then(broken).flatten(), slots.then(broken).flatten());
            let bodies: Vec<String> = (0..2000)
                .map(|i| match slots {
                    true => format!("a person's comment {i}"),
                    false => record(&format!("subtask_{i}_complete")),
                })
                .collect();
            digest_all(
                &digested,
                &bodies.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            assert!(
                digested.data().is_err(),
                "the caller reads the listing again"
            );
        }
    }

    #[test]
    fn a_base_and_summary_made_from_spilled_slots_read_back_as_parsed() {
        let bodies: Vec<String> = (0..5)
            .map(|i| match i {
                2 => "a person's comment".to_string(),
                _ => record(&format!("subtask_{i}_complete")),
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let digested = Digested::spilling(dir.path());
        digest_all(
            &digested,
            &bodies.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let spill = digested.data().unwrap().expect("the data spilled");
        let mut fresh = digested.fresh(Vec::new(), &Trust::Everyone).unwrap();
        fresh.sort_dedupe();
        let path = dir.path().join("t.mirror");
        let header = base_header();
        super::super::disk::write_base(&path, header, &fresh, Some(&spill)).unwrap();
        let super::super::disk::Found::Ok((_, read, data)) = super::super::disk::load_base(&path)
        else {
            panic!("the base reads back");
        };
        assert_eq!(read.len(), bodies.len());
        for (slot, body) in read.iter().zip(&bodies) {
            let parsed = Slot::of(comment(slot.i, body), true, None).unwrap();
            assert_eq!(
                shown(slot.clone(), Some(&data)),
                shown(parsed, None),
                "{body:?}"
            );
        }
        // The summary of the spilled slots is the summary of the same slots in memory.
        use super::super::summary::Summary;
        let (spilled, mut spilled_ids) =
            Summary::of(&fresh, Some(&spill), &Trust::Everyone).unwrap();
        let (held, mut held_ids) = Summary::of(&*read, Some(&data), &Trust::Everyone).unwrap();
        spilled_ids.sort_unstable();
        held_ids.sort_unstable();
        assert_eq!(
            serde_json::to_string(&spilled).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
        assert_eq!(spilled_ids, held_ids);
        assert_eq!(spilled.table.len(), 1, "one key: the pair's checkpoints");
    }

    #[test]
    fn a_base_written_from_the_spilled_slots_bytes_is_the_base_written_from_the_slots() {
        use super::super::disk::{Found, load_base, write_base};
        let header = base_header();
        let bodies: Vec<String> = (0..600)
            .map(|i| match i % 5 {
                2 => format!("a person's comment {i}"),
                4 if i % 3 == 0 => "[CHECKPOINT] not json".to_string(),
                _ => record(&format!("subtask_{i}_complete")),
            })
            .collect();
        // 0: every slot spilled in order; 1: a record parsed after the listing, its data held
        // (the data of each record after it moves); 2: an author the reader does not trust;
        // 3: unreadable comments pushed among them.
        for case in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let digested = Digested::spilling(dir.path());
            let digest = digested.digest();
            let mut listed = Vec::new();
            let mut after = Vec::new();
            for (i, body) in bodies.iter().enumerate() {
                let mut c = comment(i as u64, body);
                if case == 1 && i == 300 {
                    after.push(c);
                    continue;
                }
                assert!(digest.apply(&mut c));
                listed.push(i as u64);
            }
            digest.listed(listed, None);
            let data = digested.data().unwrap();
            let mut fresh = digested.fresh(after, &trust(case != 2)).unwrap();
            if case == 3 {
                for id in [7, 201, 599] {
                    let mut slot = Slot::of(comment(id, ""), true, None).unwrap();
                    slot.b = Body::U("it does not read".into());
                    fresh.push(slot);
                }
            }
            fresh.sort_dedupe();
            let held = fresh.whole().unwrap().into_owned();
            let (from_spill, from_slots) = (dir.path().join("a"), dir.path().join("b"));
            write_base(&from_spill, header.clone(), &fresh, data.as_deref()).unwrap();
            write_base(&from_slots, header.clone(), &*held, data.as_deref()).unwrap();
            let (a, b) = (
                std::fs::read(&from_spill).unwrap(),
                std::fs::read(&from_slots).unwrap(),
            );
            assert!(a == b, "case {case}: the same base, byte for byte");
            // And it reads back as the slots it was written from.
            let Found::Ok((_, read, base)) = load_base(&from_spill) else {
                panic!("the base reads back");
            };
            assert_eq!(read.len(), held.len());
            for (got, want) in read.into_iter().zip(held) {
                assert_eq!(
                    shown(got, Some(&base)),
                    shown(want, data.as_deref()),
                    "{case}"
                );
            }
        }
    }
}
