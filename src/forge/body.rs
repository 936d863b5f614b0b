//! Editing a session issue's body (the status table lives there): read it fresh, let the
//! caller change it, write it only when it changed. Format-free: the edit is the caller's
//! function over an opaque body.
//!
//! The body is read again right before each write, so a person's edit made before that read is
//! kept (the caller changes only its own part). Forgejo has no conditional write (`If-Match`)
//! for issues, so an edit landing between this read and the write is overwritten; the window is
//! one round trip, and the next publish rewrites only the caller's part again.

use super::ForgeThread;
use super::error::ForgeError;
use super::models::IssueNumber;

/// What an edit of an issue's body did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyEdit {
    /// The issue.
    pub issue: IssueNumber,
    /// Its web page.
    pub url: String,
    /// The body was written (false: the edit changed nothing, nothing was sent).
    pub written: bool,
    /// The body before the edit, as read.
    pub before: String,
}

impl ForgeThread {
    /// The head session issue's number, asked fresh from the forge (`None`: there is none yet).
    pub async fn head_issue(&self) -> Result<Option<IssueNumber>, ForgeError> {
        Ok(self.current_issue().await?.map(|i| i.number))
    }

    /// Reads issue `n`'s body as the forge holds it now and writes `edit`'s answer, when it
    /// answers one (`None`: unchanged, nothing is written).
    pub async fn edit_body(
        &self,
        n: IssueNumber,
        edit: impl Fn(&str) -> Option<String>,
    ) -> Result<BodyEdit, ForgeError> {
        let repo = &self.settings.repo;
        let issue = self.client.issue(repo, n).await?;
        let written = match edit(&issue.body) {
            Some(body) if body != issue.body => {
                self.client.edit_issue_body(repo, n, &body).await?;
                true
            }
            _ => false,
        };
        Ok(BodyEdit {
            issue: n,
            url: issue.html_url,
            written,
            before: issue.body,
        })
    }
}
