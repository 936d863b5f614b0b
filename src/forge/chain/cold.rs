//! A cold read's plan: the head's own list (and the other members' late posts through their
//! own lists), or the repository-wide list since the head was created, whichever costs less,
//! both seeing every record. docs/forge.md, "Which list a cold read takes", states the rule.

use std::future::Future;
use std::task::Poll;

use chrono::{DateTime, Utc};

use super::MARGIN;
use super::read::{Wide, usable};
use crate::forge::ForgeThread;
use crate::forge::error::ForgeError;
use crate::forge::http::ForgeClient;
use crate::forge::models::{CommentList, Issue, IssueNumber};
use crate::store::Keep;

/// What one more request costs a plan, in comments downloaded: a round trip (tens of
/// milliseconds) is worth about that many comments of a checkpoint's size.
const REQUEST_COST: u64 = 50;

/// The most pages of "issues updated since the head was created" a plan walks: past that, the
/// repository is busy on so many issues that its wide list is taken without more asking.
const SEARCH_PAGES: u32 = 4;

/// Which lists a cold read takes.
#[derive(Debug)]
enum Plan {
    /// The head's own list whole, and each other member updated since the margin through its
    /// own list since then.
    Own { strays: Vec<IssueNumber> },
    /// The repository-wide list since the margin, checked against the head's comment count
    /// (`None`: ask for it beside the list).
    Wide { count: Option<i64> },
}

/// The sizes a plan weighs: the head's comment count, the other members updated since the
/// margin with theirs, and the repository-wide list's total (`None`: not known).
#[derive(Debug)]
struct Sizes {
    head: u64,
    strays: Vec<(IssueNumber, u64)>,
    wide: Option<u64>,
}

impl Sizes {
    /// Whether the head's own list (with the strays' own lists) costs no more than the
    /// repository-wide list. With no stray it always does (the wide list holds the head's
    /// comments since the margin, and more); with an unknown wide total it is the one whose
    /// cost is known.
    fn own_is_cheaper(&self) -> bool {
        let Some(wide) = self.wide else {
            return true;
        };
        if self.strays.is_empty() {
            return true;
        }
        // A stray's own list since the margin holds only what it got since then, which the
        // wide list holds too, past the head's part.
        let strays = (self.strays.iter().map(|(_, count)| count).sum::<u64>())
            .min(wide.saturating_sub(self.head));
        let own = self.head + strays + REQUEST_COST * self.strays.len() as u64;
        // A wide list holding fewer than the head's count is followed by the head's own list.
        let wide = if wide < self.head {
            wide + self.head
        } else {
            wide
        };
        own <= wide
    }
}

impl ForgeThread {
    /// A cold read: every comment of the head, whatever its time, and every other member's
    /// since [`MARGIN`] before the head was created. The plan is made from two small requests
    /// asked at once: the issues updated since the margin (each with its comment count; a new
    /// comment bumps its issue's `updated_at`), which names the members that may hold late
    /// posts, and page 1 of one comment of the repository-wide list, whose `X-Total-Count`
    /// sizes that list.
    pub(in crate::forge) async fn read_chain_whole(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let opened = match self.cached().opened {
            Some((number, opened, _)) if number == n.0 => opened,
            _ => {
                let issue = c.issue(repo, n).await?;
                self.note_opened(&issue);
                self.note_count(&issue);
                self.warn_if_edited(&issue);
                issue.created_at
            }
        };
        let since = opened - MARGIN;
        match self.plan(c, n, since).await? {
            Plan::Own { strays } => self.read_own(c, n, since, &strays, keep).await,
            Plan::Wide { count } => self.read_wide(c, n, since, count, keep).await,
        }
    }

    async fn plan(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        since: DateTime<Utc>,
    ) -> Result<Plan, ForgeError> {
        let repo = &self.settings.repo;
        let limit = self.known_page_size();
        let (wide, found) = tokio::join!(
            c.repo_comments_total(repo, since),
            c.issues_since(repo, since, limit, SEARCH_PAGES)
        );
        let wide = match wide {
            Ok(total) => total,
            Err(e) if e.is_transient() => return Err(e),
            // The wide list's own read says why it cannot answer, if it is asked for.
            Err(e) => {
                tracing::debug!("cannot size the repository-wide comment list: {e}");
                None
            }
        };
        let walk = match found {
            Ok(Some(walk)) => walk,
            Ok(None) => {
                tracing::debug!(
                    "more than {SEARCH_PAGES} pages of issues were updated since the session \
                     issue {n} was created: reading the repository-wide comment list"
                );
                return Ok(Plan::Wide { count: None });
            }
            Err(e) if e.is_transient() => return Err(e),
            Err(e) => {
                tracing::debug!("cannot list the issues updated since {n} was created: {e}");
                return Ok(Plan::Wide { count: None });
            }
        };
        let mut head = None;
        let mut strays = Vec::new();
        for issue in &walk {
            if issue.number == n {
                self.note_count(issue);
                self.warn_if_edited(issue);
                head = Some(issue.comments);
            } else if self.is_member_listed(c, issue).await? {
                strays.push((issue.number, u64::try_from(issue.comments).unwrap_or(0)));
            }
        }
        let Some(count) = head else {
            // The head was updated when it was created, so the list holds it: a server whose
            // `since` did not filter as documented. The wide list checks the count itself.
            return Ok(Plan::Wide { count: None });
        };
        let sizes = Sizes {
            head: u64::try_from(count).unwrap_or(0),
            strays,
            wide,
        };
        let own = sizes.own_is_cheaper();
        tracing::debug!(
            "cold read of {n}: head {} comments, other members updated since its creation {:?}, \
             repository-wide list {:?}: reading {}",
            sizes.head,
            sizes.strays,
            sizes.wide,
            if own {
                "the members' own lists"
            } else {
                "the repository-wide list"
            }
        );
        Ok(if own {
            Plan::Own {
                strays: sizes.strays.into_iter().map(|(n, _)| n).collect(),
            }
        } else {
            Plan::Wide { count: Some(count) }
        })
    }

    /// Whether an issue a list answered is a member (a verdict known already, else judged from
    /// the issue itself, with no request of its own but the token's login, once, and only for
    /// an issue with the session title or label: another never is one).
    async fn is_member_listed(&self, c: &ForgeClient, issue: &Issue) -> Result<bool, ForgeError> {
        if let Some(known) = self.verdict(issue.number.0) {
            return Ok(known);
        }
        if issue.title != self.settings.title && !issue.has_label(&self.settings.label) {
            self.note_verdict(issue.number.0, false);
            return Ok(false);
        }
        self.know_login_with(c).await?;
        let member = self.is_member_issue(issue);
        self.note_verdict(issue.number.0, member);
        Ok(member)
    }

    /// [`Plan::Own`]: the head's own list whole and each stray's since the margin, all at once.
    async fn read_own(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        since: DateTime<Utc>,
        strays: &[IssueNumber],
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let head = c.comments_keeping(repo, n, None, self.filter(keep));
        let others = all(strays
            .iter()
            .map(|s| c.comments_keeping(repo, *s, Some(since), self.filter(keep)))
            .collect());
        let (head, others) = tokio::join!(head, others);
        let mut list = head?;
        for other in others {
            let other = other?;
            list.seen += other.seen;
            list.comments.extend(other.comments);
            list.unreadable.extend(other.unreadable);
        }
        self.keep_members(c, n, &mut list, (since, keep)).await?;
        list.comments.sort_by_key(|x| x.id.0);
        Ok(list)
    }

    /// [`Plan::Wide`]: the repository-wide list since the margin, with the head's comment count
    /// (asked beside it when not known): a comment whose `updated_at` is older than the margin
    /// (an owner may post with `updated_at` set, §3.11) is missing from that list, and the count
    /// shows it, so the head's own list is then read whole as well.
    async fn read_wide(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        since: DateTime<Utc>,
        known: Option<i64>,
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let count = async {
            match known {
                Some(count) => Some(count),
                None => match c.issue(repo, n).await {
                    Ok(issue) => {
                        self.note_count(&issue);
                        self.warn_if_edited(&issue);
                        Some(issue.comments)
                    }
                    Err(e) => {
                        tracing::debug!("cannot read the session issue {n}'s comment count: {e}");
                        None
                    }
                },
            }
        };
        let (wide, count) = tokio::join!(
            c.repo_comments_keeping(repo, since, self.dropping(keep, n)),
            count
        );
        let mut list = match usable(wide, n)? {
            Wide::List(list) => list,
            Wide::Partial(why) => {
                let mut head = c.comments_keeping(repo, n, None, self.filter(keep)).await?;
                head.partial = Some(why);
                return Ok(head);
            }
        };
        let on_head = |issue: Option<u64>| issue == Some(n.0);
        let held = (list.comments.iter())
            .filter(|x| on_head(super::read::comment_issue(x)))
            .count()
            + (list.unreadable.iter())
                .filter(|x| on_head(super::read::unreadable_issue(x)))
                .count();
        if count.is_none_or(|count| i64::try_from(held).unwrap_or(i64::MAX) < count) {
            tracing::debug!(
                "the session issue {n} holds comments older than itself (or its count is \
                 unknown): reading its own list whole"
            );
            let head = c.comments_keeping(repo, n, None, self.filter(keep)).await?;
            list.comments
                .retain(|x| !on_head(super::read::comment_issue(x)));
            list.unreadable
                .retain(|x| !on_head(super::read::unreadable_issue(x)));
            list.comments.extend(head.comments);
            list.unreadable.extend(head.unreadable);
        }
        self.keep_members(c, n, &mut list, (since, keep)).await?;
        list.comments.sort_by_key(|x| x.id.0);
        Ok(list)
    }
}

/// Runs the futures at once; their outputs, in order.
async fn all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *slot = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(head: u64, strays: &[u64], wide: Option<u64>) -> Sizes {
        Sizes {
            head,
            strays: (strays.iter().enumerate())
                .map(|(i, c)| (IssueNumber(i as u64 + 1), *c))
                .collect(),
            wide,
        }
    }

    #[test]
    fn the_head_alone_is_never_dearer_than_the_wide_list() {
        assert!(sizes(1000, &[], Some(21_000)).own_is_cheaper());
        assert!(sizes(1000, &[], Some(1000)).own_is_cheaper());
        assert!(sizes(1000, &[], None).own_is_cheaper());
    }

    #[test]
    fn a_busy_repository_reads_the_members_own_lists() {
        // A rotated member (1,000 comments) with a late post, and 20,000 comments elsewhere.
        assert!(sizes(1000, &[1000], Some(21_002)).own_is_cheaper());
    }

    #[test]
    fn a_quiet_repository_with_a_stray_reads_the_wide_list() {
        // The wide list is the head's comments and the stray's few late posts: one request.
        assert!(!sizes(1000, &[1000], Some(1003)).own_is_cheaper());
        assert!(!sizes(10, &[5, 5, 5], Some(20)).own_is_cheaper());
    }
}
