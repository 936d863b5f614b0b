//! What the instance says of itself: which forge it is (`GET /version`, under `-v`) and its page
//! size (`GET /settings/api`), each asked once and kept in the issue-number cache, so a later
//! process asks neither before its first list.

use super::ForgeThread;
use super::error::{ForgeError, found};
use super::http::ForgeClient;
use super::retry::RetryPolicy;

/// Page size when `/settings/api` cannot be read (the server default for `MAX_RESPONSE_ITEMS`).
const FALLBACK_PAGE: u32 = 50;

impl ForgeThread {
    /// Says which server this is (Forgejo or Gitea, from `GET /version`) once per process, and
    /// only when `-v` will show it: it costs a request, so it is one quick try, and its answer
    /// is kept in the issue-number cache, so the next process asks nothing.
    pub(super) async fn note_version(&self, c: &ForgeClient) {
        if !tracing::enabled!(tracing::Level::INFO)
            || self
                .version_logged
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        if let Some(version) = self.cached().version {
            let v = super::models::ServerVersion { version };
            tracing::info!(
                "forge at {} runs {} (as last asked)",
                c.base(),
                v.describe()
            );
            return;
        }
        let quick = c.with_policy(RetryPolicy::quick(self.settings.quick_timeout));
        match quick.version().await {
            Ok(v) => {
                tracing::info!("forge at {} runs {}", c.base(), v.describe());
                self.remember(|s| s.version = Some(v.version.clone()));
            }
            Err(e) => tracing::info!("cannot tell which forge this is: {e}"),
        }
    }

    /// The instance's `max_response_items`: as this process or the issue-number cache knows
    /// it, else asked (once per process, and kept in the cache).
    pub(super) async fn page_size(&self, c: &ForgeClient) -> Result<u32, ForgeError> {
        if let Some(n) = self.remembered_page_size() {
            return Ok(n);
        }
        let n =
            found(c.api_settings().await)?.map_or(FALLBACK_PAGE, |s| s.max_response_items.max(1));
        self.remember(|s| s.page_size = Some(n));
        Ok(*self.page_size.get_or_init(|| n))
    }

    /// The page size this process or the issue-number cache knows.
    fn remembered_page_size(&self) -> Option<u32> {
        if let Some(&n) = self.page_size.get() {
            return Some(n);
        }
        let n = self.cached().page_size.filter(|n| *n > 0)?;
        Some(*self.page_size.get_or_init(|| n))
    }

    /// The instance's page size when it is known, else the server default: a list asked with a
    /// larger limit than the instance allows is clamped, never refused (§2), so every page
    /// still follows the one before.
    pub(super) fn known_page_size(&self) -> u32 {
        self.remembered_page_size().unwrap_or(FALLBACK_PAGE)
    }

    /// Learns the page size for the lists that follow, when it is not known, while a first list
    /// is asked with [`ForgeThread::known_page_size`]: at an empty cache, `/settings/api` and
    /// the issue search go at once, not one after the other. A failure here only costs pages.
    pub(super) async fn learn_page_size(&self, c: &ForgeClient) {
        if self.remembered_page_size().is_none()
            && let Err(e) = self.page_size(c).await
        {
            tracing::debug!("cannot read the instance's page size (/settings/api): {e}");
        }
    }
}
