//! The clock ages are measured on, on the client: the store's clock (`Thread::now`, a forge's
//! `Date`), made consistent with the store's own comment times (`report::clock`), with one
//! warning per process when they disagree; and [`Client::query`], whose age is counted back
//! on that clock rather than this machine's.

use std::sync::atomic::Ordering;

use super::{Client, ListQuery};
use crate::error::Result;
use crate::report::clock::{Clock, consistent};
use crate::scan::Scan;
use crate::store::Thread;

impl<T: Thread> Client<T> {
    /// The clock for ages over `scan`: the store's, moved up to its newest comment time when
    /// that runs ahead, or back to this machine's when the store's `Date` alone runs ahead
    /// (see [`crate::report::clock`]). The first time this client finds the clocks
    /// disagree, the warning joins `scan`'s warnings (and the log).
    pub fn clock(&self, scan: &mut Scan) -> Clock {
        let newest = scan
            .entries
            .iter()
            .filter(|e| e.comment.id.is_some())
            .map(|e| e.comment.created_at.max(e.comment.updated_at))
            .max();
        let clock = consistent(self.thread_raw().now(), chrono::Utc::now(), newest);
        // The warning is the answer's (the CLI prints it); logged only at debug, so that it is
        // not said twice on stderr.
        if let Some(warning) = clock.warning()
            && !self.clock_warned.swap(true, Ordering::Relaxed)
        {
            tracing::debug!("{warning}");
            scan.warnings.push(warning);
        }
        clock
    }

    /// The records `query` asks for: its filter, over the whole history when it says so, the
    /// newest `limit` of them. An age is counted back from the store's clock
    /// ([`Client::clock`]), so it is measured as `status` measures ages. Only the records
    /// answered are scrubbed (the one redaction pass of every answer): the filter reads names,
    /// times and kinds, so a list answering a few records of a long thread redacts only those.
    pub async fn query(&self, query: &ListQuery) -> Result<Scan> {
        let (mut all, trust) = self.scan_unscrubbed(crate::mirror::Keep::All).await?;
        let mut filter = query.filter.clone();
        if let Some(age) = query.age {
            let now = self.clock(&mut all).now;
            filter.since = Some(now.checked_sub_signed(age).unwrap_or(now));
        }
        let found = self
            .list_from(
                all,
                trust.as_ref(),
                &filter,
                query.limit,
                query.whole_history,
            )
            .await?;
        Ok(self.scrubbed(found))
    }
}
