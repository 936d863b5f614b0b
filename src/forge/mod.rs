//! The Forgejo/Gitea backend: a [`Thread`] over the comments of the session issue.
//!
//! Like every store it knows nothing of the record format: it posts and lists opaque bodies. What
//! it adds is the session issue itself: finding it (`session.rs`), creating it (`init`), and
//! remembering it (`cache.rs`). The HTTP layer is `http.rs` (one request path) with typed calls in
//! `api.rs` and wire types in `models.rs`.

mod api;
mod cache;
mod error;
mod http;
mod models;
pub mod page;
mod session;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};

pub use api::RepoRef;
pub use cache::{CacheEntry, DiskCache};
pub use error::{Call, ForgeError};
pub use http::{ForgeClient, ForgeClientBuilder};
pub use models::{
    ApiError, ApiSettings, Comment, CommentId, Issue, IssueNumber, IssueState, Label, LabelId,
    RepositoryMeta, ServerVersion, User,
};

use crate::store::{self, BackendFailure, Listing, StoreError, Thread};

/// Everything the backend needs besides the HTTP client.
#[derive(Debug, Clone)]
pub struct ForgeSettings {
    pub repo: RepoRef,
    /// The exact title of the session issue.
    pub title: String,
    /// The label the session issue carries.
    pub label: String,
    pub label_color: String,
    pub label_description: String,
    /// The body of a newly created session issue (rendered by the caller).
    pub issue_body: String,
    /// Whether posting may create the session issue when there is none.
    pub auto_init: bool,
    /// Where to cache the issue number and login; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// How long a cached issue is trusted before a write checks it is still open.
    pub recheck_after: Duration,
}

/// A thread on a forge: the comments of the session issue.
#[derive(Debug)]
pub struct ForgeThread {
    client: ForgeClient,
    settings: ForgeSettings,
    cache: DiskCache,
    state: Mutex<CacheEntry>,
    /// Whether the server's version was already logged by this process.
    version_logged: std::sync::atomic::AtomicBool,
}

impl ForgeThread {
    pub fn new(client: ForgeClient, settings: ForgeSettings) -> ForgeThread {
        let cache = DiskCache::new(
            settings.cache_dir.as_deref(),
            client.base().as_str(),
            &settings.repo.owner,
            &settings.repo.repo,
        );
        let state = Mutex::new(cache.load());
        ForgeThread {
            client,
            settings,
            cache,
            state,
            version_logged: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn client(&self) -> &ForgeClient {
        &self.client
    }

    pub fn settings(&self) -> &ForgeSettings {
        &self.settings
    }

    fn cached(&self) -> CacheEntry {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn remember(&self, update: impl FnOnce(&mut CacheEntry)) {
        if let Ok(mut state) = self.state.lock() {
            update(&mut state);
            self.cache.store(&state);
        }
    }

    fn forget_issue(&self) {
        self.remember(|s| {
            s.issue = None;
            s.issue_url = None;
            s.checked_at = None;
        });
    }

    fn to_comment(c: Comment) -> store::Comment {
        store::Comment {
            id: c.id.0,
            author: c.user.map(|u| u.login).unwrap_or_default(),
            created_at: c.created_at,
            updated_at: c.updated_at,
            url: Some(c.html_url),
            body: c.body,
        }
    }

    async fn post(&self, body: &str) -> Result<store::Comment, ForgeError> {
        let n = self.issue_for(true).await?;
        match self
            .client
            .create_comment(&self.settings.repo, n, body)
            .await
        {
            Err(ForgeError::NotFound { .. }) => {
                // The cached issue is gone (deleted, or the repo moved): find it again, once.
                tracing::info!("session issue {n} not found; discovering it again");
                self.forget_issue();
                let n = self.issue_for(true).await?;
                Ok(Self::to_comment(
                    self.client
                        .create_comment(&self.settings.repo, n, body)
                        .await?,
                ))
            }
            other => Ok(Self::to_comment(other?)),
        }
    }

    async fn read(&self, since: Option<DateTime<Utc>>) -> Result<Listing, ForgeError> {
        let n = self.issue_for(false).await?;
        let comments = match self.client.comments(&self.settings.repo, n, since).await {
            Err(ForgeError::NotFound { .. }) => {
                self.forget_issue();
                let n = self.issue_for(false).await?;
                self.client.comments(&self.settings.repo, n, since).await?
            }
            other => other?,
        };
        // `since` is inclusive, so incremental readers see a comment twice; dedupe by id here.
        let mut seen = std::collections::HashSet::new();
        let comments = comments
            .into_iter()
            .filter(|c| seen.insert(c.id))
            .map(Self::to_comment)
            .collect();
        Ok(Listing {
            comments,
            warnings: Vec::new(),
        })
    }

    async fn login(&self) -> Result<String, ForgeError> {
        if let Some(login) = self.cached().login {
            return Ok(login);
        }
        let user = self.client.current_user().await?;
        self.remember(|s| s.login = Some(user.login.clone()));
        Ok(user.login)
    }
}

impl From<ForgeError> for StoreError {
    fn from(e: ForgeError) -> Self {
        let kind = match e.status() {
            _ if e.is_setup_problem() => BackendFailure::Setup,
            Some(422) => BackendFailure::Rejected,
            _ => BackendFailure::Unavailable,
        };
        StoreError::Backend {
            kind,
            source: Box::new(e),
        }
    }
}

impl Thread for ForgeThread {
    fn describe(&self) -> String {
        let cached = self.cached();
        match cached.issue_url {
            Some(url) => url,
            None => format!("{} on {}", self.settings.repo, self.client.base()),
        }
    }

    async fn append(&self, body: &str) -> Result<store::Comment, StoreError> {
        Ok(self.post(body).await?)
    }

    async fn list(&self, since: Option<DateTime<Utc>>) -> Result<Listing, StoreError> {
        Ok(self.read(since).await?)
    }

    async fn whoami(&self) -> Result<String, StoreError> {
        Ok(self.login().await?)
    }

    async fn init(&self) -> Result<String, StoreError> {
        let issue = self.init_issue().await?;
        Ok(issue.html_url)
    }
}
