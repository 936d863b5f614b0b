//! The forge side of rotation: finding or creating the successor of a long session issue,
//! posting on a given issue, and the closing note. Format-free: which records to carry is decided
//! by the client (`client/rotate.rs`), which hands bodies down already rendered.
//!
//! Every step can be repeated. The successor is the lowest open session issue above the old one
//! whose body links it (`Previous session issue: #N`), so a rerun finds the one an interrupted
//! run created, and racing rotations converge on the lowest, as racing `init`s do. The closing
//! note is looked for before it is posted again.

use std::sync::Mutex;

use super::ForgeThread;
use super::decode::Filter;
use super::error::ForgeError;
use super::lineage::linked;
use super::models::{Issue, IssueNumber};
use crate::store::{self, Listing};

/// How the closing note on a rotated issue starts, up to the successor's number.
const NOTE_PREFIX: &str = "Rotated: this session continues in #";

/// The issue a closing note forwards to (`Rotated: this session continues in #M …`).
pub(super) fn forwarded_to(body: &str) -> Option<IssueNumber> {
    let rest = body.trim_start().strip_prefix(NOTE_PREFIX)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().map(IssueNumber)
}

/// How long a rotation is left to the run carrying it: a rotation (a due record's, a tidy's, an
/// explicit `rotate`) that finds a successor created, or given a carried record, less than this
/// ago by another machine does not carry, since that run is carrying now, and many writers
/// carrying the same records at once would pile copies on the new head. A run that shows no
/// progress for [`STALLED`] (killed, or cut by its command's wait budget) is finished by the
/// next record after that, and at once by a rerun on the machine that started it.
pub const UNDER_WAY: chrono::Duration = chrono::Duration::seconds(60);

/// How long a rotation under way may go without a sign of progress (its successor's creation,
/// a record carried to it) before other machines take its run for stopped and finish it: a
/// live carrier posts a carried record every request or so, and a run cut by a command's wait
/// budget, or killed, posts nothing more. Far shorter than [`UNDER_WAY`], so a rotation stopped
/// near the end of a burst of writes is finished by the next records, not left open for a
/// minute (issue #42's soak).
pub const STALLED: chrono::Duration = chrono::Duration::seconds(15);

/// The session issue and how many comments it had when last seen.
pub(super) type CountCell = Mutex<Option<(IssueNumber, u64, chrono::DateTime<chrono::Utc>)>>;

/// What [`ForgeThread::successor`] found or made.
#[derive(Debug, Clone)]
pub struct Successor {
    /// The successor issue.
    pub issue: Issue,
    /// This call created it (false: an earlier or concurrent rotation did).
    pub created: bool,
    /// This call created one but a concurrent rotation created a lower one first; ours was
    /// closed as its duplicate and `issue` is theirs.
    pub lost_race: bool,
}

impl ForgeThread {
    /// The session issue to rotate, asked fresh from the forge: the lowest open one a newer
    /// open one continues (an interrupted rotation, or a reopened old issue: rotating it again
    /// finishes the job), else the head. `None` when there is none.
    pub async fn current_issue(&self) -> Result<Option<Issue>, ForgeError> {
        self.rotation_target(&self.client).await
    }

    /// The lowest open session issue numbered above `old` whose body links `old`. Every open
    /// issue is listed (no label filter), as `init`'s race check does.
    pub async fn find_successor(&self, old: IssueNumber) -> Result<Option<Issue>, ForgeError> {
        Ok(self
            .session_issues(&self.client, true)
            .await?
            .into_iter()
            .find(|i| i.number > old && linked(&i.body) == Some(old)))
    }

    /// Whether this machine's own rotation created the successor `n` and has not closed its old
    /// issue yet: an interrupted run that a rerun here finishes at once.
    pub fn rotating_here(&self, n: IssueNumber) -> bool {
        self.cached().rotating.contains(&n.0)
    }

    /// Whether `at` (a time the forge gave) is less than [`UNDER_WAY`] ago by its clock.
    pub fn lately(&self, at: chrono::DateTime<chrono::Utc>) -> bool {
        self.client.server_now() - at < UNDER_WAY
    }

    /// Whether `at` (a time the forge gave: a successor's creation, a carried record's post) is
    /// a sign of progress less than [`STALLED`] ago by its clock.
    pub fn moving(&self, at: chrono::DateTime<chrono::Utc>) -> bool {
        self.client.server_now() - at < STALLED
    }

    /// The id of the comment of `listing` (an old issue's) that closes its rotation to `to`
    /// (`Rotated: this session continues in #to`), when it holds one.
    pub fn rotation_note(&self, listing: &Listing, to: IssueNumber) -> Option<u64> {
        (listing.comments.iter())
            .filter(|c| forwarded_to(&c.body) == Some(to))
            .map(|c| c.id)
            .min()
    }

    /// The comments of issue `n` posted less than [`UNDER_WAY`] ago by the forge's clock (opaque
    /// bodies, every author): what tells a rotation or a tidy still carrying from a dead one.
    pub async fn comments_lately(&self, n: IssueNumber) -> Result<Listing, ForgeError> {
        let since = self.client.server_now() - UNDER_WAY;
        let mut lately = self.comments_since(n, since).await?;
        lately.comments.retain(|c| c.created_at >= since);
        Ok(lately)
    }

    /// Writes go to `issue` from now on (a successor whose rotation is under way: it is the
    /// head from its first byte, though this machine's cache may still name the old issue).
    pub fn adopt_successor(&self, issue: &Issue) {
        self.adopt(issue);
    }

    /// The successor of `old`: found, or created with the same title and label and a body that
    /// links `old`. Racing rotations converge on the lowest successor; a racer that created a
    /// higher one closes it as a duplicate and says so in `lost_race`.
    pub async fn successor(&self, old: &Issue) -> Result<Successor, ForgeError> {
        if let Some(issue) = self.find_successor(old.number).await? {
            return Ok(Successor {
                issue,
                created: false,
                lost_race: false,
            });
        }
        let created = self
            .create_session_issue(Some(old.number), Some(old.number))
            .await?;
        let canonical = self
            .find_successor(old.number)
            .await?
            .filter(|c| c.number <= created.number)
            .unwrap_or_else(|| created.clone());
        let lost_race = canonical.number != created.number;
        if !lost_race {
            // Until it closes the old issue: a rerun here after an interruption finishes it,
            // and so does this machine's next record (a run cut by its command's wait budget).
            self.remember(|s| {
                s.rotating.insert(created.number.0);
                s.left.insert(old.number.0);
            });
        }
        if lost_race {
            self.close_duplicate("rotation", created.number, &canonical)
                .await;
        }
        Ok(Successor {
            issue: canonical,
            created: !lost_race,
            lost_race,
        })
    }

    /// Every comment of issue `n` (opaque bodies), as a store listing.
    pub async fn issue_comments(&self, n: IssueNumber) -> Result<Listing, ForgeError> {
        let list = self.client.comments(&self.settings.repo, n, None);
        Ok(Self::into_listing(list.await?))
    }

    /// Every comment of the thread whose head is `n` (opaque bodies): its own and what the other
    /// members got since shortly before it was created, merged in comment-id order, as a store
    /// listing. A rotation carries from this, so a late post to an older member that no tidy
    /// carried yet is carried too, not left behind a link no reader follows.
    pub async fn thread_comments(&self, n: IssueNumber) -> Result<Listing, ForgeError> {
        let list = self
            .read_chain(&self.client, n, None, &store::Keep::all())
            .await?;
        Ok(Self::into_listing(list))
    }

    /// Posts `body` on issue `n` (not necessarily the session issue in use), never twice.
    pub async fn post_on(&self, n: IssueNumber, body: &str) -> Result<store::Comment, ForgeError> {
        self.post_at(&self.client, n, body, false).await
    }

    /// The last rotation step: a note on `old` linking `new` (unless an earlier run posted it),
    /// then `old` closed. Afterwards this thread writes to `new`.
    pub async fn close_rotated(&self, old: &Issue, new: &Issue) -> Result<(), ForgeError> {
        let repo = &self.settings.repo;
        let me = self.login().await?;
        // The note was posted after the successor was created, both by the server's clock: only
        // the comments since then are read, not the whole long thread again.
        let mine = async { Ok(Filter::only(me.clone())) };
        let recent = (self.client)
            .comments_keeping(repo, old.number, Some(new.created_at), mine)
            .await?;
        let noted = recent.comments.iter().any(|c| {
            c.user.as_ref().is_some_and(|u| u.login == me)
                && forwarded_to(&c.body) == Some(new.number)
        });
        if !noted {
            let note = format!(
                "{NOTE_PREFIX}{} ({}).\n\nThis issue reached its comment limit and was rotated by \
                 forgestate: the newest checkpoint and health of every recently active agent \
                 session were carried there. Readers follow the link back here for sessions that \
                 were not carried. Please do not reopen it.",
                new.number.0, new.html_url
            );
            self.post_on(old.number, &note).await?;
        }
        self.client.close_issue(repo, old.number).await?;
        tracing::info!(
            "closed session issue {} (rotated to {})",
            old.number,
            new.number
        );
        self.adopt(new);
        if self.rotating_here(new.number) || self.cached().left.contains(&old.number.0) {
            self.remember(|s| {
                s.rotating.remove(&new.number.0);
                s.left.remove(&old.number.0);
            });
        }
        Ok(())
    }

    /// The session issue to rotate, when automatic rotation is on and its comment count (as of
    /// the last time the issue itself was read, which costs no request of its own) is over
    /// `rotate_after`.
    pub fn rotation_due(&self) -> Option<IssueNumber> {
        let limit = self.settings.rotate_after;
        let seen = self.seen_count.lock().ok().and_then(|c| *c)?;
        (limit > 0 && seen.1 > limit).then_some(seen.0)
    }

    /// The head's comment count as last read (see `Thread::comment_count`).
    pub(super) fn seen_count(&self) -> Option<crate::store::CommentCount> {
        let (n, count, at) = self.seen_count.lock().ok().and_then(|c| *c)?;
        Some(crate::store::CommentCount {
            issue: n.0,
            count,
            at,
        })
    }

    /// Remembers how many comments `issue` had.
    pub(super) fn note_count(&self, issue: &Issue) {
        (self.count_reads).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut c) = self.seen_count.lock() {
            *c = Some((
                issue.number,
                u64::try_from(issue.comments).unwrap_or(0),
                issue.updated_at,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_successor_exactly() {
        // A note for #123 is not one for #12.
        let to = |body: &str| forwarded_to(body).map(|n| n.0);
        assert_eq!(to(&format!("{NOTE_PREFIX}123 (url)")), Some(123));
        assert_eq!(to(&format!("{NOTE_PREFIX}12 (url)")), Some(12));
        assert_eq!(to("a person's comment"), None);
    }
}
