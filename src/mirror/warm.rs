//! A warm `latest` or `resume` through the mirror's summary (`summary.rs`): the delta file and the
//! base's header line are read, never the base's index, so the cost follows what changed and the
//! number of (agent, session, kind) keys, not the length of the thread. Whatever the summary
//! cannot extend exactly is left to the whole read (`read.rs`), which rebuilds it.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use super::deleted::{self, OnIssues};
use super::disk::{self, COMPACT_AFTER, Found, foreign};
use super::merge::{merge, sort_dedupe, unchanged};
use super::slot::Slot;
use super::summary::{self, IdIndex, Role};
use super::{Mirror, View, sig};
use crate::scan::Verifier;
use crate::store::{Cursor, Delta, Effort, Keep as StoreKeep, Listing, StoreError, Thread};

/// Which answers a read may take from the summary.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Warm<'a> {
    /// None: the answer needs every record (`list`, `status`, `history`).
    No,
    /// The newest record a monotone predicate accepts ([`super::Keep::Newest`]).
    Newest,
    /// One (agent, session)'s newest record of each kind ([`super::Keep::Pair`]): the summary
    /// answers while that pair's lineage is a single line (see [`summary::Line`]).
    Pair(&'a str, &'a str),
}

/// What a warm read through the summary already asked the store.
#[derive(Clone)]
pub(super) struct Asked {
    /// The cursor it asked after.
    pub cursor: Option<Cursor>,
    /// The answer.
    pub delta: Delta,
    /// The login it learned or had, when it needed one.
    pub login: Option<String>,
}

impl Mirror {
    /// Reads the thread through the mirror. `trusted` are the configured trusted authors (the
    /// store's own login is added, from the cache when the token's fingerprint matches). For the
    /// answers `warm` names, the summary answers when it can.
    pub(crate) async fn read<T: Thread>(
        &self,
        thread: &T,
        effort: Effort,
        trusted: &BTreeSet<String>,
        verify: Option<&Verifier>,
        warm: Warm<'_>,
    ) -> Result<View, StoreError> {
        let mut pre = None;
        if !matches!(warm, Warm::No) && !self.refresh.load(Ordering::Relaxed) {
            match self
                .read_summary(thread, effort, trusted, verify, warm, &mut pre)
                .await?
            {
                Some(view) => return Ok(view),
                None => tracing::debug!("the read cache's summary cannot answer; reading it all"),
            }
        }
        // A deletion that came to light only with what the read brought: read it all again
        // (a full read always answers; one await, so this future holds one whole read).
        for _ in 0..2 {
            match self
                .read_all(thread, effort, trusted, verify, pre.take(), warm)
                .await?
            {
                Some(view) => return Ok(view),
                None => self.refresh(),
            }
        }
        Err(StoreError::Task(
            "a full read of the thread did not answer".into(),
        ))
    }

    /// The warm read through the summary; `None` when the whole mirror must be read instead,
    /// with what this read already asked the store left in `pre` (so it is not asked twice).
    async fn read_summary<T: Thread>(
        &self,
        thread: &T,
        effort: Effort,
        trusted: &BTreeSet<String>,
        verify: Option<&Verifier>,
        warm: Warm<'_>,
        pre: &mut Option<Asked>,
    ) -> Result<Option<View>, StoreError> {
        let mut delta = match disk::load_delta(&self.files.delta) {
            Found::Ok(d) => d,
            Found::Foreign => {
                foreign(&self.files.delta);
                return Ok(None);
            }
            _ => return Ok(None),
        };
        let Some(mut sum) = delta.sum.take() else {
            return Ok(None);
        };
        if matches!(warm, Warm::Pair(..)) && !sum.lined {
            return Ok(None);
        }
        let header = match disk::load_header(&self.files.base) {
            Found::Ok(h) => h,
            _ => return Ok(None),
        };
        // Verdicts kept for other signing keys (or another `require_signatures`): the whole
        // read checks every record again.
        if header.generation != delta.generation
            || self.too_old(&header)
            || !delta.in_order_inline()
            || header.signing != sig::name(verify)
        {
            return Ok(None);
        }
        let Some(index) = IdIndex::open(&self.files.ids, &header.generation) else {
            return Ok(None);
        };
        let (salt, fingerprint, cached_login) =
            self.cached_login(Some(delta.salt.clone()), &delta.login);
        let keep = StoreKeep {
            digest: None,
            authors: (!thread.trusts_everyone()).then(|| trusted.clone()),
            max_body: crate::format::HARD_MAX_BODY_BYTES,
            identity: cached_login.clone(),
            // The head's comment count, read with the list: a deletion shows (below).
            count: true,
        };
        let got = thread
            .list_delta(delta.cursor.as_ref(), effort, &keep)
            .await?;
        // The head's comment count, read with the list: fewer than the mirror holds shows a
        // deletion (`deleted.rs`), checked below with what this read brought. A summary kept
        // without its per-issue counts leaves a count it was not checked against to the whole
        // read, which rebuilds it with them.
        let count = thread.comment_count();
        let mut held = sum.held.as_deref().map(OnIssues::from_pairs);
        let held_on_head = count.and_then(|c| sum.held_on(c.issue));
        let recount =
            held.is_none() && summary::checked(count).is_some_and(|c| sum.checked != Some(c));
        if got.full || got.location != header.location || recount {
            *pre = Some(Asked {
                cursor: delta.cursor.clone(),
                delta: got,
                login: None,
            });
            return Ok(None);
        }
        let (trust, trust_list, learned) = (self)
            .trusting(thread, trusted, (cached_login, None), &fingerprint)
            .await?;
        let asked = Asked {
            cursor: delta.cursor.clone(),
            delta: got,
            login: self.login(),
        };
        if header.trust != trust_list {
            *pre = Some(asked);
            return Ok(None);
        }
        let login = fingerprint.clone().zip(self.login());
        // Kept until the summary is known to answer; the whole read reuses it otherwise.
        *pre = Some(asked.clone());
        let Delta {
            listing, cursor, ..
        } = asked.delta;
        let Listing {
            comments,
            warnings: listed,
            rejects,
            incomplete,
        } = listing;
        let mut fresh = Vec::with_capacity(comments.len());
        for c in comments {
            let trusted = trust.allows(&c.author);
            // Only what changed is checked against the signing keys.
            let slot = Slot::of(c, trusted, verify).map_err(|e| StoreError::Task(e.to_string()))?;
            fresh.push(slot);
        }
        for r in rejects {
            match r.id {
                Some(id) => fresh.push(Slot::unreadable(&r, id)),
                // Without an id it cannot be merged: the whole read drops the mirror.
                None => return Ok(None),
            }
        }
        sort_dedupe(&mut fresh);

        let mut changed = Vec::new();
        for slot in fresh {
            if slot.i <= sum.max_id {
                if unchanged(&sum.tail, &slot, None) {
                    continue;
                }
                // An older comment edited (or one this summary never saw): read it all.
                return Ok(None);
            }
            let first_signed = sum.first_signed;
            if slot.signed() && first_signed.is_none() {
                sum.first_signed = Some(slot.i);
            }
            match summary::role(&slot, &trust, first_signed) {
                Role::Ignored => {}
                Role::Stale => sum.rejected.push(slot.clone()),
                Role::Record(key, id) => {
                    // A copy (`Posted-At:`) ranks by its original, a record first posted
                    // before the pair's newest one (a clock that stepped back) ranks below it,
                    // and one that an older record names as its parent ranks before that one:
                    // the whole read places them ([`crate::scan::Place`]).
                    let second = slot.place().first_posted.timestamp();
                    let named = |s: &Slot| id.is_some() && s.posting().parent == id;
                    if slot.posting().first.is_some()
                        || sum.table.iter().any(|s| {
                            let there = s.place().first_posted.timestamp();
                            there > second || (there == second && named(s))
                        })
                    {
                        return Ok(None);
                    }
                    if let Some(id) = id {
                        // A record `Id` seen before is a duplicate (first wins): the whole
                        // read decides which copy stands.
                        if sum.recent.contains(&id) || index.holds(&id) != Some(false) {
                            return Ok(None);
                        }
                        sum.recent.push(id);
                    }
                    // A record that does not continue its pair's newest one may fork the
                    // lineage: the whole read finds out (and rebuilds the lines).
                    if !sum.extend_line(&slot) {
                        return Ok(None);
                    }
                    sum.unsigned += usize::from(slot.unsigned(first_signed));
                    sum.table
                        .retain(|s| match summary::role(s, &trust, first_signed) {
                            Role::Record(k, _) => k != key,
                            _ => true,
                        });
                    sum.table.push(slot.clone());
                }
            }
            changed.push(slot);
        }
        if let (Some(count), Some(held)) = (count, held_on_head)
            && deleted::missed(held, &changed, count)
        {
            tracing::debug!("the session issue has fewer comments than the read cache: resyncing");
            return Ok(None);
        }
        if let Some(held) = &mut held {
            changed.iter().for_each(|s| held.add(s));
            sum.held = Some(held.clone().into_pairs());
        }
        let moved = delta.cursor != cursor;
        delta.slots = merge(&delta.slots, &changed);
        if delta.slots.len() > COMPACT_AFTER {
            // Time to fold the delta into a new base: the whole read does it.
            return Ok(None);
        }
        if let Some(last) = changed.last() {
            sum.max_id = sum.max_id.max(last.i);
            sum.tail = summary::tail_of(sum.tail.iter().chain(&changed), None)
                .map_err(StoreError::Task)?;
        }
        if let Warm::Pair(agent, session) = warm
            && !sum.answers_pair(agent, session, &trust)
        {
            return Ok(None);
        }
        let slots = sum.slots();
        // A thread with a takeover is fenced by the whole read: the summary keeps only the
        // newest record of each kind, and the newest may be a fenced one.
        if slots.iter().any(Slot::is_takeover) {
            return Ok(None);
        }
        let known = sum.recent.clone();
        let (sum_first_signed, sum_unsigned) = (sum.first_signed, sum.unsigned);
        delta.cursor = cursor;
        delta.salt = salt;
        delta.login = login;
        delta.sum = Some(sum);
        if !changed.is_empty() || moved || learned {
            self.save(|files| disk::write_delta(&files.delta, &delta));
        }
        let incomplete = incomplete || header.incomplete;
        let mut warnings = header.warnings;
        for w in listed {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        Ok(Some(View {
            first_signed: sum_first_signed,
            unsigned: Some(sum_unsigned),
            slots,
            data: None,
            trust,
            warnings,
            extra: Vec::new(),
            index: Some(index),
            known,
            incomplete,
        }))
    }
}
