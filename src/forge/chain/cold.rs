//! A cold read: the head's own list whole, asked at once with the two small requests that plan
//! how the other members' late posts are read (through their own lists, or the repository-wide
//! list, whichever costs less), so every record is seen. docs/forge.md, "Which list a cold read
//! takes", states the rule.

use std::future::Future;
use std::task::Poll;

use chrono::{DateTime, Utc};

use super::MARGIN;
use super::read::{Wide, comment_issue, unreadable_issue, usable};
use crate::forge::ForgeThread;
use std::collections::BTreeSet;

use crate::forge::decode::Filter;
use crate::forge::error::{Call, ForgeError};
use crate::forge::http::ForgeClient;
use crate::forge::models::{CommentList, Issue, IssueNumber};
use crate::store::Keep;

/// What one more request costs a plan, in comments downloaded: a round trip (tens of
/// milliseconds) is worth about that many comments of a checkpoint's size.
const REQUEST_COST: u64 = 50;

/// The most pages of "issues updated since the head was created" a plan walks: past that, the
/// repository is busy on so many issues that its wide list is taken without more asking.
const SEARCH_PAGES: u32 = 4;

/// How a cold read reads the members other than the head.
#[derive(Debug)]
enum Plan {
    /// Each member updated since the margin (a stray) through its own list since then.
    Own { strays: Vec<IssueNumber> },
    /// The repository-wide list since the margin, the head's comments in it skipped unread;
    /// `strays` when they are known (read through their own lists if that list fails).
    Wide { strays: Option<Vec<IssueNumber>> },
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
    /// Whether the strays' own lists cost no more than the repository-wide list (the head's
    /// own list is read either way). One stray's list is one request, as the wide list is; each
    /// more is [`REQUEST_COST`] more. With an unknown wide total the own lists are the ones whose
    /// cost is known.
    fn own_is_cheaper(&self) -> bool {
        let Some(wide) = self.wide else {
            return true;
        };
        let Some(more) = self.strays.len().checked_sub(1) else {
            return true;
        };
        // A stray's own list since the margin holds only what it got since then, which the
        // wide list holds too, past the head's part.
        let strays = (self.strays.iter().map(|(_, count)| count).sum::<u64>())
            .min(wide.saturating_sub(self.head));
        strays + REQUEST_COST * more as u64 <= wide
    }
}

impl ForgeThread {
    /// A cold read: every comment of the head, whatever its time (its own list, whole), and
    /// every other member's since [`MARGIN`] before the head was created. Asked at once with
    /// the head's list, two small requests plan the rest: the issues updated since the margin
    /// (each with its comment count; a new comment bumps its issue's `updated_at`), which names
    /// the members that may hold late posts, and page 1 of one comment of the repository-wide
    /// list, whose `X-Total-Count` sizes that list.
    pub(in crate::forge) async fn read_chain_whole(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let mut counted = None;
        let opened = match self.cached().opened {
            Some((number, opened, _)) if number == n.0 => opened,
            _ => {
                let issue = c.issue(repo, n).await?;
                self.note_opened(&issue);
                self.note_count(&issue);
                self.warn_if_edited(&issue);
                counted = Some(issue.comments);
                issue.created_at
            }
        };
        let since = opened - MARGIN;
        let (plan, head) = tokio::join!(
            self.plan(c, n, since),
            c.comments_keeping(repo, n, None, self.filter(keep))
        );
        let ((plan, walk), mut list) = (plan?, head?);
        let count = walk
            .iter()
            .flatten()
            .find(|issue| issue.number == n)
            .map(|issue| issue.comments)
            .or(counted);
        self.check_count(c, n, count, &list).await?;
        let whole = self.unfinished(c, n, walk.as_deref()).await?;
        let mut others = match plan {
            Plan::Own { strays } => self.read_strays(c, Some(since), &strays, keep).await?,
            Plan::Wide { strays } => {
                let wide = c
                    .repo_comments_keeping(repo, since, self.dropping_head(keep, n))
                    .await;
                match (usable(wide, n)?, strays) {
                    (Wide::List(wide), _) => wide,
                    (Wide::Partial(_), Some(strays)) => {
                        self.read_strays(c, Some(since), &strays, keep).await?
                    }
                    (Wide::Partial(why), None) => {
                        list.partial = Some(why);
                        CommentList::default()
                    }
                }
            }
        };
        if list.partial.is_some() && whole.is_empty() {
            return Ok(list);
        }
        if !whole.is_empty() {
            // Read whole, the posts since the margin with the rest: drop them from the lists
            // read since then.
            let whole_read =
                |issue: Option<u64>| issue.is_some_and(|i| whole.contains(&IssueNumber(i)));
            others.comments.retain(|x| !whole_read(comment_issue(x)));
            others.taken.retain(|x| !whole_read(x.issue));
            others
                .unreadable
                .retain(|x| !whole_read(unreadable_issue(x)));
            merge(&mut others, self.read_strays(c, None, &whole, keep).await?);
        }
        merge(&mut list, others);
        self.keep_members(c, n, &mut list, (since, keep)).await?;
        Ok(list)
    }

    /// The head `n`'s `list` against the issue's comment `count`, when the answer came without
    /// the `X-Total-Count` that vouches for it (a proxy stripped it): the list sends every plain
    /// comment in one answer and the count counts them (ENDPOINTS.md §3.9, §4.2), so fewer is a
    /// list cut short. With the header the server's word stands: a count that drifted from the
    /// comments (Gitea's `doctor` repairs such counts) must not fail every read. The count was
    /// asked with the list, so a comment posted between the two answers is not a cut: the list
    /// is asked once more, after the count, and counted only (every body skipped unread).
    async fn check_count(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        count: Option<i64>,
        list: &CommentList,
    ) -> Result<(), ForgeError> {
        let Some(count) = count.and_then(|count| u64::try_from(count).ok()) else {
            return Ok(());
        };
        if list.total.is_some() || count <= list.seen as u64 {
            return Ok(());
        }
        let counting = Filter {
            drop_issues: BTreeSet::from([n.0]),
            ..Filter::all()
        };
        let repo = &self.settings.repo;
        let again = c
            .comments_keeping(repo, n, None, async { Ok(counting) })
            .await?;
        if again.total.is_some() || count <= again.seen as u64 {
            return Ok(());
        }
        Err(ForgeError::ShortList {
            call: Call {
                method: "GET",
                path: repo.path(&format!("issues/{}/comments", n.0)),
            },
            seen: again.seen as u64,
            count,
        })
    }

    /// How to read the members other than the head `n`, and the issues updated since `since`
    /// when they were listed (what tells an unfinished rotation, `unfinished.rs`).
    async fn plan(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        since: DateTime<Utc>,
    ) -> Result<(Plan, Option<Vec<Issue>>), ForgeError> {
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
                return Ok((Plan::Wide { strays: None }, None));
            }
            Err(e) if e.is_transient() => return Err(e),
            Err(e) => {
                tracing::debug!("cannot list the issues updated since {n} was created: {e}");
                return Ok((Plan::Wide { strays: None }, None));
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
            // `since` did not filter as documented, whose list is not to be relied on.
            return Ok((Plan::Wide { strays: None }, None));
        };
        let sizes = Sizes {
            head: u64::try_from(count).unwrap_or(0),
            strays,
            wide,
        };
        let own = sizes.own_is_cheaper();
        tracing::debug!(
            "cold read of {n}: head {} comments, other members updated since its creation {:?}, \
             repository-wide list {:?}: reading them through {}",
            sizes.head,
            sizes.strays,
            sizes.wide,
            if own {
                "their own lists"
            } else {
                "the repository-wide list"
            }
        );
        let strays = sizes.strays.into_iter().map(|(n, _)| n).collect();
        let plan = if own {
            Plan::Own { strays }
        } else {
            Plan::Wide {
                strays: Some(strays),
            }
        };
        Ok((plan, Some(walk)))
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
        self.login_with(c).await?;
        let member = self.is_member_issue(issue);
        self.note_verdict(issue.number.0, member);
        Ok(member)
    }

    /// The strays' own lists since the margin (`None`: whole), all at once, as one list.
    async fn read_strays(
        &self,
        c: &ForgeClient,
        since: Option<DateTime<Utc>>,
        strays: &[IssueNumber],
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let lists = all(strays
            .iter()
            .map(|s| c.comments_keeping(repo, *s, since, self.filter(keep)))
            .collect());
        let mut list = CommentList::default();
        for other in lists.await {
            merge(&mut list, other?);
        }
        Ok(list)
    }

    /// [`ForgeThread::dropping`], the head's comments dropped too, their bodies skipped unread:
    /// its own list, read whole, holds them.
    async fn dropping_head(
        &self,
        keep: &Keep,
        head: IssueNumber,
    ) -> Result<crate::forge::decode::Filter, ForgeError> {
        let mut filter = self.dropping(keep, head).await?;
        filter.drop_issues.insert(head.0);
        Ok(filter)
    }
}

/// Adds the comments of `other` to `list`.
fn merge(list: &mut CommentList, other: CommentList) {
    list.seen += other.seen;
    list.comments.extend(other.comments);
    list.taken.extend(other.taken);
    list.unreadable.extend(other.unreadable);
    list.deferred.extend(other.deferred);
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
    fn no_stray_asks_for_no_list_beside_the_head_s() {
        assert!(sizes(1000, &[], Some(21_000)).own_is_cheaper());
        assert!(sizes(1000, &[], Some(1000)).own_is_cheaper());
        assert!(sizes(1000, &[], None).own_is_cheaper());
    }

    #[test]
    fn one_stray_is_read_through_its_own_list() {
        // One request either way, and the stray's list is part of the wide one.
        assert!(sizes(1000, &[1000], Some(21_002)).own_is_cheaper());
        assert!(sizes(1000, &[1000], Some(1003)).own_is_cheaper());
    }

    #[test]
    fn many_strays_in_a_quiet_repository_are_read_through_the_wide_list() {
        // Ten requests where one list holds the strays' few late posts.
        assert!(!sizes(10, &[5; 10], Some(40)).own_is_cheaper());
        // In a busy one, the ten small lists.
        assert!(sizes(10, &[5; 10], Some(20_040)).own_is_cheaper());
    }
}
