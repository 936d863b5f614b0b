//! A head a person edited past recognition: retitled and re-described, or unlabelled and
//! re-described, so that only one of the session marks (title, label) is left and the session
//! body is not. It is still provably ours by what no edit of the issue touches: a trusted author
//! opened it, and a trusted author's records sit in its comments. Only asked when every other
//! look-up found nothing (so the usual look-up costs what it did), before a write would open a
//! second issue beside it.
//!
//! An issue that kept neither mark is not taken (it may be another thread's, configured with
//! another title and label), nor one another account opened, whoever wrote in it: when such an
//! issue holds records, a warning names it, since a new session issue will not hold them.
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

/// The most comment lists one look-up reads (one request each), in [`Kind`] order, the most
/// recently updated first (the session issue is the busy one).
const MAX_LOOKS: usize = 8;

/// What an open issue with comments may be, in the order they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A trusted author opened it and it kept the session title or label: the head, when a
    /// trusted author's record is in it.
    Ours,
    /// A trusted author opened it and it kept neither the title nor the label with the session
    /// description: warned of when a trusted author's record is in it.
    Unmarked,
    /// Another account opened it and it kept the session title or label: warned of when a
    /// record is in it.
    Theirs,
}

impl ForgeThread {
    /// Among the open issues `open` (every one in the repository), the lowest numbered
    /// [`Kind::Ours`] that holds a trusted author's record. When there is none, warns of each
    /// other issue that holds records, and of issues left unread past [`MAX_LOOKS`].
    pub(super) async fn proven_head(
        &self,
        c: &ForgeClient,
        open: &[Issue],
    ) -> Result<Option<Issue>, ForgeError> {
        let mut looks: Vec<(Kind, &Issue)> = open
            .iter()
            .filter(|i| i.state == IssueState::Open && i.pull_request.is_none() && i.comments > 0)
            .filter_map(|i| self.kind(i).map(|k| (k, i)))
            .collect();
        looks.sort_by_key(|(k, i)| (*k, Reverse(i.updated_at), i.number));
        let unread = looks.len().saturating_sub(MAX_LOOKS);
        let mut proven: Vec<&Issue> = Vec::new();
        let mut elsewhere: Vec<(u64, String)> = Vec::new();
        for (kind, issue) in looks.into_iter().take(MAX_LOOKS) {
            let Some((by_trusted, by_others)) = self.record_authors(c, issue).await? else {
                continue;
            };
            let n = issue.number.0;
            match kind {
                Kind::Ours if !by_trusted.is_empty() => proven.push(issue),
                Kind::Ours if !by_others.is_empty() => elsewhere.push((
                    n,
                    format!(
                        "it holds records, but only by {}, not a trusted author",
                        by_others.join(", ")
                    ),
                )),
                Kind::Unmarked if !by_trusted.is_empty() => elsewhere.push((
                    n,
                    format!(
                        "{} opened it and wrote records in it, but it has neither the session \
                         title nor the session description (another job's or thread's, or this \
                         one's edited: then restore its title)",
                        issue.user.login
                    ),
                )),
                Kind::Theirs if !(by_trusted.is_empty() && by_others.is_empty()) => {
                    let mut writers = by_trusted;
                    writers.extend(by_others);
                    elsewhere.push((
                        n,
                        format!(
                            "it holds records (by {}) but was opened by {}, who is not a \
                             trusted author (add {} to trusted_authors if it is the session \
                             issue)",
                            writers.join(", "),
                            issue.user.login,
                            issue.user.login
                        ),
                    ))
                }
                _ => {}
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
        for (n, why) in &elsewhere {
            tracing::warn!(
                "no session issue titled {:?} with label {:?} in {}, and issue #{n} is not taken \
                 for it: {why}; a new session issue does not hold its records, and readers do \
                 not read them",
                self.settings.title,
                self.settings.label,
                self.settings.repo,
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

    /// What `issue` may be, or `None`: not worth a request (another account's issue without
    /// the session marks, or a trusted author's that still has the session body: another
    /// thread's intact session issue).
    ///
    /// The label alone is no mark of ours: it is a generic one (`Type/Automation`) that other
    /// jobs of the same bot put on their issues, so it counts only with the session description
    /// still somewhere in the body (a person added to it). The title is this thread's own.
    fn kind(&self, issue: &Issue) -> Option<Kind> {
        let titled = issue.title == self.settings.title;
        let labelled = issue.has_label(&self.settings.label);
        let ours = titled || (labelled && self.keeps_session_body(issue));
        match (self.trusted_creator(issue), ours) {
            (true, true) => Some(Kind::Ours),
            (true, false) if !self.session_body(issue) => Some(Kind::Unmarked),
            (false, _) if titled || labelled => Some(Kind::Theirs),
            _ => None,
        }
    }

    /// Whether the session description is still somewhere in `issue`'s body (a person wrote
    /// around it).
    fn keeps_session_body(&self, issue: &Issue) -> bool {
        let ours = self.settings.issue_body.replace("\r\n", "\n");
        let ours = ours.trim();
        !ours.is_empty() && issue.body.replace("\r\n", "\n").contains(ours)
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
