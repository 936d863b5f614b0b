//! The chain of session issues: a new session issue opens with a line linking the closed one it
//! continues (`Previous session issue: #12`, which the forge renders as a link), and readers
//! walk that chain back to find sessions the current issue does not hold.
//!
//! The link in the body is the source of truth, not a search of closed issues: it is one `GET`
//! per hop, exact, and it cannot land on a duplicate that a racing `init` closed. A linked issue
//! is followed only if it is an issue (not a pull request) with the session title and label,
//! and only to lower numbers, so an edited body can neither send readers elsewhere nor loop.

use std::sync::Mutex;

use super::ForgeThread;
use super::error::{ForgeError, found};
use super::models::{Issue, IssueNumber, IssueState};
use crate::store::Predecessor;

/// How the link line starts, up to the `#`.
const LINK_PREFIX: &str = "Previous session issue: #";

/// The line a new session issue's body opens with.
pub(super) fn link_line(previous: IssueNumber) -> String {
    format!("{LINK_PREFIX}{}", previous.0)
}

/// The issue a body links as its predecessor, if any (the first link line).
pub(super) fn linked(body: &str) -> Option<IssueNumber> {
    body.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(LINK_PREFIX)?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().map(IssueNumber)
    })
}

/// The chain walked so far from one current issue: `issues[0]` is its direct predecessor.
#[derive(Debug, Default)]
pub(super) struct Chain {
    from: Option<IssueNumber>,
    issues: Vec<Issue>,
    /// The walk reached an issue with no (followable) link.
    ended: bool,
}

/// The walked chain, shared by the reads of one process.
pub(super) type LineageCell = Mutex<Chain>;

impl ForgeThread {
    /// The session issue `hops` links back from the current one, with its comments.
    pub(super) async fn predecessor_at(
        &self,
        hops: usize,
    ) -> Result<Option<Predecessor>, ForgeError> {
        if hops == 0 {
            return Ok(None);
        }
        let Some(issue) = self.walk(hops).await? else {
            return Ok(None);
        };
        let keep = self.last_keep();
        let filter = self.filter(&keep);
        let listed =
            (self.client).comments_keeping(&self.settings.repo, issue.number, None, filter);
        let Some(comments) = found(listed.await)? else {
            return Ok(None);
        };
        let state = match issue.state {
            IssueState::Closed => "closed",
            _ => "open",
        };
        Ok(Some(Predecessor {
            describe: format!("session issue {} ({state})", issue.number),
            listing: Self::into_listing(comments),
        }))
    }

    /// The issue `hops` links back, walking (and remembering) as much of the chain as needed.
    async fn walk(&self, hops: usize) -> Result<Option<Issue>, ForgeError> {
        let current = self.issue_for(&self.client, false).await?;
        let (mut at, mut have, ended) = {
            let mut chain = self.lineage.lock().map_err(|_| poisoned())?;
            if chain.from != Some(current) {
                *chain = Chain {
                    from: Some(current),
                    ..Chain::default()
                };
            }
            let at = chain.issues.last().map_or(current, |i| i.number);
            (at, chain.issues.len(), chain.ended)
        };
        while have < hops && !ended {
            let next = self.link_from(at).await?;
            let mut chain = self.lineage.lock().map_err(|_| poisoned())?;
            if chain.from != Some(current) || chain.issues.len() != have {
                break; // another read walked concurrently; use what it found
            }
            match next {
                Some(issue) => {
                    at = issue.number;
                    chain.issues.push(issue);
                    have += 1;
                }
                None => {
                    chain.ended = true;
                    break;
                }
            }
        }
        let chain = self.lineage.lock().map_err(|_| poisoned())?;
        Ok(chain.issues.get(hops - 1).cloned())
    }

    /// The session issue that issue `n` links, when the link leads to one.
    async fn link_from(&self, n: IssueNumber) -> Result<Option<Issue>, ForgeError> {
        let Some(issue) = found(self.client.issue(&self.settings.repo, n).await)? else {
            return Ok(None);
        };
        self.linked_session(n, &issue.body).await
    }

    /// The session issue a body of issue `n` links, when the link leads to one.
    async fn linked_session(
        &self,
        n: IssueNumber,
        body: &str,
    ) -> Result<Option<Issue>, ForgeError> {
        let repo = &self.settings.repo;
        let Some(previous) = linked(body).filter(|p| *p < n) else {
            return Ok(None);
        };
        let Some(issue) = found(self.client.issue(repo, previous).await)? else {
            tracing::info!("session issue {n} links {previous}, which is gone");
            return Ok(None);
        };
        let session = self.has_session_marks(&issue);
        self.login().await?;
        if session && !self.trusted_creator(&issue) {
            self.look_alike(&issue);
            return Ok(None);
        }
        if !session {
            tracing::warn!(
                "session issue {n} links {previous}, which is not a session issue (other title \
                 or label); not following it"
            );
            return Ok(None);
        }
        Ok(Some(issue))
    }
}

fn poisoned() -> ForgeError {
    ForgeError::Setup(
        "internal error: a concurrent read panicked while walking the session issue chain; \
         run the command again"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_line_reads_back() {
        let body = format!("{}\n\nThis issue is ...", link_line(IssueNumber(12)));
        assert_eq!(linked(&body), Some(IssueNumber(12)));
        assert_eq!(
            linked("text\n  Previous session issue: #7 (closed)\n"),
            Some(IssueNumber(7))
        );
        assert_eq!(linked("Previous session issue: #"), None);
        assert_eq!(
            linked("Previous session issue: #99999999999999999999999"),
            None
        );
        assert_eq!(linked("no link here"), None);
    }
}
