//! The session thread as one chain of issues: a **head**, where writes go, and **members**,
//! which reads cover.
//!
//! Members are every issue (open or closed, never a pull request) with the session title and
//! label, and the head itself even when a person retitled it. The head is the newest issue by
//! the links rotation writes (`Previous session issue: #N` in a successor's body, `Rotated: this
//! session continues in #M` on the old issue; `chain/elect.rs` decides it), never "the lowest open
//! number" alone. Reads merge the members: a warm read is one repository-wide comment list since
//! the cursor (`GET /repos/{o}/{r}/issues/comments?since=`, §3.10), which sees a late post on any
//! member; a cold read (`chain/cold.rs`) takes the head's own list whole and the other members'
//! posts since a margin before the head was created, through their own lists or the
//! repository-wide list since then, whichever costs less, and whole the open old issues of
//! rotations not finished (`chain/unfinished.rs`). Records are merged by comment id here and by record `Id`
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
use super::error::{ForgeError, found};
use super::http::ForgeClient;
use super::models::{Issue, IssueNumber};
mod cold;
mod elect;
mod read;
mod unfinished;

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
    /// Closed members walked by the head's election: the issue each links back to.
    links: BTreeMap<u64, Option<u64>>,
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
    /// It is open and a newer member continues it (a link reaches it, at any depth): a
    /// reopened old issue, or a rotation interrupted before its last step, which a rotation of
    /// it finishes.
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
        self.login_with(c).await?;
        let issue = found(c.issue(&self.settings.repo, IssueNumber(n)).await)?;
        let member = issue.is_some_and(|issue| self.is_member_issue(&issue));
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
    ///
    /// Only an issue a trusted author opened is a member (`authors.rs`): a look-alike someone
    /// else opened is warned of and never read.
    pub(super) fn is_member_issue(&self, issue: &Issue) -> bool {
        let title = issue.title == self.settings.title;
        let label = issue.has_label(&self.settings.label);
        if title && label && issue.pull_request.is_none() && !self.trusted_creator(issue) {
            self.look_alike(issue);
            return false;
        }
        issue.pull_request.is_none() && ((title && label) || ((title || label) && self.ours(issue)))
    }

    /// Whether `issue` was opened by the token's own account (as far as this process knows its
    /// login) with the session issue's body (after any `Previous session issue:` line).
    pub(super) fn ours(&self, issue: &Issue) -> bool {
        let me = self.known_login();
        me.is_some_and(|me| issue.user.login == me) && self.session_body(issue)
    }

    /// Whether `issue`'s body is the session issue's body (after any `Previous session issue:`
    /// line).
    pub(super) fn session_body(&self, issue: &Issue) -> bool {
        let body = issue.body.replace("\r\n", "\n");
        let ours = self.settings.issue_body.replace("\r\n", "\n");
        !ours.trim().is_empty() && body.trim_end().ends_with(ours.trim_end())
    }

    fn verdict(&self, n: u64) -> Option<bool> {
        if let Some(&v) = self.chain.lock().ok()?.verdicts.get(&n) {
            return Some(v);
        }
        let cached = self.cached();
        let same = self.same_settings(&cached);
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
        if open && continued {
            // The warning says this machine's next record closes it: remember it past this
            // process (a `resume` or `status` that warned writes nothing).
            self.remember(|s| {
                s.reopened.insert(n.0);
            });
        }
    }

    /// The strays noted so far, forgotten here (the client tidies them).
    pub fn take_strays(&self) -> Vec<Stray> {
        let mut taken = match self.chain.lock() {
            Ok(mut chain) => std::mem::take(&mut chain.strays),
            Err(_) => return Vec::new(),
        };
        let mut reopened = BTreeSet::new();
        if !self.cached().reopened.is_empty() {
            self.remember(|s| reopened = std::mem::take(&mut s.reopened));
        }
        let mut untidied = BTreeSet::new();
        if !self.cached().untidied.is_empty() {
            self.remember(|s| untidied = std::mem::take(&mut s.untidied));
        }
        let untidied = untidied.into_iter().map(|n| (n, false));
        for (n, open) in untidied.chain(reopened.into_iter().map(|n| (n, true))) {
            taken.entry(n).or_insert(Stray {
                issue: IssueNumber(n),
                open,
                continued: open,
            });
        }
        taken.into_values().collect()
    }

    /// Remembers that the rotation of `old` was left to the run carrying it: this machine's
    /// next record looks again ([`ForgeThread::take_left`]).
    pub fn note_left(&self, old: IssueNumber) {
        if !self.cached().left.contains(&old.0) {
            self.remember(|s| {
                s.left.insert(old.0);
            });
        }
    }

    /// The old issues whose rotation this machine left to another run, forgotten here (the
    /// client looks at them again).
    pub fn take_left(&self) -> Vec<IssueNumber> {
        if self.cached().left.is_empty() {
            return Vec::new();
        }
        let mut left = BTreeSet::new();
        self.remember(|s| left = std::mem::take(&mut s.left));
        left.into_iter().map(IssueNumber).collect()
    }

    /// Remembers that member `n` is left untidied for now (another machine was carrying from
    /// it): this machine's next record, from any process, tidies it again.
    pub fn note_untidied(&self, n: IssueNumber) {
        self.remember(|s| {
            s.untidied.insert(n.0);
        });
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
        let cached = self.cached();
        self.chain.lock().is_ok_and(|c| !c.strays.is_empty())
            || !cached.reopened.is_empty()
            || !cached.untidied.is_empty()
            || !cached.left.is_empty()
    }

    /// The comments of member `n` updated at or after `since` (opaque bodies, every author).
    pub async fn comments_since(
        &self,
        n: IssueNumber,
        since: DateTime<Utc>,
    ) -> Result<crate::store::Listing, ForgeError> {
        let list = self.client.comments(&self.settings.repo, n, Some(since));
        Ok(Self::into_listing(list.await?))
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
}
