//! Electing the head among the open session issues: the head only moves forward.
//!
//! An open issue is **continued** when a newer member's link (`Previous session issue: #N` in
//! the body of an issue a trusted author opened) reaches it: directly from an open issue (a
//! rotation that did not finish, or the old issue reopened one link behind), or through closed
//! members (an old issue a person reopened, at any depth). A continued issue is never the head,
//! and the head is never closed as a duplicate of one. Of the issues nothing continues, the one
//! continuing the newest issue wins, the first created among equals: that is the creation-race
//! rule, and it only ever compares issues that continue the same issue (racing rotations) or
//! nothing (racing `init`s).
//!
//! With one open issue there is nothing to elect and nothing is asked. Walking through closed
//! members costs one `GET` per member, once per process, and only while an old issue is open.

use std::collections::{BTreeMap, BTreeSet};

use super::super::ForgeThread;
use super::super::error::{ForgeError, found};
use super::super::http::ForgeClient;
use super::super::lineage::linked;
use super::super::models::{Issue, IssueNumber};

/// The open session issues, sorted out by the links.
#[derive(Debug, Default)]
pub(in crate::forge) struct Election {
    /// Where writes go: the newest issue nothing continues.
    pub head: Option<Issue>,
    /// Open issues a newer member continues, lowest first, each with whether an open issue
    /// links it directly (a rotation to finish) rather than through closed members.
    pub continued: Vec<(Issue, bool)>,
    /// Open issues nothing continues that lost the creation race to the head.
    pub duplicates: Vec<Issue>,
}

impl ForgeThread {
    /// Elects the head among `found` (open session issues a trusted author opened).
    pub(in crate::forge) async fn elect(
        &self,
        c: &ForgeClient,
        mut found: Vec<Issue>,
    ) -> Result<Election, ForgeError> {
        found.sort_by_key(|i| i.number);
        found.dedup_by_key(|i| i.number);
        for i in &found {
            self.note_verdict(i.number.0, true);
        }
        let Some(lowest) = found.first().map(|i| i.number) else {
            return Ok(Election::default());
        };
        let open: BTreeSet<IssueNumber> = found.iter().map(|i| i.number).collect();
        // Issue number: continued directly by an open issue.
        let mut continued: BTreeMap<IssueNumber, bool> = BTreeMap::new();
        let mut walked = BTreeSet::new();
        for issue in found.iter().rev().filter(|_| found.len() > 1) {
            let mut at = predecessor(issue);
            let mut direct = true;
            while let Some(p) = at.filter(|p| *p >= lowest) {
                if open.contains(&p) {
                    *continued.entry(p).or_insert(false) |= direct;
                    break;
                }
                if !walked.insert(p) {
                    break; // walked from a newer issue already
                }
                at = self.link_of(c, p).await?;
                direct = false;
            }
        }
        let (continued_issues, mut heads): (Vec<Issue>, Vec<Issue>) = found
            .into_iter()
            .partition(|i| continued.contains_key(&i.number));
        heads.sort_by_key(|i| (std::cmp::Reverse(predecessor(i)), i.number));
        let mut heads = heads.into_iter();
        let head = heads.next();
        Ok(Election {
            head,
            continued: continued_issues
                .into_iter()
                .map(|i| {
                    let direct = continued.get(&i.number).copied().unwrap_or(false);
                    (i, direct)
                })
                .collect(),
            duplicates: heads.collect(),
        })
    }

    /// The issue a closed issue `n` links back to, when `n` is a member of the thread (a
    /// trusted author opened it): one `GET`, remembered for the process.
    async fn link_of(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
    ) -> Result<Option<IssueNumber>, ForgeError> {
        if let Some(known) = self
            .chain
            .lock()
            .ok()
            .and_then(|s| s.links.get(&n.0).copied())
        {
            return Ok(known.map(IssueNumber));
        }
        self.login_with(c).await?;
        let link = found(c.issue(&self.settings.repo, n).await)?.and_then(|issue| {
            let member = self.is_member_issue(&issue);
            self.note_verdict(n.0, member);
            member.then(|| predecessor(&issue)).flatten()
        });
        if let Ok(mut s) = self.chain.lock() {
            s.links.insert(n.0, link.map(|l| l.0));
        }
        Ok(link)
    }
}

/// The issue `issue`'s body links as the one it continues (links lead to lower numbers only).
fn predecessor(issue: &Issue) -> Option<IssueNumber> {
    linked(&issue.body).filter(|p| *p < issue.number)
}
