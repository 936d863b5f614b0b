//! The Forgejo/Gitea backend: a [`Thread`] over the comments of the session issue.
//!
//! Like every store it knows nothing of the record format: it posts and lists opaque bodies. What
//! it adds is the session issue itself: finding it (`session.rs`), creating it (`create.rs`),
//! remembering it (`cache.rs`), the chain of closed issues it continues (`lineage.rs`) and
//! rotating it (`rotate.rs`). The HTTP layer is `http.rs` (one request path) with typed calls in
//! `api.rs` and wire types in `models.rs`.
//!
//! Only the thread, its settings, its errors and the wire models are public. The transport,
//! retries, paging and cache are the crate's own, so no `reqwest` type reaches the public API;
//! build a forge client with [`crate::Client::forge`]. These do not compile:
//!
//! ```compile_fail
//! use forgestate::forge::ForgeClient;
//! ```
//! ```compile_fail
//! use forgestate::forge::retry::RetryPolicy;
//! ```
//! ```compile_fail
//! use forgestate::forge::page::link;
//! ```
//! ```compile_fail
//! use forgestate::forge::{CacheEntry, DiskCache, store_key};
//! ```

mod api;
mod authors;
mod body;
pub(crate) mod cache;
mod chain;
mod clock;
mod count;
mod create;
mod decode;
mod error;
mod handoff;
mod http;
mod instance;
mod lineage;
mod models;
pub(crate) mod page;
mod post;
mod probe;
mod proven;
pub(crate) mod retry;
mod rotate;
mod session;
pub(crate) mod wait;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};

pub use crate::store::issue_in_url;
pub use api::RepoRef;
pub(crate) use api::name_problem;
pub use body::BodyEdit;
pub(crate) use cache::{CacheEntry, DiskCache, store_key};
pub(crate) use chain::MARGIN;
pub use chain::Stray;
pub use error::{Call, ForgeError};
pub(crate) use http::{ForgeClient, ForgeClientBuilder};
pub use models::{
    ApiError, ApiSettings, Comment, CommentId, CommentList, Issue, IssueNumber, IssueState, Label,
    LabelId, Permission, Repository, RepositoryMeta, ServerVersion, UnreadableComment, User,
};
pub(crate) use probe::Probe;
pub use rotate::{STALLED, Successor, UNDER_WAY};

use crate::store::{
    self, BackendFailure, Deleted, Effort, Init, Keep, Listing, Predecessor, StoreError, Thread,
};

/// Decodes a comment list answer held in `bytes` as a cold read decodes one arriving (every
/// author kept, read in pieces as the HTTP body is): the readable comments and the unreadable
/// elements. For the benchmarks (`benches/throughput.rs`), not an API.
#[doc(hidden)]
pub fn decode_comment_list(bytes: &[u8]) -> Result<(usize, usize), String> {
    match decode::decode_list(bytes, &decode::Filter::all()) {
        Ok(list) => Ok((list.comments.len(), list.unreadable.len())),
        Err(decode::Failed::Json(e)) => Err(e.to_string()),
        Err(decode::Failed::OverCap) => Err("over the cap".into()),
    }
}

/// Everything the backend needs besides the HTTP client.
#[derive(Debug, Clone)]
pub struct ForgeSettings {
    /// The repository holding the session issue.
    pub repo: RepoRef,
    /// The exact title of the session issue.
    pub title: String,
    /// The label the session issue carries.
    pub label: String,
    /// The label's colour, when forgestate creates it.
    pub label_color: String,
    /// The label's description, when forgestate creates it.
    pub label_description: String,
    /// The body of a newly created session issue (rendered by the caller).
    pub issue_body: String,
    /// Whether posting may create the session issue when there is none.
    pub auto_init: bool,
    /// Where to cache the issue number and login; `None` disables the cache, and so does a
    /// directory another account owns or may write (checked by `cache::usable_dir`).
    pub cache_dir: Option<PathBuf>,
    /// How long a cached issue is trusted before a write checks it is still open.
    pub recheck_after: Duration,
    /// The per-attempt timeout of quick (single-try) requests.
    pub quick_timeout: Duration,
    /// Rotate the session issue once it holds more comments than this; 0 never rotates.
    pub rotate_after: u64,
    /// A rotation carries the sessions active within this many days.
    pub carry_days: u64,
    /// Besides the token's own login, who may open the session thread's issues and write its
    /// links (the configured `trusted_authors`).
    pub trusted_authors: Vec<String>,
    /// Whether a comment body is one of this tool's records (the caller's format says; the
    /// backend knows none): what proves an issue a person edited past recognition is still
    /// the session issue (`proven.rs`).
    pub is_record: fn(&str) -> bool,
}

/// A thread on a forge: the comments of the session issue.
#[derive(Debug)]
pub struct ForgeThread {
    client: ForgeClient,
    settings: ForgeSettings,
    cache: DiskCache,
    state: Mutex<CacheEntry>,
    /// The state holds discoveries not written yet ([`ForgeThread::remember`]).
    unwritten: std::sync::atomic::AtomicBool,
    /// The token's login, once known (in memory only).
    login: Mutex<Option<String>>,
    /// Held while the login is asked, so that reads started together ask it once.
    asking_login: tokio::sync::Mutex<()>,
    /// Whether the server's version was already logged by this process.
    version_logged: std::sync::atomic::AtomicBool,
    /// The instance's page size (`max_response_items`), once known.
    page_size: std::sync::OnceLock<u32>,
    /// The closed session issues the current one continues, as far as reads walked them.
    lineage: lineage::LineageCell,
    /// Membership verdicts and the strays to tidy.
    chain: chain::ChainCell,
    /// The session issue's comment count when it was last read (for automatic rotation).
    seen_count: rotate::CountCell,
    /// How many times this process read that count (`count.rs`).
    count_reads: std::sync::atomic::AtomicU64,
    /// What the last read kept (see [`Keep`]); reads of earlier issues keep the same.
    keep: Mutex<Keep>,
    /// Look-alike session issues warned of, and warnings for the next answer.
    notices: authors::Notices,
}

impl ForgeThread {
    pub(crate) fn new(client: ForgeClient, settings: ForgeSettings) -> ForgeThread {
        let usable = settings.cache_dir.as_deref().and_then(cache::usable_dir);
        let cache = DiskCache::new(
            usable.as_deref(),
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
            unwritten: std::sync::atomic::AtomicBool::new(false),
            login: Mutex::new(None),
            asking_login: tokio::sync::Mutex::new(()),
            version_logged: std::sync::atomic::AtomicBool::new(false),
            page_size: std::sync::OnceLock::new(),
            lineage: Default::default(),
            chain: Default::default(),
            seen_count: Default::default(),
            count_reads: Default::default(),
            keep: Mutex::new(Keep::all()),
            notices: Default::default(),
        }
    }

    /// The settings this thread was built with.
    pub fn settings(&self) -> &ForgeSettings {
        &self.settings
    }

    /// The file-name-safe key of this forge/owner/repo (for the cache and the outbox).
    pub fn store_key(&self) -> String {
        store_key(
            self.client.base().as_str(),
            &self.settings.repo.owner,
            &self.settings.repo.repo,
        )
    }

    fn cached(&self) -> CacheEntry {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Updates the cache. This machine's own rotation work ([`CacheEntry::work`]) is written
    /// at once, durably. What a read discovers (the issue, the instance's version and page size,
    /// members) waits for [`ForgeThread::write_discoveries`] at the end of the operation: a cold
    /// read makes several discoveries before its list, and one write each (a rename over the
    /// file, which ext4 flushes) held that list back. A lost discovery only costs a request to
    /// make it again.
    fn remember(&self, update: impl FnOnce(&mut CacheEntry)) {
        use std::sync::atomic::Ordering;
        if let Ok(mut state) = self.state.lock() {
            let before = state.clone();
            update(&mut state);
            if *state == before {
                return;
            }
            if state.work() != before.work() {
                self.unwritten.store(false, Ordering::Relaxed);
                self.cache.store(&state, true);
            } else {
                self.unwritten.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Writes the discoveries [`ForgeThread::remember`] holds, if any: at the end of each of the
    /// store's operations, whether it succeeded or not, and when the thread is dropped.
    fn write_discoveries(&self) {
        use std::sync::atomic::Ordering;
        if let Ok(state) = self.state.lock()
            && self.unwritten.swap(false, Ordering::Relaxed)
        {
            self.cache.store(&state, false);
        }
    }

    /// `result` as the store's, at the end of one of its operations: the discoveries are
    /// written first, whatever the result.
    fn done<T>(&self, result: Result<T, ForgeError>) -> Result<T, StoreError> {
        self.write_discoveries();
        Ok(result?)
    }

    fn forget_issue(&self) {
        self.remember(|s| {
            s.issue = None;
            s.issue_url = None;
            s.checked_at = None;
        });
    }

    pub(crate) fn to_comment(c: Comment) -> store::Comment {
        store::Comment {
            id: c.id.0,
            author: c.user.map(|u| u.login).unwrap_or_default(),
            created_at: c.created_at,
            updated_at: c.updated_at,
            url: Some(c.html_url),
            body: c.body,
        }
    }

    /// The token's own login, asked once per process ([`ForgeThread::login_with`]).
    pub(crate) async fn login(&self) -> Result<String, ForgeError> {
        self.login_with(&self.client).await
    }
}

/// Whether `e` is a read's finding that the forge holds no session issue yet, open or closed:
/// the thread is empty, so no session in it was taken over (a `check_owner` save may post,
/// and its post creates the issue when `auto_init` allows).
pub(crate) fn no_session_issue(e: &crate::Error) -> bool {
    match e {
        crate::Error::Store(StoreError::Backend { source, .. }) => matches!(
            source.downcast_ref::<ForgeError>(),
            Some(ForgeError::NoSessionIssue(_))
        ),
        _ => false,
    }
}

impl From<ForgeError> for StoreError {
    fn from(e: ForgeError) -> Self {
        let kind = match e.status() {
            _ if e.is_setup_problem() => BackendFailure::Setup,
            // 400 and 422: the forge refused this body; 413: a proxy refused its size.
            Some(400 | 413 | 422) => BackendFailure::Rejected,
            _ => BackendFailure::Unavailable,
        };
        StoreError::Backend {
            kind,
            source: Box::new(e),
        }
    }
}

impl Drop for ForgeThread {
    /// Discoveries made outside the store's operations (a library caller's own use) are not
    /// lost with the thread.
    fn drop(&mut self) {
        self.write_discoveries();
    }
}

impl crate::store::sealed::Sealed for ForgeThread {}

impl Thread for ForgeThread {
    fn begin_command(&self) {
        self.client.wait().restart();
    }

    fn without_answer(&self, why: Option<&'static str>) {
        match why {
            None => self.client.wait().fallback(),
            Some(why) => self.client.wait().patient(why),
        }
    }

    fn describe(&self) -> String {
        let cached = self.cached();
        match cached.issue_url {
            Some(url) => url,
            None => format!("{} on {}", self.settings.repo, self.client.base()),
        }
    }

    async fn append_with(&self, body: &str, effort: Effort) -> Result<store::Comment, StoreError> {
        self.done(self.post(body, effort).await)
    }

    async fn list_with(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
    ) -> Result<Listing, StoreError> {
        self.done(self.read(since, effort, &Keep::all()).await)
    }

    async fn list_keeping(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
        keep: &Keep,
    ) -> Result<Listing, StoreError> {
        self.done(self.read(since, effort, keep).await)
    }

    async fn whoami(&self) -> Result<String, StoreError> {
        self.done(self.login().await)
    }

    fn now(&self) -> DateTime<Utc> {
        self.client.server_now()
    }

    fn comment_count(&self) -> Option<store::CommentCount> {
        self.seen_count()
    }

    fn generation(&self) -> Option<String> {
        self.forge_generation()
    }

    async fn delete(&self, ids: &[u64]) -> Result<Deleted, StoreError> {
        let mut done = Deleted::default();
        for &id in ids {
            match self
                .client
                .delete_comment(&self.settings.repo, CommentId(id))
                .await
            {
                Ok(true) => done.deleted.push(id),
                Ok(false) => done.missing.push(id),
                Err(e) => {
                    tracing::info!(
                        "deleted {} comment(s) before this failure: {:?}",
                        done.deleted.len(),
                        done.deleted
                    );
                    return Err(e.into());
                }
            }
        }
        Ok(done)
    }

    async fn predecessor(&self, hops: usize) -> Result<Option<Predecessor>, StoreError> {
        self.done(self.predecessor_at(hops).await)
    }

    async fn prepare_write(&self) -> Result<(), StoreError> {
        self.done(self.issue_for(&self.client, true).await.map(drop))
    }

    async fn init(&self) -> Result<Init, StoreError> {
        // Check the token first: without `read:user` no record could ever be trusted, and a
        // bad token or a missing repository should not get as far as creating anything.
        let found = match self.login().await {
            Ok(_) => self.find_or_create_issue().await,
            Err(e) => Err(e),
        };
        let (issue, created) = self.done(found)?;
        Ok(Init {
            location: issue.html_url,
            created,
        })
    }
}
