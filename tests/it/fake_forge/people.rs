//! What time and people do to the fake's state between requests: every stored time moved into
//! the past (so "an hour later" runs at once), an issue reopened, closed or retitled by hand.

use super::FakeForge;

impl FakeForge {
    /// Moves every stored time `secs` into the past (issues' created, updated and closed times,
    /// comments' created and updated times), so "an hour later" runs at once: the server's clock
    /// stays the real one, and what it stored looks that much older.
    pub fn age(&self, secs: i64) {
        let mut s = self.state();
        for i in &mut s.issues {
            i.created -= secs;
            i.updated -= secs;
            i.closed_at = i.closed_at.map(|t| t - secs);
        }
        for c in &mut s.comments {
            c.created -= secs;
            c.updated -= secs;
        }
    }

    /// Reopens (or closes) issue `n` as a person would in the web UI.
    pub fn set_closed(&self, n: u64, closed: bool) {
        let mut s = self.state();
        let now = s.now();
        if let Some(row) = s.issue_mut(n) {
            row.closed = closed;
            row.closed_at = closed.then_some(now);
            row.updated = now;
        }
    }

    /// Retitles issue `n` as a person would in the web UI.
    pub fn retitle(&self, n: u64, title: &str) {
        let mut s = self.state();
        let now = s.now();
        if let Some(row) = s.issue_mut(n) {
            row.title = title.into();
            row.updated = now;
        }
    }
}

impl FakeForge {
    /// Edits comment `id` to `body` as the person holding `token` would in the web UI: through
    /// the API's `PATCH /repos/{o}/{r}/issues/comments/{id}` (the web UI's edit is the same
    /// write), so the server's rules apply (a writer may edit anyone's comment, the bot's too;
    /// `updated_at` moves, `created_at` and the poster stay). Answers the HTTP status.
    pub async fn edit_comment_as(&self, token: &str, id: u64, body: &str) -> u16 {
        let url = format!(
            "{}/api/v1/repos/{}/{}/issues/comments/{id}",
            self.uri(),
            super::OWNER,
            super::REPO
        );
        reqwest::Client::new()
            .patch(url)
            .header("Authorization", format!("token {token}"))
            .json(&serde_json::json!({ "body": body }))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    }

    /// Replaces issue `n`'s body as a person would in the web UI.
    pub fn edit_issue_body(&self, n: u64, body: &str) {
        let mut s = self.state();
        let now = s.now();
        if let Some(row) = s.issue_mut(n) {
            row.body = body.into();
            row.updated = now;
        }
    }

    /// Issue `n`'s body as stored.
    pub fn issue_body(&self, n: u64) -> String {
        let mut s = self.state();
        s.issue_mut(n).map(|r| r.body.clone()).unwrap_or_default()
    }
}
