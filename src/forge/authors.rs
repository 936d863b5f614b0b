//! Who may extend the session thread: an issue is a member, a head or a successor only when a
//! trusted author opened it (the token's own login, or one of the configured trusted authors),
//! and a link (`Previous session issue: #N` in a body, `Rotated: … continues in #M` in a
//! comment) counts only when a trusted author wrote it. Anyone who can read a repository can
//! open an issue with the session title and label: such a look-alike is named in a warning,
//! which reaches the next answer, and never becomes the thread.

use super::ForgeThread;
use super::error::ForgeError;
use super::http::ForgeClient;
use super::models::Issue;

impl ForgeThread {
    /// The token's own login, asked through `c` (a caller's budget: a drain's, a probe's) once
    /// per process (once for requests started together), so that
    /// [`ForgeThread::trusted_creator`] can tell the token's own issues.
    pub(super) async fn login_with(&self, c: &ForgeClient) -> Result<String, ForgeError> {
        if let Some(login) = self.known_login() {
            return Ok(login);
        }
        let _asking = self.asking_login.lock().await;
        if let Some(login) = self.known_login() {
            return Ok(login);
        }
        let user = c.current_user().await?;
        if let Ok(mut l) = self.login.lock() {
            *l = Some(user.login.clone());
        }
        Ok(user.login)
    }

    /// The token's login, when this process knows it.
    pub(super) fn known_login(&self) -> Option<String> {
        self.login.lock().ok().and_then(|l| l.clone())
    }

    /// Whether `login` is a trusted author: the token's own (when known), or a configured one.
    pub(super) fn trusted_login(&self, login: &str) -> bool {
        self.known_login().as_deref() == Some(login)
            || self.settings.trusted_authors.iter().any(|a| a == login)
    }

    /// Whether a trusted author opened `issue`.
    pub(super) fn trusted_creator(&self, issue: &Issue) -> bool {
        self.trusted_login(&issue.user.login)
    }

    /// Warns, once per issue and process, of an issue that looks like the session issue (its
    /// title and label) but that no trusted author opened: it is ignored.
    pub(super) fn look_alike(&self, issue: &Issue) {
        let Ok(mut notices) = self.notices.lock() else {
            return;
        };
        if !notices.0.insert(issue.number.0) {
            return;
        }
        let said = format!(
            "issue {} has the session title and label but was opened by {}, who is not a \
             trusted author; it is not part of the session thread and nothing is read from or \
             written to it (close it, or add {} to trusted_authors if it should be): {}",
            issue.number, issue.user.login, issue.user.login, issue.html_url
        );
        tracing::debug!("{said}");
        notices.1.push(said);
    }

    /// The warnings noticed since the last call, for the next answer.
    pub(super) fn take_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut n| std::mem::take(&mut n.1))
            .unwrap_or_default()
    }

    /// Every look-alike noticed by this process so far, by number (for `doctor`).
    pub fn look_alikes(&self) -> Vec<u64> {
        self.notices
            .lock()
            .map(|n| n.0.iter().copied().collect())
            .unwrap_or_default()
    }
}

/// The look-alikes warned of (by number), and the warnings not yet handed to an answer.
pub(super) type Notices = std::sync::Mutex<(std::collections::BTreeSet<u64>, Vec<String>)>;
