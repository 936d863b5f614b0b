//! Following a thread back to the ones it continues: when `latest`, `resume` or `list` find
//! nothing for what was asked in the current thread, the closed session issue it links (and the
//! one that links, back to the chain's start: [`MAX_HISTORY_HOPS`]) is read with the same
//! trust, and what is found there is answered with a warning naming where it came from. A
//! closed session issue so never makes an agent with unfinished work start fresh, however many
//! heads ago it last wrote. The cost falls on reads that find nothing in the head (the first
//! `resume` of a new session): one `GET` of each earlier issue and one of its comments, back to
//! the first issue.

use super::Client;
use crate::error::Result;
use crate::scan::{Entry, Scan};
use crate::store::Thread;

/// How many links back a read follows at most, looking for what the head does not hold (and a
/// whole-history read, `list --all`, reads): the whole chain, in practice. A session a person
/// closed several heads ago, or one a rotation did not carry, is found however deep it is.
pub const MAX_HISTORY_HOPS: usize = 1000;

impl<T: Thread> Client<T> {
    /// `found` as it is when it holds an entry `wanted` keeps (or was answered offline).
    /// Otherwise the nearest earlier thread, up to [`MAX_HISTORY_HOPS`] back, that holds one: its
    /// entries are put before `found`'s, and a warning says where they come from. A thread that
    /// cannot be read fails the read, rather than answer "nothing" for history it could not see.
    /// Nothing is scrubbed here: `wanted` reads names as written, and the caller scrubs what it
    /// answers.
    pub(super) async fn follow_links(
        &self,
        mut found: Scan,
        wanted: impl Fn(&Entry) -> bool,
    ) -> Result<Scan> {
        if found.offline || found.entries.iter().any(&wanted) {
            return Ok(found);
        }
        let mut trust = None;
        for hops in 1..=MAX_HISTORY_HOPS {
            let Some(earlier) = self.thread_raw().predecessor(hops).await? else {
                break;
            };
            let trust = match &trust {
                Some(t) => t,
                None => trust.insert(self.trust().await?),
            };
            let older = self.scan_listing(earlier.listing, trust);
            if !older.entries.iter().any(&wanted) {
                continue;
            }
            found.incomplete |= older.incomplete;
            let place = match hops {
                1 => format!("the previous {}", earlier.describe),
                n => format!("an earlier {}, {n} links back", earlier.describe),
            };
            tracing::info!("following the session issue chain: found in {place}");
            found.warnings.extend(older.warnings);
            found.warnings.push(format!(
                "found in {place}, not in {}: the thread was closed or rotated",
                self.thread_raw().describe()
            ));
            let mut entries = older.entries;
            entries.append(&mut found.entries);
            crate::scan::sort_entries(&mut entries);
            // The fencing rule over the merged records: a takeover on one issue fences a
            // writer's records on the other.
            crate::scan::fence(&mut entries);
            found.entries = entries;
            return Ok(found);
        }
        Ok(found)
    }

    /// `found` with the whole history of the thread before it: every earlier thread it
    /// continues (up to [`MAX_HISTORY_HOPS`] links back), counted once by record `Id`, or without one by its kind, agent, session, time and payload (first
    /// comment wins: an original before the copies a rotation carried) and merged in the
    /// thread's order ([`crate::scan::Place`]; pending records last). What `list --all` answers: after a rotation, the records
    /// that were not carried stay listable from any machine. Not scrubbed: the caller scrubs.
    pub(super) async fn with_history(&self, mut found: Scan) -> Result<Scan> {
        if found.offline {
            return Ok(found);
        }
        let trust = self.trust().await?;
        let mut earlier = Vec::new();
        for hops in 1..=MAX_HISTORY_HOPS {
            let Some(thread) = self.thread_raw().predecessor(hops).await? else {
                break;
            };
            let older = self.scan_listing(thread.listing, &trust);
            found.incomplete |= older.incomplete;
            found.warnings.extend(older.warnings);
            found.rejected.extend(older.rejected);
            earlier.extend(older.entries);
        }
        earlier.append(&mut found.entries);
        earlier.sort_by_key(|e| (e.comment.id.is_none(), e.comment.id));
        // The one identity rule (`format/identity.rs`): a record without an `Id` (seed 003's
        // client) counts once too, by its kind, agent, session, time and payload.
        let mut seen = std::collections::HashSet::new();
        earlier.retain(|e| seen.insert(e.record.identity()));
        crate::scan::sort_entries(&mut earlier);
        // The fencing rule over the whole history: a takeover on one issue fences a writer's
        // records on every issue after it, those left behind on a rotated-away issue included.
        crate::scan::fence(&mut earlier);
        found.entries = earlier;
        Ok(found)
    }
}
