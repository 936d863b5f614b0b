//! A head a person edited past recognition: retitled and re-described, or unlabelled and
//! re-described, so that neither the session marks nor the session body are left. It is still
//! provably ours by what no edit of the issue touches: a trusted author opened it, and a
//! trusted author's records sit in its comments. Only asked when every other look-up found
//! nothing (so the usual look-up costs what it did), before a write would open a second issue
//! beside it.
//!
//! Whether a comment is a record is the caller's to say ([`ForgeSettings::is_record`]): this
//! module knows no record format.
//!
//! [`ForgeSettings::is_record`]: super::ForgeSettings::is_record

use std::cmp::Reverse;

use super::ForgeThread;
use super::error::{ForgeError, found};
use super::http::ForgeClient;
use super::models::{Issue, IssueState};

/// The most comment lists one look-up reads (one request each): the open issues with comments
/// that a trusted author opened, most recently updated first (the session issue is the busy
/// one), then those another account opened that kept the session title or label.
const MAX_LOOKS: usize = 8;

/// An open issue that holds records but is not taken for the session issue, and why.
struct Elsewhere {
    number: u64,
    why: String,
}

impl ForgeThread {
    /// Among the open issues `open` (every one in the repository), the lowest numbered that a
    /// trusted author opened and whose comments hold a trusted author's record. When there is
    /// none, warns of each open issue that holds records but is not taken (another account
    /// opened it, or no trusted author wrote them), and of issues left unread past
    /// [`MAX_LOOKS`]: a write then opens a new session issue without their records.
    pub(super) async fn proven_head(
        &self,
        c: &ForgeClient,
        open: &[Issue],
    ) -> Result<Option<Issue>, ForgeError> {
        let mut mine: Vec<&Issue> = Vec::new();
        let mut others: Vec<&Issue> = Vec::new();
        for issue in open {
            if issue.state != IssueState::Open
                || issue.pull_request.is_some()
                || issue.comments <= 0
            {
                continue;
            }
            if self.trusted_creator(issue) {
                mine.push(issue);
            } else if issue.title == self.settings.title || issue.has_label(&self.settings.label) {
                others.push(issue);
            }
        }
        mine.sort_by_key(|i| (Reverse(i.updated_at), i.number));
        others.sort_by_key(|i| (Reverse(i.updated_at), i.number));
        let unread = (mine.len() + others.len()).saturating_sub(MAX_LOOKS);
        let mut proven: Vec<&Issue> = Vec::new();
        let mut elsewhere: Vec<Elsewhere> = Vec::new();
        let looks = mine.iter().map(|i| (*i, true));
        let looks = looks.chain(others.iter().map(|i| (*i, false)));
        for (issue, trusted) in looks.take(MAX_LOOKS) {
            let Some((by_trusted, by_others)) = self.record_authors(c, issue).await? else {
                continue;
            };
            let marked =
                issue.title == self.settings.title || issue.has_label(&self.settings.label);
            if trusted && !by_trusted.is_empty() {
                proven.push(issue);
            } else if !trusted && (!by_trusted.is_empty() || !by_others.is_empty()) {
                let mut writers = by_trusted;
                writers.extend(by_others);
                elsewhere.push(Elsewhere {
                    number: issue.number.0,
                    why: format!(
                        "it holds records (by {}) but was opened by {}, who is not a trusted \
                         author (add {} to trusted_authors if it is the session issue)",
                        writers.join(", "),
                        issue.user.login,
                        issue.user.login
                    ),
                });
            } else if trusted && marked && !by_others.is_empty() {
                elsewhere.push(Elsewhere {
                    number: issue.number.0,
                    why: format!(
                        "it holds records, but only by {}, who {} not a trusted author",
                        by_others.join(", "),
                        if by_others.len() == 1 { "is" } else { "are" }
                    ),
                });
            }
        }
        proven.sort_by_key(|i| i.number);
        if let Some(head) = proven.first() {
            tracing::info!(
                "issue {} is the session issue a person edited: a trusted author opened it and \
                 wrote records in it",
                head.number
            );
            return Ok(Some((*head).clone()));
        }
        for e in &elsewhere {
            tracing::warn!(
                "no session issue titled {:?} with label {:?} in {}, and issue #{} is not taken \
                 for it: {}; a new session issue does not hold its records, and readers do not \
                 read them",
                self.settings.title,
                self.settings.label,
                self.settings.repo,
                e.number,
                e.why
            );
        }
        if unread > 0 {
            tracing::warn!(
                "no session issue titled {:?} with label {:?} in {}; {unread} more open issues \
                 with comments were not searched for its records (the {MAX_LOOKS} most recently \
                 updated were): if one of them is the session issue a person edited, restore its \
                 title and label",
                self.settings.title,
                self.settings.label,
                self.settings.repo
            );
        }
        Ok(None)
    }

    /// Who wrote the records in `issue`'s comments: trusted authors, then others (each login
    /// once), or `None` when the issue is gone.
    async fn record_authors(
        &self,
        c: &ForgeClient,
        issue: &Issue,
    ) -> Result<Option<(Vec<String>, Vec<String>)>, ForgeError> {
        let repo = &self.settings.repo;
        let Some(list) = found(c.comments(repo, issue.number, None).await)? else {
            return Ok(None);
        };
        let (mut trusted, mut others) = (Vec::new(), Vec::new());
        for comment in &list.comments {
            let Some(user) = &comment.user else { continue };
            if !(self.settings.is_record)(&comment.body) {
                continue;
            }
            let into = match self.trusted_login(&user.login) {
                true => &mut trusted,
                false => &mut others,
            };
            if !into.contains(&user.login) {
                into.push(user.login.clone());
            }
        }
        Ok(Some((trusted, others)))
    }
}
