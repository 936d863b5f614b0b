//! The comment lists: one issue's (§3.9) and the whole repository's (§3.10), decoded as they
//! stream in, asked again from earlier when the server's clock lags ours.

use chrono::{DateTime, SecondsFormat, Utc};

use reqwest::{Method, StatusCode};

use super::super::clock::server_lag;
use super::super::decode::Filter;
use super::super::http::{ForgeClient, Opened};
use super::super::models::{CommentList, IssueNumber};
use super::super::page::total_count;
use super::{CLOCK_NOISE, RepoRef};
use crate::forge::error::ForgeError;

type Result<T> = std::result::Result<T, ForgeError>;

impl ForgeClient {
    /// Every plain comment of an issue, in (created, id) order, decoded one by one as the answer
    /// arrives: an element of an unexpected shape is one unreadable comment, not an unreadable
    /// thread (an answer that is not an array at all is an error). Not paginated. `since` is an
    /// inclusive bound on `updated_at`, in whole seconds, on this machine's clock: when the
    /// answer's `Date` shows the server's clock lagging ours, the bound is moved back by the lag
    /// and the list asked for again, before the first answer's body is read, so no comment
    /// inside the window is missed. (A server running ahead only returns a few comments too many,
    /// which callers dedupe anyway.)
    ///
    /// Only what the filter keeps is kept (the others come back as skipped unreadable
    /// comments, their bodies never held; `Filter::all()` keeps everything). The filter is awaited while the
    /// request is under way, so finding it (the token's login) costs no round trip of its own.
    pub async fn comments_keeping(
        &self,
        repo: &RepoRef,
        n: IssueNumber,
        since: Option<DateTime<Utc>>,
        filter: impl std::future::Future<Output = Result<Filter>>,
    ) -> Result<CommentList> {
        let path = repo.path(&format!("issues/{}/comments", n.0));
        self.list_comments(path, since, filter).await
    }

    /// [`ForgeClient::comments_keeping`] keeping everything.
    pub fn comments(
        &self,
        repo: &RepoRef,
        n: IssueNumber,
        since: Option<DateTime<Utc>>,
    ) -> impl std::future::Future<Output = Result<CommentList>> {
        self.comments_keeping(repo, n, since, async { Ok(Filter::all()) })
    }

    /// The plain comments of **every** issue and pull request of the repository updated at or
    /// after `since` (`GET /repos/{o}/{r}/issues/comments`, §3.10), in (created, id) order, as
    /// [`ForgeClient::comments_keeping`] decodes a list. Without `page` the server sends every
    /// match in one answer; each comment's `issue_url` comes before its body, so the filter's
    /// [`Filter::drop_issues`] skips the bodies of issues the caller does not want unread.
    pub async fn repo_comments_keeping(
        &self,
        repo: &RepoRef,
        since: DateTime<Utc>,
        filter: impl std::future::Future<Output = Result<Filter>>,
    ) -> Result<CommentList> {
        let path = repo.path("issues/comments");
        self.list_comments(path, Some(since), filter).await
    }

    /// How many comments of the whole repository were updated at or after `since`, without
    /// downloading them: page 1 of one comment (`page=1&limit=1`, so the server paginates,
    /// §3.10), read for its `X-Total-Count`, the total across pages. `None` when the answer
    /// carries no count.
    pub async fn repo_comments_total(
        &self,
        repo: &RepoRef,
        since: DateTime<Utc>,
    ) -> Result<Option<u64>> {
        let path = repo.path("issues/comments");
        let query = [
            ("since", since.to_rfc3339_opts(SecondsFormat::Secs, true)),
            ("page", "1".to_string()),
            ("limit", "1".to_string()),
        ];
        let raw = self.raw(Method::GET, &path, &query, None).await?;
        if raw.status != StatusCode::OK {
            return Err(self.status_error(raw));
        }
        Ok(total_count(&raw.headers))
    }

    async fn list_comments(
        &self,
        path: String,
        since: Option<DateTime<Utc>>,
        filter: impl std::future::Future<Output = Result<Filter>>,
    ) -> Result<CommentList> {
        let (opened, filter) = tokio::join!(self.open_comments(&path, since), filter);
        let filter = filter?;
        self.decode_list(&path, since, opened, &filter).await
    }

    /// Decodes an opened list, opening it again after a transient failure (within the budget).
    async fn decode_list(
        &self,
        path: &str,
        since: Option<DateTime<Utc>>,
        opened: Result<Opened>,
        filter: &Filter,
    ) -> Result<CommentList> {
        let mut opened = opened?;
        let mut retry = self.retry();
        loop {
            match self.decode_comments(opened, filter).await {
                Err(e) if e.is_transient() => {
                    if !retry
                        .wait(None, &format!("GET /{path}"), &e.to_string())
                        .await
                    {
                        return Err(e);
                    }
                    opened = self.open_comments(path, since).await?;
                }
                other => return other,
            }
        }
    }

    /// Opens the comment list, asking again from earlier when the server's clock lags ours.
    async fn open_comments(&self, path: &str, since: Option<DateTime<Utc>>) -> Result<Opened> {
        let query = |since: Option<DateTime<Utc>>| -> Vec<(&str, String)> {
            since
                .map(|t| ("since", t.to_rfc3339_opts(SecondsFormat::Secs, true)))
                .into_iter()
                .collect()
        };
        let opened = self.open(path, &query(since)).await?;
        if let Some(t) = since
            && let Some(lag) = server_lag(&opened.headers)
            && lag > CLOCK_NOISE
        {
            tracing::debug!(
                "the server's clock is {}s behind ours; listing again from that much earlier",
                lag.num_seconds()
            );
            drop(opened);
            return self.open(path, &query(Some(t - lag))).await;
        }
        Ok(opened)
    }
}
