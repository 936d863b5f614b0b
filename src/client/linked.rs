//! Following a thread back to the ones it continues: when `latest`, `resume` or `list` find
//! nothing for what was asked in the current thread, the closed session issue it links (and the
//! one that links, up to [`MAX_HOPS`]) is read with the same trust, and what is found there is
//! answered with a warning naming where it came from. A closed session issue so never makes an
//! agent with unfinished work start fresh.

use super::Client;
use crate::error::Result;
use crate::scan::{Entry, Scan, scan};
use crate::store::Thread;

/// How many links back reads follow.
pub const MAX_HOPS: usize = 3;

impl<T: Thread> Client<T> {
    /// `found` as it is when it holds an entry `wanted` keeps (or was answered offline).
    /// Otherwise the nearest earlier thread, up to [`MAX_HOPS`] back, that holds one: its
    /// entries are put before `found`'s, and a warning says where they come from. A thread that
    /// cannot be read fails the read, rather than answer "nothing" for history it could not see.
    pub(super) async fn follow_links(
        &self,
        mut found: Scan,
        wanted: impl Fn(&Entry) -> bool,
    ) -> Result<Scan> {
        if found.offline || found.entries.iter().any(&wanted) {
            return Ok(found);
        }
        let mut trust = None;
        for hops in 1..=MAX_HOPS {
            let Some(earlier) = self.thread_raw().predecessor(hops).await? else {
                break;
            };
            let trust = match &trust {
                Some(t) => t,
                None => trust.insert(self.trust().await?),
            };
            let older = scan(earlier.listing, trust);
            if !older.entries.iter().any(&wanted) {
                continue;
            }
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
            found.entries = entries;
            return Ok(found);
        }
        Ok(found)
    }
}
