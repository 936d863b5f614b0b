//! A rotation not proven finished: the members a cold read takes whole besides the head.
//!
//! A rotation creates the successor (the head from then on), carries the newest records to
//! it, notes the successor on the old issue, and closes the old issue last. Until the old
//! issue is closed, nothing says the carry is complete: a run killed after the successor got
//! its first record leaves most pairs only on the old issue, in comments far older than the
//! cold read's [`MARGIN`](super::MARGIN). So an old issue the head links back to that is still
//! open is read whole, and so is each open one it links in turn, and a read needs no write to
//! be right. Once the old issue is closed (after its closing note), the carry is done and
//! only its late posts are read.
//!
//! What the cold read's plan listed (the issues updated since the margin, each with its
//! state) usually answers at no cost: a rotation closes the old issue after its successor was
//! created, so a closed one is in that list. An old issue missing from it is asked once.

use super::super::ForgeThread;
use super::super::error::{ForgeError, found};
use super::super::http::ForgeClient;
use super::super::lineage::linked;
use super::super::models::{Issue, IssueNumber, IssueState};

/// How many open issues back from the head a read follows (each a rotation stopped before its
/// last step, the oldest first rotated again by the next write).
const MAX_HOPS: usize = 8;

impl ForgeThread {
    /// The open members the head `n` links back to, directly or through open members only: the
    /// old issues of rotations not proven finished, read whole. `walk` is the issues updated
    /// since the margin, when the plan listed them.
    pub(super) async fn unfinished(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        walk: Option<&[Issue]>,
    ) -> Result<Vec<IssueNumber>, ForgeError> {
        let mut open = Vec::new();
        let Some(mut at) = self.listed_or_asked(c, n, walk).await? else {
            return Ok(open);
        };
        while open.len() < MAX_HOPS {
            let Some(previous) = linked(&at.body).filter(|p| *p < at.number) else {
                break;
            };
            let Some(issue) = self.listed_or_asked(c, previous, walk).await? else {
                break;
            };
            if issue.state != IssueState::Open || !self.is_member_issue(&issue) {
                break;
            }
            self.note_verdict(issue.number.0, true);
            tracing::info!(
                "session issue {} is open though {} continues it (a rotation not finished): \
                 reading it whole",
                issue.number,
                at.number
            );
            open.push(issue.number);
            at = issue;
        }
        Ok(open)
    }

    /// Issue `n` as `walk` lists it, else asked (`None`: gone).
    async fn listed_or_asked(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        walk: Option<&[Issue]>,
    ) -> Result<Option<Issue>, ForgeError> {
        if let Some(issue) = walk.and_then(|w| w.iter().find(|i| i.number == n)) {
            return Ok(Some(issue.clone()));
        }
        self.login_with(c).await?;
        found(c.issue(&self.settings.repo, n).await)
    }
}
