//! One read through the mirror: load it, ask the store for what changed after its cursor (or
//! for everything), merge, save, and hand the slots to `view.rs`.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::Utc;

use super::deleted;
use super::digest::{self, Digested};
use super::disk::{self, COMPACT_AFTER, DeltaFile, Found, Header, SCHEMA, foreign};
use super::files;
use super::merge::{merge, unchanged};
use super::slot::Slot;
use super::summary::{IdIndex, Summary, checked, summarize};
use super::warm::{Asked, Warm};
use super::{Mirror, View, random_hex, sig};
use crate::scan::Verifier;
use crate::store::{
    Cursor, Delta, Effort, Keep as StoreKeep, Listing, StoreError, Thread, Unreadable,
};

/// The mirror as loaded.
#[derive(Default)]
pub(super) struct Loaded {
    pub(super) base: Option<(Header, Vec<Slot>, Arc<files::Data>)>,
    /// The delta, when it extends the base.
    pub(super) delta: Option<DeltaFile>,
    pub(super) salt: Option<String>,
    pub(super) login: Option<(String, String)>,
}

impl Mirror {
    /// Reads the thread through the whole mirror (base and delta). `trusted` are the configured
    /// trusted authors (the store's own login is added, from the cache when the token's
    /// fingerprint matches). `None` when a read from the cursor brought comments that show a
    /// deletion (`deleted.rs`) only once merged: the caller reads the whole thread.
    pub(super) async fn read_all<T: Thread>(
        &self,
        thread: &T,
        effort: Effort,
        trusted: &BTreeSet<String>,
        verify: Option<&Verifier>,
        pre: Option<Asked>,
        warm: Warm<'_>,
    ) -> Result<Option<View>, StoreError> {
        let signing = sig::name(verify);
        let mut warnings = Vec::new();
        let loaded = self.load(&mut warnings);
        let (salt, fingerprint, cached_login) =
            self.cached_login(loaded.salt.clone(), &loaded.login);
        let refresh = self
            .refresh
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        let cursor = match &loaded.base {
            // Verdicts kept for other signing keys: read it all, checking every record again.
            Some((header, ..))
                if !refresh && !self.too_old(header) && header.signing == signing =>
            {
                loaded
                    .delta
                    .as_ref()
                    .map_or(header.cursor.clone(), |d| d.cursor.clone())
            }
            _ => None,
        };
        // Skip, as they stream past, what no answer may use: an untrusted author's comment and
        // a body over the parser's cap (the forge adds the token's own login to `authors`).
        // Each body is parsed as it streams in (`Digested`), a fresh digest for each listing.
        let spill_dir = self.files.base.parent().map(std::path::Path::to_path_buf);
        let spilling = || {
            spill_dir
                .as_deref()
                .map_or_else(Digested::default, Digested::spilling)
                .verifying(verify)
        };
        let mut digested = spilling();
        let mut keep = StoreKeep {
            authors: (!thread.trusts_everyone()).then(|| trusted.clone()),
            max_body: crate::format::HARD_MAX_BODY_BYTES,
            identity: cached_login.clone(),
            digest: Some(digested.digest()),
            // A warm read learns the head's comment count too: a deletion shows (below).
            count: true,
        };
        let mut afresh = |keep: &mut StoreKeep| {
            digested = spilling();
            keep.digest = Some(digested.digest());
        };
        let (pre_delta, pre_login) = match pre {
            Some(p) if p.cursor == cursor => (Some(p.delta), p.login),
            Some(p) => (None, p.login),
            None => (None, None),
        };
        let mut delta = match pre_delta {
            Some(delta) => delta,
            None => thread.list_delta(cursor.as_ref(), effort, &keep).await?,
        };
        let same_place = |delta: &Delta| {
            loaded
                .base
                .as_ref()
                .is_some_and(|(h, ..)| h.location == delta.location)
        };
        if !delta.full && !same_place(&delta) {
            afresh(&mut keep);
            delta = thread.list_delta(None, effort, &keep).await?;
        }
        // Deletions are invisible to `since`; the head's comment count, read with the list,
        // shows one: the mirror then holds more comments on it than the forge has.
        let head_count = thread.comment_count();
        let count = checked(head_count);
        // The comments the head's count is known to lack (`Summary::excess`).
        let excess = (loaded.delta.as_ref())
            .and_then(|d| d.sum.as_ref())
            .and_then(|s| s.excess);
        let lacking = |n: u64| excess.filter(|e| e.0 == n).map_or(0, |e| e.1);
        // Set when this read resyncs for a count lower than the mirror held (read just now).
        let mut recounted = false;
        if !delta.full && missed_deletion(&loaded, head_count, &lacking) {
            recounted = true;
            tracing::debug!("the session issue has fewer comments than the read cache: resyncing");
            afresh(&mut keep);
            delta = thread.list_delta(None, effort, &keep).await?;
        }
        let (trust, trust_list, learned) = (self)
            .trusting(thread, trusted, (cached_login, pre_login), &fingerprint)
            .await?;
        // Verdicts kept for other signing keys (or another `require_signatures`) are not ours.
        let same_trust = loaded
            .base
            .as_ref()
            .is_some_and(|(h, ..)| h.trust == trust_list && h.signing == signing);
        if !delta.full && !same_trust {
            afresh(&mut keep);
            delta = thread.list_delta(None, effort, &keep).await?;
        }
        let login = fingerprint.clone().zip(self.login());

        let spilled = match digested.data() {
            Ok(spilled) => spilled,
            Err(e) => {
                // The records' data cannot be read back: read the whole thread again, in memory.
                tracing::debug!("{e}; reading the thread again without a spill");
                digested = Digested::default().verifying(verify);
                keep.digest = Some(digested.digest());
                delta = thread.list_delta(None, effort, &keep).await?;
                None
            }
        };
        let Delta {
            listing,
            cursor,
            full,
            location,
        } = delta;
        let Listing {
            comments,
            warnings: listed,
            rejects,
            incomplete,
        } = listing;
        // The listing gives its memory back as the slots are made: the two are never held
        // whole together, and the slots the digest spilled stay on disk until they are written
        // (the peak of a cold read, issue #44).
        let mut fresh = digested.fresh(comments, &trust).map_err(StoreError::Task)?;
        let mut extra: Vec<Unreadable> = Vec::new();
        for r in rejects {
            match r.id {
                Some(id) => fresh.push(Slot::unreadable(&r, id)),
                None => extra.push(r),
            }
        }
        // Every slot is out of the digest now: its table goes before the summary.
        drop(keep);
        drop(digested);
        fresh.sort_dedupe();

        let mut answer: Option<Answered> = None;
        let (slots, data, kept_warnings) = if full {
            let header = Header {
                schema: SCHEMA,
                generation: random_hex(),
                location,
                trust: trust_list,
                synced_at: Utc::now(),
                cursor: cursor.clone(),
                warnings: listed.clone(),
                incomplete,
                index_len: 0,
                index_sum: 0,
                signing,
            };
            let mut delta = DeltaFile {
                schema: SCHEMA,
                generation: header.generation.clone(),
                cursor,
                salt,
                login,
                slots: Vec::new(),
                sum: None,
                boot: None,
            };
            if fresh.is_empty() {
                // Nothing worth keeping (and a read must not create a store's directory).
                disk::remove(&self.files);
            } else {
                let spill = spilled.as_deref();
                let stream = fresh.take_stream();
                self.save(|files| {
                    // The base (copying the spilled slots) and the summary (finishing the fold
                    // the digest made, or reading the slots back when it cannot stand for them)
                    // side by side, on two cores (readers match the files by their generation).
                    let (based, sum) = std::thread::scope(|scope| {
                        let base =
                            scope.spawn(|| disk::write_base(&files.base, header, &fresh, spill));
                        let sum = summarize(
                            files,
                            &delta.generation,
                            &fresh,
                            spill,
                            &trust,
                            None,
                            stream,
                        );
                        (base.join(), sum)
                    });
                    based.map_err(|_| "the base's writer failed".to_string())??;
                    delta.sum = sum.map(|sum| sum.checked_at(count));
                    // The whole list holds more of the head's comments than the count that
                    // made this read resync: the count is out of step (not a deletion).
                    if let (true, Some(c), Some(sum)) = (recounted, head_count, &mut delta.sum)
                        && let Some(held) = sum.held_on(c.issue)
                        && held > c.count
                    {
                        tracing::debug!(
                            "the session issue counts {} comments fewer than it lists",
                            held - c.count
                        );
                        sum.excess = Some((c.issue, held - c.count));
                    }
                    disk::write_delta(&files.delta, &delta)
                });
            }
            // The answer, when the summary just written can give it, is built from the summary:
            // the thread's slots (and their spilled data) go now, before the answer's scan.
            answer = delta
                .sum
                .as_ref()
                .filter(|_| extra.is_empty())
                .and_then(|sum| from_summary(sum, warm, &trust, &self.files, &delta.generation));
            if answer.is_some() {
                drop(fresh);
                drop(spilled);
                (Vec::new(), None, (Vec::new(), false))
            } else {
                let fresh = fresh.into_slots().map_err(StoreError::Task)?;
                (fresh, spilled, (Vec::new(), false))
            }
        } else {
            let Some((header, base, data)) = loaded.base else {
                return Err(StoreError::Task("the read cache lost its base".into()));
            };
            let mut kept = loaded.delta.unwrap_or_else(|| DeltaFile {
                schema: SCHEMA,
                generation: header.generation.clone(),
                cursor: header.cursor.clone(),
                ..DeltaFile::default()
            });
            let mut fresh = fresh.into_slots().map_err(StoreError::Task)?;
            if let Some(spill) = &spilled {
                // The delta keeps its data inline: the spill is gone with this process.
                digest::inline(&mut fresh, spill).map_err(StoreError::Task)?;
            }
            let merged_before = merge(&base, &kept.slots);
            let changed: Vec<Slot> = fresh
                .into_iter()
                .filter(|s| !unchanged(&merged_before, s, Some(&data)))
                .collect();
            let moved = kept.cursor != cursor;
            // A summary missing (a file from before it was kept) or without its id index is
            // rebuilt now, or every warm `resume` would read the whole mirror.
            // So is one kept without its per-issue comment counts (`deleted.rs`).
            let unsummed = kept.sum.as_ref().is_none_or(|s| s.held.is_none())
                || IdIndex::open(&self.files.ids, &header.generation).is_none();
            // A new comment count was checked above: the summary records it, so warm reads
            // go on until the count changes again.
            let recount = kept.sum.as_ref().is_some_and(|s| s.checked != count);
            kept.slots = merge(&kept.slots, &changed);
            kept.cursor = cursor;
            kept.salt = salt;
            kept.login = login;
            let slots = merge(&merged_before, &changed);
            // One comment posted and another deleted since the last read: the count shows it
            // only with the new one counted.
            if head_count.is_some_and(|c| deleted::missed_in_lacking(&slots, c, lacking(c.issue))) {
                tracing::debug!("the session issue has fewer comments than the read cache holds");
                return Ok(None);
            }
            if kept.slots.len() > COMPACT_AFTER {
                let header = Header {
                    generation: random_hex(),
                    cursor: kept.cursor.clone(),
                    ..header.clone()
                };
                kept.generation = header.generation.clone();
                let folded = std::mem::take(&mut kept.slots);
                let whole = merge(&base, &folded);
                self.save(|files| {
                    disk::write_base(&files.base, header, &*whole, Some(&data))?;
                    let generation = kept.generation.clone();
                    kept.sum =
                        summarize(files, &generation, &*whole, Some(&data), &trust, None, None)
                            .map(|sum| sum.checked_at(count).allowing(excess));
                    disk::write_delta(&files.delta, &kept)
                });
            } else if !changed.is_empty() || moved || learned || unsummed || recount {
                self.save(|files| {
                    let name = kept.generation.clone();
                    let delta = Some(kept.slots.as_slice());
                    kept.sum = summarize(files, &name, &*slots, Some(&data), &trust, delta, None)
                        .map(|sum| sum.checked_at(count).allowing(excess));
                    disk::write_delta(&files.delta, &kept)
                });
            }
            (slots, Some(data), (header.warnings, header.incomplete))
        };
        if !extra.is_empty() {
            // Comments without an id cannot be merged by id: keep nothing, read all next time.
            disk::remove(&self.files);
        }
        let (kept_warnings, kept_incomplete) = kept_warnings;
        for w in kept_warnings.into_iter().chain(listed) {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        let incomplete = incomplete || kept_incomplete;
        let view = View {
            first_signed: super::slot::first_signed(&slots),
            slots,
            data,
            trust,
            warnings,
            extra,
            index: None,
            known: Vec::new(),
            incomplete,
            unsigned: None,
        };
        Ok(Some(match answer {
            Some(a) => View {
                first_signed: a.first_signed,
                slots: a.slots,
                index: Some(a.index),
                known: a.known,
                unsigned: Some(a.unsigned),
                ..view
            },
            None => view,
        }))
    }

    /// Loads what is usable; a corrupt file is removed, with one warning.
    pub(super) fn load(&self, warnings: &mut Vec<String>) -> Loaded {
        let mut loaded = Loaded::default();
        let mut corrupt = |path: &std::path::Path, why: String| {
            tracing::debug!("the read cache {} is unreadable: {why}", path.display());
            warnings.push(format!(
                "the read cache {} was unreadable ({why}); rebuilt it from the thread",
                path.display()
            ));
        };
        match disk::load_base(&self.files.base) {
            Found::Ok((header, slots, data)) => loaded.base = Some((header, slots, Arc::new(data))),
            Found::Corrupt(why) => {
                corrupt(&self.files.base, why);
                disk::remove(&self.files);
                return loaded;
            }
            Found::Foreign => foreign(&self.files.base),
            Found::Missing | Found::Outdated => {}
        }
        match disk::load_delta(&self.files.delta) {
            Found::Ok(delta) => {
                loaded.salt = Some(delta.salt.clone()).filter(|s| !s.is_empty());
                loaded.login = delta.login.clone();
                let extends = loaded
                    .base
                    .as_ref()
                    .is_some_and(|(h, ..)| h.generation == delta.generation);
                if extends && delta.in_order_inline() {
                    loaded.delta = Some(delta);
                }
            }
            Found::Corrupt(why) => {
                corrupt(&self.files.delta, why);
                disk::remove(&self.files);
                loaded.base = None;
            }
            Found::Foreign => {
                // Its cursor, login and comments are not ours: the base alone is not enough.
                foreign(&self.files.delta);
                loaded.base = None;
            }
            Found::Missing | Found::Outdated => {}
        }
        loaded
    }

    /// Whether a base is past its resync age. Only a time cursor (a forge) ages: deleted comments
    /// are invisible to `since`. A local offset cursor is checked exactly on every read.
    pub(super) fn too_old(&self, header: &Header) -> bool {
        if !matches!(header.cursor, None | Some(Cursor::Since(_))) {
            return false;
        }
        let age = Utc::now().signed_duration_since(header.synced_at);
        age.to_std()
            .map_or(age.num_seconds() < -60, |a| a >= self.resync_after)
    }

    /// Runs a write; a failure is logged, never fatal (the thread is the truth).
    pub(super) fn save(&self, write: impl FnOnce(&files::Files) -> Result<(), String>) {
        if let Err(e) = write(&self.files) {
            tracing::warn!(
                "cannot update the read cache {}: {e}; the next read asks for more",
                self.files.base.display()
            );
        }
    }
}

/// Whether the mirror as loaded holds more comments on the head, created by the time `count`
/// was taken, than the head had then.
/// (`lacking`: how many comments the count of an issue is known to lack.)
fn missed_deletion(
    loaded: &Loaded,
    count: Option<crate::store::CommentCount>,
    lacking: &dyn Fn(u64) -> u64,
) -> bool {
    let (Some(count), Some((_, base, _))) = (count, &loaded.base) else {
        return false;
    };
    let delta = loaded.delta.as_ref().map_or(&[][..], |d| &d.slots[..]);
    deleted::missed_in_lacking(&merge(base, delta), count, lacking(count.issue))
}

/// An answer a whole read takes from the summary it has just written, as a warm read would.
struct Answered {
    slots: Vec<Slot>,
    index: IdIndex,
    known: Vec<String>,
    first_signed: Option<u64>,
    unsigned: usize,
}

/// The answer `sum` (just written for base `generation`) gives for `warm` under `trust`, when
/// it gives one on the same terms as a warm read through it (`warm.rs`): the pair's lineage is
/// a single line, no takeover is among its slots, and the id index of the base is on disk.
/// `None`: the answer is built from the whole thread.
fn from_summary(
    sum: &Summary,
    warm: Warm<'_>,
    trust: &crate::scan::Trust,
    files: &files::Files,
    generation: &str,
) -> Option<Answered> {
    match warm {
        Warm::No => return None,
        Warm::Newest => {}
        Warm::Pair(agent, session) => {
            if !sum.lined || !sum.answers_pair(agent, session, trust) {
                return None;
            }
        }
    }
    let slots = sum.slots();
    // A thread with a takeover is fenced by the whole read (see `warm.rs`).
    if slots.iter().any(Slot::is_takeover) {
        return None;
    }
    let index = IdIndex::open(&files.ids, generation)?;
    Some(Answered {
        slots,
        index,
        known: sum.recent.clone(),
        first_signed: sum.first_signed,
        unsigned: sum.unsigned,
    })
}
