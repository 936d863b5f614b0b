//! Reading the session thread: the members' comments in one list, warm (since the last read)
//! or cold (`cold.rs`: the head's own list whole and the other members' posts by the cheaper
//! list), and the members kept out of what the repository-wide list holds.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use crate::forge::ForgeThread;
use crate::forge::decode::Filter;
use crate::forge::error::ForgeError;
use crate::forge::http::ForgeClient;
use crate::forge::models::{Comment, CommentList, IssueNumber, UnreadableComment};
use crate::store::{Keep, issue_in_url};

impl ForgeThread {
    /// The head `n` and the members' comments, `since` a time (warm) or since [`MARGIN`](super::MARGIN) before
    /// the head was created (cold: every comment the head holds, since none is older than the
    /// head), in one repository-wide list (§3.10), merged in comment id order. A server without
    /// that list (404), or one that cuts it short (fewer elements than its `X-Total-Count`), is
    /// read through the head's own list instead: the head's records are all there, only other
    /// members' are not.
    pub(in crate::forge) async fn read_chain(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        since: Option<DateTime<Utc>>,
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let Some(t) = since else {
            // A cold read plans which lists to take (`cold.rs`).
            return self.read_chain_whole(c, n, keep).await;
        };
        let wide = c
            .repo_comments_keeping(repo, t, self.dropping(keep, n))
            .await;
        let mut list = match usable(wide, n)? {
            Wide::List(list) => list,
            Wide::Partial(why) => {
                let mut head = c
                    .comments_keeping(repo, n, since, self.filter(keep))
                    .await?;
                head.partial = Some(why);
                return Ok(head);
            }
        };
        self.keep_members(c, n, &mut list, (t, keep)).await?;
        Ok(list)
    }

    /// The filter `keep` resolves to for a repository-wide list of the thread whose head is
    /// `head`: dropping the comments of issues known not to be members, and counting toward the
    /// response cap only the bodies of the head and the known members.
    pub(super) async fn dropping(
        &self,
        keep: &Keep,
        head: IssueNumber,
    ) -> Result<Filter, ForgeError> {
        let mut filter = self.filter(keep).await?;
        let (members, others) = self.known_members();
        filter.drop_issues.extend(others);
        filter.members = Some(members.into_iter().chain([head.0]).collect());
        Ok(filter)
    }

    /// The issues known to be members, and those known not to be.
    fn known_members(&self) -> (Vec<u64>, Vec<u64>) {
        let mut known: Vec<(u64, bool)> = Vec::new();
        if let Ok(chain) = self.chain.lock() {
            known.extend(chain.verdicts.iter().map(|(n, m)| (*n, *m)));
        }
        known.extend(self.cached().members);
        let (yes, no): (Vec<_>, Vec<_>) = known.into_iter().partition(|(_, m)| *m);
        (
            yes.into_iter().map(|(n, _)| n).collect(),
            no.into_iter().map(|(n, _)| n).collect(),
        )
    }

    /// Drops from `list` the comments of issues that are not members, reads on their own the
    /// members the list [deferred](CommentList::deferred) (since the list's `since`, as `keep`
    /// keeps), notes the members other than the head holding comments the head may lack, and
    /// sorts what is left by comment id.
    pub(super) async fn keep_members(
        &self,
        c: &ForgeClient,
        head: IssueNumber,
        list: &mut CommentList,
        (since, keep): (DateTime<Utc>, &Keep),
    ) -> Result<(), ForgeError> {
        let mut issues: BTreeSet<u64> = list.comments.iter().filter_map(comment_issue).collect();
        issues.extend(list.taken.iter().filter_map(|x| x.issue));
        issues.extend(list.unreadable.iter().filter_map(unreadable_issue));
        issues.extend(list.deferred.iter().copied());
        let mut members = BTreeSet::new();
        for n in issues {
            if self.is_member(c, head, n).await? {
                members.insert(n);
            }
        }
        let named: Vec<String> = members.iter().map(|n| format!("#{n}")).collect();
        tracing::info!(
            "session thread: head {head}; members in this read: {}",
            if named.is_empty() {
                "none".to_string()
            } else {
                named.join(", ")
            }
        );
        list.comments
            .retain(|x| comment_issue(x).is_some_and(|n| members.contains(&n)));
        list.taken
            .retain(|x| x.issue.is_some_and(|n| members.contains(&n)));
        list.unreadable
            .retain(|x| unreadable_issue(x).is_some_and(|n| members.contains(&n)));
        for n in std::mem::take(&mut list.deferred) {
            if !members.contains(&n) {
                continue;
            }
            tracing::debug!("reading member #{n} on its own: the repository-wide list left it out");
            let own = c
                .comments_keeping(
                    &self.settings.repo,
                    IssueNumber(n),
                    Some(since),
                    self.filter(keep),
                )
                .await?;
            list.comments.retain(|x| comment_issue(x) != Some(n));
            list.taken.retain(|x| x.issue != Some(n));
            list.unreadable.retain(|x| unreadable_issue(x) != Some(n));
            list.comments.extend(own.comments);
            list.taken.extend(own.taken);
            list.unreadable.extend(own.unreadable);
        }
        let tidied = self.cached().tidied;
        let placed = (list.comments.iter())
            .map(|x| (x.id.0, comment_issue(x)))
            .chain(list.taken.iter().map(|x| (x.id.0, x.issue)));
        for (id, issue) in placed {
            let Some(n) = issue.filter(|n| *n != head.0) else {
                continue;
            };
            if tidied.get(&n).is_none_or(|upto| id > *upto) {
                self.note_stray(IssueNumber(n), false, false);
            }
        }
        // Ids are unique: an unstable sort needs no scratch copy of the list (8 MB at 50k).
        list.comments.sort_unstable_by_key(|x| x.id.0);
        list.taken.sort_unstable_by_key(|x| x.id.0);
        Ok(())
    }
}

/// What the repository-wide list gave.
pub(super) enum Wide {
    /// The list: it answers.
    List(CommentList),
    /// The head's own list must answer instead, and why that read may be incomplete.
    Partial(String),
}

/// The repository-wide list when it can answer; else why the head `n`'s own list must answer
/// instead: a server without the repository-wide list (404), or one that cut it short. The
/// reason becomes a warning of the answer, which then says `complete: false`.
pub(super) fn usable(
    wide: Result<CommentList, ForgeError>,
    n: IssueNumber,
) -> Result<Wide, ForgeError> {
    let unseen = "records posted late to earlier issues of the session thread are not seen by \
                  this read";
    let why = match wide {
        Ok(list) => return Ok(Wide::List(list)),
        Err(ForgeError::NotFound { .. }) => format!(
            "this forge has no repository-wide comment list (GET .../issues/comments answered \
             404), so the session issue {n}'s own list was read instead: {unseen}"
        ),
        Err(ForgeError::Incomplete { seen, total, .. }) => format!(
            "the forge cut the repository-wide comment list short ({seen} of {total}), so the \
             session issue {n}'s own list was read instead: {unseen}"
        ),
        Err(e) => return Err(e),
    };
    tracing::debug!("{why}");
    Ok(Wide::Partial(why))
}

pub(super) fn comment_issue(c: &Comment) -> Option<u64> {
    if c.issue_url.is_empty() {
        issue_in_url(&c.html_url)
    } else {
        issue_in_url(&c.issue_url)
    }
}

pub(super) fn unreadable_issue(u: &UnreadableComment) -> Option<u64> {
    u.html_url.as_deref().and_then(issue_in_url)
}
