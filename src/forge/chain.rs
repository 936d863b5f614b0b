//! The session thread as one chain of issues: a **head**, where writes go, and **members**,
//! which reads cover.
//!
//! Members are every issue (open or closed, never a pull request) with the session title and
//! label, and the head itself even when a person retitled it. The head is the newest issue by
//! the links rotation writes (`Previous session issue: #N` in a successor's body, `Rotated: this
//! session continues in #M` on the old issue; `session.rs` decides it), never "the lowest open
//! number" alone. Reads merge the members: a warm read is one repository-wide comment list since
//! the cursor (`GET /repos/{o}/{r}/issues/comments?since=`, §3.10), which sees a late post on any
//! member; a cold read lists the head and, in one more request, what every member got since a
//! margin before the head was created. Records are merged by comment id here and by record `Id`
//! in `scan.rs`, so a record posted to the wrong member is still read once.
//!
//! A verdict per issue number (member or not) costs one `GET` once and is remembered in memory
//! and in the issue-number cache. Members that hold records the head may lack (an open
//! duplicate, a reopened old issue, a late post) are noted as strays for the client to tidy
//! (`client/tidy.rs`): it carries their records to the head, and closes the open ones.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

use super::ForgeThread;
use super::decode::Filter;
use super::error::ForgeError;
use super::http::ForgeClient;
use super::models::{Comment, CommentList, Issue, IssueNumber, UnreadableComment};
use crate::store::{Keep, issue_in_url};

/// How long before the head was created a cold read looks for other members' comments: a
/// rotation reads the old issue, then creates the successor, and a post in between (or in the
/// same second) is on the old issue only.
pub(crate) const MARGIN: Duration = Duration::minutes(10);

/// What one process knows of the chain: verdicts per issue, and the strays to tidy.
#[derive(Debug, Default)]
pub(super) struct ChainState {
    /// Issue number: is it a member.
    verdicts: BTreeMap<u64, bool>,
    /// Members other than the head that may hold records the head lacks, by number.
    strays: BTreeMap<u64, Stray>,
}

/// The chain state, shared by the reads and writes of one process.
pub(super) type ChainCell = Mutex<ChainState>;

/// A member other than the head that may hold records the head lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stray {
    /// The member.
    pub issue: IssueNumber,
    /// It is open (a duplicate left by a race, or a reopened old issue): close it once its
    /// records are on the head.
    pub open: bool,
    /// It is open and a newer member continues it (its body links it): a reopened old issue or
    /// a rotation interrupted before its last step, which a rotation of it finishes.
    pub continued: bool,
}

impl ForgeThread {
    /// Whether issue `n` is a member of the thread whose head is `head`.
    async fn is_member(
        &self,
        c: &ForgeClient,
        head: IssueNumber,
        n: u64,
    ) -> Result<bool, ForgeError> {
        if n == head.0 {
            return Ok(true);
        }
        if let Some(known) = self.verdict(n) {
            return Ok(known);
        }
        let member = match c.issue(&self.settings.repo, IssueNumber(n)).await {
            Ok(issue) => self.is_member_issue(&issue),
            Err(ForgeError::NotFound { .. }) => false,
            Err(e) => return Err(e),
        };
        if member {
            tracing::info!("issue {n} belongs to the session thread (head: {head})");
        }
        self.note_verdict(n, member);
        Ok(member)
    }

    /// An issue with the session title and label, open or closed, not a pull request; or one
    /// that kept one of the two (a person retitled it, or took the label off) and is plainly
    /// ours: opened by the token's own account, with the body forgestate gives a session issue.
    /// So an edit in the web UI never drops a member's records, and an issue that merely shares
    /// the title or the label (another tool's, a person's) is never taken for one.
    pub(super) fn is_member_issue(&self, issue: &Issue) -> bool {
        let title = issue.title == self.settings.title;
        let label = issue.has_label(&self.settings.label);
        issue.pull_request.is_none() && ((title && label) || ((title || label) && self.ours(issue)))
    }

    /// Whether `issue` was opened by the token's own account (as far as this process knows its
    /// login) with the session issue's body (after any `Previous session issue:` line).
    pub(super) fn ours(&self, issue: &Issue) -> bool {
        let me = self.login.lock().ok().and_then(|l| l.clone());
        let body = issue.body.replace("\r\n", "\n");
        let ours = self.settings.issue_body.replace("\r\n", "\n");
        me.is_some_and(|me| issue.user.login == me)
            && !ours.trim().is_empty()
            && body.trim_end().ends_with(ours.trim_end())
    }

    fn verdict(&self, n: u64) -> Option<bool> {
        if let Some(&v) = self.chain.lock().ok()?.verdicts.get(&n) {
            return Some(v);
        }
        let cached = self.cached();
        let same = cached.title.as_ref() == Some(&self.settings.title)
            && cached.label.as_ref() == Some(&self.settings.label);
        let v = cached.members.get(&n).copied().filter(|_| same)?;
        if let Ok(mut chain) = self.chain.lock() {
            chain.verdicts.insert(n, v);
        }
        Some(v)
    }

    /// Remembers that issue `n` is (or is not) a member, here and in the cache file.
    pub(super) fn note_verdict(&self, n: u64, member: bool) {
        if let Ok(mut chain) = self.chain.lock() {
            chain.verdicts.insert(n, member);
        }
        if self.cached().members.get(&n) != Some(&member) {
            self.remember(|s| {
                s.members.insert(n, member);
            });
        }
    }

    /// Notes a member other than the head that may hold records the head lacks.
    pub(super) fn note_stray(&self, n: IssueNumber, open: bool, continued: bool) {
        if let Ok(mut chain) = self.chain.lock() {
            let was = chain.strays.entry(n.0).or_insert(Stray {
                issue: n,
                open,
                continued,
            });
            was.open |= open;
            was.continued |= continued;
        }
    }

    /// The strays noted so far, forgotten here (the client tidies them).
    pub fn take_strays(&self) -> Vec<Stray> {
        let taken = match self.chain.lock() {
            Ok(mut chain) => std::mem::take(&mut chain.strays),
            Err(_) => return Vec::new(),
        };
        taken.into_values().collect()
    }

    /// Remembers that the records of member `n` up to comment `upto` are on the head, so later
    /// reads do not note it as a stray again for them.
    pub fn note_tidied(&self, n: IssueNumber, upto: u64) {
        self.remember(|s| {
            let at = s.tidied.entry(n.0).or_insert(0);
            *at = (*at).max(upto);
        });
    }

    /// The head (where writes go) and when it was created, asked fresh from the forge (a
    /// cached number may be a rotated-away issue), and adopted: later writes go there.
    pub async fn head(&self) -> Result<(IssueNumber, DateTime<Utc>), ForgeError> {
        if let Some(issue) = self.discover(&self.client).await? {
            let cached = self.cached().issue;
            if let Some(old) = cached.filter(|n| *n != issue.number.0) {
                // Its posts since the head moved are carried by the next tidy.
                self.note_stray(IssueNumber(old), false, false);
            }
            self.adopt(&issue);
            return Ok((issue.number, issue.created_at));
        }
        let n = self.issue_for(&self.client, true).await?;
        Ok((n, self.opened(&self.client, n).await?))
    }

    /// Whether any stray was noted (see [`ForgeThread::take_strays`]).
    pub fn has_strays(&self) -> bool {
        self.chain.lock().is_ok_and(|c| !c.strays.is_empty())
    }

    /// The comments of member `n` updated at or after `since` (opaque bodies, every author).
    pub async fn comments_since(
        &self,
        n: IssueNumber,
        since: DateTime<Utc>,
    ) -> Result<crate::store::Listing, ForgeError> {
        let all = async { Ok(Filter::all()) };
        let list = (self.client)
            .comments_keeping(&self.settings.repo, n, Some(since), all)
            .await?;
        Ok(Self::into_listing(list))
    }

    /// Closes the stray member `n` (a duplicate or a reopened old issue) with a note naming the
    /// head. Best effort: a failure is logged, and the stray stays merged by readers.
    pub async fn close_stray(&self, n: IssueNumber, head: IssueNumber) -> bool {
        let repo = &self.settings.repo;
        let note = format!(
            "Closed by forgestate: the session continues in #{}, and the records posted here \
             were carried there (with their `Id`). This issue is a duplicate left by a \
             concurrent start, or an old session issue that was reopened; please do not reopen \
             it.",
            head.0
        );
        let closed = match self.post_on(n, &note).await {
            Ok(_) => self.client.close_issue(repo, n).await.map(|_| ()),
            Err(e) => Err(e),
        };
        match closed {
            Ok(()) => {
                tracing::info!("closed the stray session issue {n} (the head is {head})");
                true
            }
            Err(e) => {
                tracing::warn!(
                    "cannot close the stray session issue {n} ({e}); close it by hand, {head} is \
                     the one in use"
                );
                false
            }
        }
    }

    /// When the head `n` was created: from the cache, else one `GET`.
    pub(super) async fn opened(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
    ) -> Result<DateTime<Utc>, ForgeError> {
        if let Some((number, opened, _)) = self.cached().opened
            && number == n.0
        {
            return Ok(opened);
        }
        let issue = c.issue(&self.settings.repo, n).await?;
        self.note_opened(&issue);
        Ok(issue.created_at)
    }

    /// Remembers when `issue` was created (what cold reads of it as the head need).
    pub(super) fn note_opened(&self, issue: &Issue) {
        let known = self.cached().opened;
        if known.is_none_or(|(n, _, _)| n != issue.number.0) {
            self.remember(|s| s.opened = Some((issue.number.0, issue.created_at, None)));
        }
    }

    /// The head `n` and the members' comments, `since` a time (warm) or since [`MARGIN`] before
    /// the head was created (cold: every comment the head holds, since none is older than the
    /// head), in one repository-wide list (§3.10), merged in comment id order. A server without
    /// that list (404), or one that cuts it short (fewer elements than its `X-Total-Count`), is
    /// read through the head's own list instead: the head's records are all there, only other
    /// members' are not.
    pub(super) async fn read_chain(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        since: Option<DateTime<Utc>>,
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let Some(t) = since else {
            return self.read_chain_whole(c, n, keep).await;
        };
        let wide = c
            .repo_comments_keeping(repo, t, self.dropping(keep, None))
            .await;
        let mut list = match wide {
            Err(ForgeError::NotFound { .. }) => {
                return c.comments_keeping(repo, n, since, self.filter(keep)).await;
            }
            Err(ForgeError::Incomplete { seen, total, .. }) => {
                tracing::warn!(
                    "the forge cut the repository-wide comment list short ({seen} of {total}); \
                     reading the session issue {n}'s own list instead (records left on other \
                     issues of the session thread are not seen by this read)"
                );
                return c.comments_keeping(repo, n, since, self.filter(keep)).await;
            }
            other => other?,
        };
        self.keep_members(c, n, &mut list).await?;
        list.comments.sort_by_key(|x| x.id.0);
        Ok(list)
    }

    /// A cold read: every comment of the head and the members' since [`MARGIN`] before the head
    /// was created. The head's whole list is one download, and the repository-wide list since
    /// then holds it, so that one is asked for alone, with the head's comment count beside it
    /// (the issue, read while the list streams): a comment whose `updated_at` is older than the
    /// head (an owner may post with `updated_at` set, §3.11) is missing from that list, and the
    /// count shows it, so the head's own list is then read whole as well. Nothing in the head is
    /// ever left out because of its time.
    async fn read_chain_whole(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        keep: &Keep,
    ) -> Result<CommentList, ForgeError> {
        let repo = &self.settings.repo;
        let (opened, known) = match self.cached().opened {
            Some((number, opened, _)) if number == n.0 => (opened, None),
            _ => {
                let issue = c.issue(repo, n).await?;
                self.note_opened(&issue);
                self.note_count(&issue);
                (issue.created_at, Some(issue.comments))
            }
        };
        let count = async {
            match known {
                Some(count) => Some(count),
                None => match c.issue(repo, n).await {
                    Ok(issue) => {
                        self.note_count(&issue);
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
            c.repo_comments_keeping(repo, opened - MARGIN, self.dropping(keep, None)),
            count
        );
        let mut list = match wide {
            Err(ForgeError::NotFound { .. }) => {
                return c.comments_keeping(repo, n, None, self.filter(keep)).await;
            }
            Err(ForgeError::Incomplete { seen, total, .. }) => {
                tracing::warn!(
                    "the forge cut the repository-wide comment list short ({seen} of {total}); \
                     reading the session issue {n}'s own list instead (records left on other \
                     issues of the session thread are not seen by this read)"
                );
                return c.comments_keeping(repo, n, None, self.filter(keep)).await;
            }
            other => other?,
        };
        let on_head = |issue: Option<u64>| issue == Some(n.0);
        let held = list
            .comments
            .iter()
            .filter(|x| on_head(comment_issue(x)))
            .count()
            + (list.unreadable.iter())
                .filter(|x| on_head(unreadable_issue(x)))
                .count();
        if count.is_none_or(|count| i64::try_from(held).unwrap_or(i64::MAX) < count) {
            tracing::debug!(
                "the session issue {n} holds comments older than itself (or its count is \
                 unknown): reading its own list whole"
            );
            let head = c.comments_keeping(repo, n, None, self.filter(keep)).await?;
            list.comments.retain(|x| !on_head(comment_issue(x)));
            list.unreadable.retain(|x| !on_head(unreadable_issue(x)));
            list.comments.extend(head.comments);
            list.unreadable.extend(head.unreadable);
        }
        self.keep_members(c, n, &mut list).await?;
        list.comments.sort_by_key(|x| x.id.0);
        Ok(list)
    }

    /// The filter `keep` resolves to, also dropping the comments of issues known not to be
    /// members (and of `also`, a list already read).
    async fn dropping(&self, keep: &Keep, also: Option<IssueNumber>) -> Result<Filter, ForgeError> {
        let mut filter = self.filter(keep).await?;
        filter.drop_issues.extend(self.non_members(also));
        Ok(filter)
    }

    /// The issues known not to be members, and `also`.
    fn non_members(&self, also: Option<IssueNumber>) -> Vec<u64> {
        let mut out = Vec::new();
        if let Ok(chain) = self.chain.lock() {
            out.extend(chain.verdicts.iter().filter(|(_, m)| !**m).map(|(n, _)| *n));
        }
        let cached = self.cached().members;
        out.extend(cached.iter().filter(|(_, m)| !**m).map(|(n, _)| *n));
        out.extend(also.map(|n| n.0));
        out
    }

    /// Drops from `list` the comments of issues that are not members, and notes the members
    /// other than the head holding comments the head may lack.
    async fn keep_members(
        &self,
        c: &ForgeClient,
        head: IssueNumber,
        list: &mut CommentList,
    ) -> Result<(), ForgeError> {
        let mut issues: BTreeSet<u64> = list.comments.iter().filter_map(comment_issue).collect();
        issues.extend(list.unreadable.iter().filter_map(unreadable_issue));
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
        list.unreadable
            .retain(|x| unreadable_issue(x).is_some_and(|n| members.contains(&n)));
        let tidied = self.cached().tidied;
        for x in &list.comments {
            let Some(n) = comment_issue(x).filter(|n| *n != head.0) else {
                continue;
            };
            if tidied.get(&n).is_none_or(|upto| x.id.0 > *upto) {
                self.note_stray(IssueNumber(n), false, false);
            }
        }
        Ok(())
    }
}

fn comment_issue(c: &Comment) -> Option<u64> {
    if c.issue_url.is_empty() {
        issue_in_url(&c.html_url)
    } else {
        issue_in_url(&c.issue_url)
    }
}

fn unreadable_issue(u: &UnreadableComment) -> Option<u64> {
    u.html_url.as_deref().and_then(issue_in_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_is_read_from_a_web_url() {
        let url = "https://forge.example/o/r/issues/12#issuecomment-3";
        assert_eq!(issue_in_url(url), Some(12));
        assert_eq!(issue_in_url("https://forge.example/o/r/issues/7"), Some(7));
        assert_eq!(issue_in_url("https://forge.example/o/r/pulls/7"), None);
        assert_eq!(issue_in_url("https://forge.example/o/r/issues/7x"), None);
        assert_eq!(issue_in_url(""), None);
        assert_eq!(issue_in_url("/issues/99999999999999999999999"), None);
    }
}
