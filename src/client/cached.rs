//! Reads through the read cache ([`crate::mirror`]): the scan an answer needs, built from the
//! mirror when the client has one, from a plain listing otherwise, with the same outbox, trust
//! and dedupe rules either way.

use std::path::Path;

use secrecy::SecretString;

use super::{Client, ForgeBuilder};
use crate::durable::OUTBOX_ONLY;
use crate::durable::Spooled;
use crate::error::{Error, Result};
use crate::format::Record;
use crate::mirror::{Keep, Mirror, ReadCache, Warm};
use crate::scan::{
    Entry, Scan, Trust, add_landed_except, add_pending, add_pending_except, scan_checked,
};
use crate::store::Thread;

/// How long a posted record this machine keeps for its offline answers may go unseen by its
/// online reads (a record a person deleted, say) before it is forgotten anyway.
const LANDED_DAYS: i64 = 1;

/// Why a read without a read cache may wait for the store (the wait rule).
const COLD: &str = "this machine has no read cache of the thread to answer from";

impl<T: Thread> Client<T> {
    /// Reads through the read cache kept in `dir` under `name`, with these settings; `token` is
    /// the forge token whose login the cache may remember (by a salted hash).
    pub(crate) fn with_mirror_in(
        mut self,
        dir: &Path,
        name: &str,
        cache: ReadCache,
        token: Option<SecretString>,
    ) -> Client<T> {
        self.mirror = cache
            .enabled
            .then(|| Mirror::new(dir, name, cache.resync_after, token));
        self
    }

    /// Turns the read cache off: every read lists the whole thread.
    pub fn without_read_cache(mut self) -> Client<T> {
        self.mirror = None;
        self
    }

    /// Makes the next read resync the read cache fully (the CLI's `--refresh`).
    pub fn refresh(&self) {
        if let Some(mirror) = &self.mirror {
            mirror.refresh();
        }
    }

    /// Drops the on-disk read cache, so the next read (by this process or any other) reads the
    /// whole thread again. Deleting comments needs this: a `since` read cannot see deletions.
    pub fn forget_read_cache(&self) -> Result<()> {
        match &self.mirror {
            Some(mirror) => mirror
                .discard()
                .map_err(|e| Error::io("cannot delete the read cache", mirror.path(), e)),
            None => Ok(()),
        }
    }

    /// Where the read cache lives, when there is one.
    pub fn read_cache_path(&self) -> Option<&Path> {
        self.mirror.as_ref().map(Mirror::path)
    }

    /// Every secret this client's redactor knows (the token, the shapes and keys of
    /// docs/redaction.md) replaced in what a read found, whoever wrote it: the one redaction
    /// pass over every answer, on every face. Records posted by another client (the seed's own
    /// redacts nothing) so never put a token in a model's context.
    pub(crate) fn scrubbed(&self, mut scan: Scan) -> Scan {
        for e in &mut scan.entries {
            self.redactor.redact_read(&mut e.record);
        }
        scan.warnings = self.scrub_warnings(scan.warnings);
        for r in &mut scan.rejected {
            self.redactor.redact_text(&mut r.reason);
        }
        scan
    }

    /// One entry scrubbed as [`Client::scrubbed`] does, for a read that matched names first.
    pub(crate) fn scrub_entry(&self, mut e: Entry) -> Entry {
        self.redactor.redact_read(&mut e.record);
        e
    }

    /// A record scrubbed as every record a read answers is (the token, the shapes and keys of
    /// docs/redaction.md), for an answer that holds one without a read (`parse`).
    pub fn scrub_record(&self, record: Record) -> Record {
        self.redactor.read(record)
    }

    /// Warnings scrubbed as [`Client::scrubbed`] does: they may quote a name as it was written
    /// or a server's words.
    pub(crate) fn scrub_warnings(&self, mut warnings: Vec<String>) -> Vec<String> {
        for w in &mut warnings {
            self.redactor.redact_text(w);
        }
        warnings
    }

    /// The scan an answer needs (every entry, or only the newest match: see [`Keep`]), and
    /// whom it trusted (`None` when offline), not scrubbed yet: the caller scrubs what it answers
    /// ([`Client::scrubbed`]).
    pub(super) async fn scan_unscrubbed(&self, keep: Keep<'_>) -> Result<(Scan, Option<Trust>)> {
        let (mut scan, trust) = self.scan_unfenced(keep).await?;
        // The one fencing rule, on every read (`crate::scan::fence`). A `Keep::Newest` read
        // has already skipped fenced records (the mirror's view), or holds them all (a listing).
        crate::scan::fence(&mut scan.entries);
        Ok((scan, trust))
    }

    async fn scan_unfenced(&self, keep: Keep<'_>) -> Result<(Scan, Option<Trust>)> {
        // A read cache on disk, or records in the outbox, are an answer without the store
        // (offline); neither is a cold read, which may wait for the store.
        let queued = self.store.outbox().is_some_and(|o| !o.is_empty());
        let cached = self.mirror.as_ref().is_some_and(|m| m.path().exists());
        self.without_answer((!queued && !cached).then_some(COLD));
        let Some(mirror) = self.mirror.as_ref() else {
            return self.scan_listed().await;
        };
        let trusted = &self.trusted_authors;
        // With signing keys the mirror keeps each record's verdict: a warm read checks only
        // the new and changed comments.
        let verifier = self.verifier();
        let verify = verifier.as_ref();
        let warm = match &keep {
            Keep::All => Warm::No,
            Keep::Newest(_) => Warm::Newest,
            Keep::Pair(_, _, (agent, session)) => Warm::Pair(agent, session),
        };
        let mut rebuilt: Option<String> = None;
        loop {
            let (view, read) = self
                .store
                .read_with(|thread, effort| async move {
                    mirror
                        .read(thread, effort, trusted, verify, warm)
                        .await
                        .map_err(Error::from)
                })
                .await?;
            let (view, offline, mut warnings) = match view {
                Some(view) => (view, false, read.warnings),
                None => match mirror.read_offline(trusted, verify) {
                    // The forge cannot be read: answer from this machine's copy of the thread.
                    Some(view) => {
                        let warnings = read
                            .warnings
                            .into_iter()
                            .map(|w| match w.strip_suffix(OUTBOX_ONLY) {
                                Some(head) => format!(
                                    "{head}answering offline from this machine's read cache, \
                                     outbox and own posts (records other machines posted since \
                                     this machine last read the thread are missing)"
                                ),
                                None => w,
                            })
                            .collect();
                        (view, true, warnings)
                    }
                    None => {
                        let mut out = Scan {
                            offline: true,
                            ..Scan::default()
                        };
                        out.warnings.extend(rebuilt);
                        out.warnings.extend(read.warnings);
                        self.settle_landed(&mut out, read.landed, |_| false);
                        add_pending(&mut out, bodies(read.pending));
                        return Ok((out, None));
                    }
                },
            };
            let trust = view.trust.clone();
            let (mut out, held) = match view.scan(keep) {
                Ok(found) => found,
                // A record's data does not match its checksum (changed on disk), or the data area
                // changed under this read: the mirror is dropped and the thread read through it
                // again, which rebuilds it; the answer says so, once.
                Err(why) if rebuilt.is_none() => {
                    rebuilt = Some(mirror.discard_corrupt(&why));
                    continue;
                }
                Err(why) => {
                    // The mirror changed under this read: answer without it, rebuild it next time.
                    tracing::warn!("the read cache could not be used ({why}); reading the thread");
                    mirror.refresh();
                    return self.scan_listed().await;
                }
            };
            out.offline |= offline;
            out.warnings.extend(rebuilt);
            out.warnings.append(&mut warnings);
            self.settle_landed(&mut out, read.landed, |id| held.holds(id));
            add_pending_except(&mut out, bodies(read.pending), |id| held.holds(id));
            return Ok((out, Some(trust)));
        }
    }

    /// [`Client::scan_unscrubbed`] without the cache: list the whole thread and scan it.
    async fn scan_listed(&self) -> Result<(Scan, Option<Trust>)> {
        let read = self.store.read_keeping(&self.keep()).await?;
        let (mut out, trust) = match read.listing {
            Some(listing) => {
                let trust = self.trust().await?;
                let doubt = |body: &str| self.doubt(body);
                (scan_checked(listing, &trust, &doubt), Some(trust))
            }
            None => (
                Scan {
                    offline: true,
                    ..Scan::default()
                },
                None,
            ),
        };
        out.warnings.extend(read.warnings);
        let ids: std::collections::HashSet<String> = (out.entries.iter())
            .filter_map(|e| e.record.id.clone())
            .collect();
        self.settle_landed(&mut out, read.landed, |id| ids.contains(id));
        add_pending(&mut out, bodies(read.pending));
        Ok((out, trust))
    }

    /// This machine's posted records that no read of the thread had held yet (`landed`) in an
    /// answer: an offline one gets those it lacks (`held` says which ids the thread as read
    /// holds), so it knows the machine's own newest posts however old its read cache; an
    /// online read holds them, and they are forgotten (with any older than [`LANDED_DAYS`]).
    fn settle_landed(&self, out: &mut Scan, landed: Vec<Spooled>, held: impl Fn(&str) -> bool) {
        if landed.is_empty() {
            return;
        }
        if out.offline {
            add_landed_except(out, bodies(landed), held);
            return;
        }
        let Some(outbox) = self.store.outbox() else {
            return;
        };
        let stale = chrono::Utc::now() - chrono::Duration::days(LANDED_DAYS);
        outbox.forget_landed(landed.iter().filter(|s| {
            s.spooled_at < stale
                || crate::format::parse(&s.body)
                    .ok()
                    .and_then(|r| r.id)
                    .is_none_or(|id| held(&id))
        }));
    }
}

impl ForgeBuilder {
    /// How reads use the read cache (kept in the cache directory; without a cache directory
    /// there is none). Default: on, resynced fully after an hour.
    pub fn read_cache(mut self, cache: ReadCache) -> Self {
        self.read_cache = cache;
        self
    }
}

/// Outbox entries as the scan takes them: when each was spooled, and its body.
fn bodies(spooled: Vec<Spooled>) -> impl Iterator<Item = (chrono::DateTime<chrono::Utc>, String)> {
    spooled.into_iter().map(|s| (s.spooled_at, s.body))
}
