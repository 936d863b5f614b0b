//! The head's comment count read alongside a warm list: `since` cannot show a deleted comment,
//! but the session issue's `comments` count drops with it (§4.2; Forgejo decrements it on
//! delete), so a read cache holding more of the head's comments than the count knows one went
//! (`Thread::comment_count`). The issue is asked at the same time as the list (a task of its
//! own, so the read's future stays as small as it was): one more request, no more waiting.

use std::sync::atomic::Ordering;

use tokio::task::JoinHandle;

use super::ForgeThread;
use super::error::ForgeError;
use super::http::ForgeClient;
use super::models::{Issue, IssueNumber};

/// The head's issue, being asked; the request is dropped with it.
pub(super) struct Asked {
    n: IssueNumber,
    task: JoinHandle<Result<Issue, ForgeError>>,
}

impl Drop for Asked {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ForgeThread {
    /// How many times this process has read the head's comment count so far: a read compares
    /// it before and after finding the head, to know whether that already read the issue.
    pub(super) fn count_reads(&self) -> u64 {
        self.count_reads.load(Ordering::Relaxed)
    }

    /// Starts asking for head `n` (its comment count) through `c`, while the list is read.
    pub(super) fn ask_count(&self, c: &ForgeClient, n: IssueNumber) -> Asked {
        let (c, repo) = (c.clone(), self.settings.repo.clone());
        Asked {
            n,
            task: tokio::spawn(async move { c.issue(&repo, n).await }),
        }
    }

    /// Notes the count `asked` got. When it got none and the list was read (`listed`), the
    /// warning that says a deletion may not show.
    pub(super) async fn take_count(&self, mut asked: Asked, listed: bool) -> Option<String> {
        let n = asked.n;
        let why = match (&mut asked.task).await {
            Ok(Ok(issue)) if issue.number == n => {
                self.note_count(&issue);
                return None;
            }
            Ok(Ok(issue)) => format!(
                "the forge answered issue {} when asked for session issue {n}",
                issue.number
            ),
            Ok(Err(e)) => e.to_string(),
            Err(e) => format!("the request did not finish: {e}"),
        };
        tracing::debug!("the session issue's comment count is unknown: {why}");
        listed.then(|| {
            format!(
                "could not read how many comments session issue {n} holds ({why}): a comment \
                 deleted there since this machine's last read may still be in this answer \
                 (--refresh reads the whole thread)"
            )
        })
    }
}
