//! Typed calls, one per endpoint forgestate uses (`ENDPOINTS.md` §3), each with the status the
//! real server answers on success (note: editing an issue answers 201, adding labels 200).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error::{Call, ForgeError};
use super::http::ForgeClient;
use super::models::{
    ApiSettings, Comment, CommentId, CreateIssue, CreateLabel, Issue, IssueNumber, Label, LabelId,
    Repository, ServerVersion, User,
};
use super::page::Page;

mod comments;

const OK: &[StatusCode] = &[StatusCode::OK];
const CREATED: &[StatusCode] = &[StatusCode::CREATED];
/// A bound on page walks, against a server whose headers never stop promising more: 1000 pages
/// of 50 is 50 000 open issues, far more than any repository forgestate works in.
pub(crate) const MAX_PAGES: u32 = 1000;
/// A bound on the time one page walk may take, whatever each page costs.
pub(crate) const MAX_WALK: std::time::Duration = std::time::Duration::from_secs(60);
/// Clock lag below this is the `Date` header's whole seconds plus transit time, not drift.
const CLOCK_NOISE: chrono::Duration = chrono::Duration::seconds(2);

/// Which repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepoRef {
    /// The owner (user or organisation).
    pub owner: String,
    /// The repository name.
    pub repo: String,
}

impl RepoRef {
    pub(crate) fn path(&self, rest: &str) -> String {
        format!("repos/{}/{}/{rest}", self.owner, self.repo)
    }
}

/// The longest owner or repository name accepted (Forgejo and Gitea allow 100 for repositories,
/// fewer for users).
pub(crate) const MAX_NAME: usize = 100;

/// Why `name` cannot be a Forgejo/Gitea owner or repository name, if it cannot: those are ASCII
/// letters, digits, `-`, `_` and `.`, not `.` or `..`, at most [`MAX_NAME`] characters.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() {
        Some("is empty".into())
    } else if name == "." || name == ".." {
        Some(format!("{name:?} is not a name"))
    } else if name.len() > MAX_NAME {
        Some(format!("is longer than {MAX_NAME} characters"))
    } else {
        name.chars().find(|&c| !allowed(c)).map(|c| {
            format!("{name:?} contains {c:?}; names are ASCII letters, digits, '-', '_' and '.'")
        })
    }
}

impl std::fmt::Display for RepoRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.owner, self.repo)
    }
}

type Result<T> = std::result::Result<T, ForgeError>;

/// The query of an issue list: issues (not pull requests) in `state`, with `label` when given.
fn issue_query(state: &str, label: Option<&str>) -> Vec<(&'static str, String)> {
    let mut query = vec![("state", state.to_string()), ("type", "issues".to_string())];
    query.extend(label.map(|l| ("labels", l.to_string())));
    query
}

impl ForgeClient {
    pub async fn version(&self) -> Result<ServerVersion> {
        self.send(Method::GET, "version", &[], None, OK).await
    }

    pub async fn api_settings(&self) -> Result<ApiSettings> {
        self.send(Method::GET, "settings/api", &[], None, OK).await
    }

    /// The token's own user (`read:user` scope).
    pub async fn current_user(&self) -> Result<User> {
        self.send(Method::GET, "user", &[], None, OK).await
    }

    /// The repository, with the caller's permissions. Needs the `read:repository` scope: a
    /// token scoped to issues alone gets 403 here, whether or not the repository exists.
    pub async fn repository(&self, repo: &RepoRef) -> Result<Repository> {
        let path = format!("repos/{}/{}", repo.owner, repo.repo);
        self.send(Method::GET, &path, &[], None, OK).await
    }

    pub async fn issue(&self, repo: &RepoRef, n: IssueNumber) -> Result<Issue> {
        let path = repo.path(&format!("issues/{}", n.0));
        self.send(Method::GET, &path, &[], None, OK).await
    }

    /// Every open issue (not pull request), walking all pages with `limit` per page; with
    /// `label`, only those the server's label filter keeps. The server ignores an unknown label,
    /// and a label name that exists twice makes it require both copies, so callers must check
    /// labels themselves and must not trust the filter to be complete while labels are in flux.
    pub async fn open_issues(
        &self,
        repo: &RepoRef,
        label: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Issue>> {
        let query = issue_query("open", label);
        self.all_pages(&repo.path("issues"), query, limit).await
    }

    /// Every label of the repository (paginated only because `page` is sent).
    pub async fn labels(&self, repo: &RepoRef, limit: u32) -> Result<Vec<Label>> {
        self.all_pages(&repo.path("labels"), Vec::new(), limit)
            .await
    }

    /// Walks every page of a list endpoint: never stops after page 1, and follows
    /// `Link: rel="next"` or `X-Total-Count` (which ends the walk once reached). A server that
    /// never stops promising more is an error, never a hang: a `next` link that does not move
    /// forward, a page identical to an earlier one, more than [`MAX_PAGES`] pages or a walk
    /// longer than [`MAX_WALK`]. (Stopping early instead could miss the session issue and
    /// create a second one.)
    async fn all_pages<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        query: Vec<(&str, String)>,
        limit: u32,
    ) -> Result<Vec<T>> {
        Ok(self
            .walk(path, query, limit, MAX_PAGES)
            .await?
            .unwrap_or_default())
    }

    /// [`ForgeClient::all_pages`], giving up (`None`) rather than walk more than `cap` pages
    /// (an error past [`MAX_PAGES`] whatever the cap).
    async fn walk<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        query: Vec<(&str, String)>,
        limit: u32,
        cap: u32,
    ) -> Result<Option<Vec<T>>> {
        let started = std::time::Instant::now();
        let mut all = Vec::new();
        let mut seen_pages = std::collections::HashSet::new();
        let mut number = 1;
        loop {
            let (page, digest): (Page<T>, u64) = self
                .page(path, &query, limit, number, all.len() as u64)
                .await?;
            let looping = |why: String| ForgeError::Paging {
                call: Call {
                    method: "GET",
                    path: format!("/{path}"),
                },
                detail: why,
            };
            if !page.items.is_empty() && !seen_pages.insert(digest) {
                return Err(looping(format!("page {number} repeats an earlier page")));
            }
            all.extend(page.items);
            let Some(next) = page.next else {
                return Ok(Some(all));
            };
            if let Some(linked) = page.linked
                && linked <= number
            {
                return Err(looping(format!(
                    "page {number} links to page {linked} as the next one"
                )));
            }
            if next > MAX_PAGES {
                return Err(looping(format!("more than {MAX_PAGES} pages")));
            }
            if next > cap {
                return Ok(None);
            }
            if started.elapsed() > MAX_WALK {
                return Err(looping(format!(
                    "still more pages after {} s",
                    MAX_WALK.as_secs()
                )));
            }
            number = next;
        }
    }

    /// Every issue (not pull request), open or closed, updated at or after `since` (on the
    /// server's clock; a new comment bumps its issue's `updated_at`, §3.11), `limit` per page;
    /// `None` when that takes more than `cap` pages.
    pub async fn issues_since(
        &self,
        repo: &RepoRef,
        since: chrono::DateTime<chrono::Utc>,
        limit: u32,
        cap: u32,
    ) -> Result<Option<Vec<Issue>>> {
        let mut query = issue_query("all", None);
        query.push((
            "since",
            since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ));
        self.walk(&repo.path("issues"), query, limit, cap).await
    }

    /// Page `number` (1-based) of a list endpoint, `limit` items per page, after `seen` items.
    async fn page<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        limit: u32,
        number: u32,
        seen: u64,
    ) -> Result<(Page<T>, u64)> {
        use std::hash::{Hash, Hasher};
        let mut q = query.to_vec();
        q.extend([("limit", limit.to_string()), ("page", number.to_string())]);
        let raw = self.raw(Method::GET, path, &q, None).await?;
        if !OK.contains(&raw.status) {
            return Err(self.status_error(raw));
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        raw.body.hash(&mut hasher);
        let items: Vec<T> =
            serde_json::from_slice(&raw.body).map_err(|e| self.decode_error(&raw, &e))?;
        Ok((
            Page::new(items, &raw.headers, number, seen),
            hasher.finish(),
        ))
    }

    pub async fn create_label(&self, repo: &RepoRef, label: &CreateLabel<'_>) -> Result<Label> {
        let body = serde_json::to_value(label).ok();
        self.send(Method::POST, &repo.path("labels"), &[], body, CREATED)
            .await
    }

    /// Deletes a label (204, empty body).
    pub async fn delete_label(&self, repo: &RepoRef, id: LabelId) -> Result<()> {
        let path = repo.path(&format!("labels/{}", id.0));
        let raw = self.raw(Method::DELETE, &path, &[], None).await?;
        if raw.status == StatusCode::NO_CONTENT {
            return Ok(());
        }
        Err(self.status_error(raw))
    }

    /// Creates an issue with exactly one attempt: creation is not idempotent, so the caller
    /// decides what to do after a failure that may have been committed (see `forge/create.rs`).
    pub async fn create_issue_once(
        &self,
        repo: &RepoRef,
        issue: &CreateIssue<'_>,
    ) -> Result<Issue> {
        let body = serde_json::to_value(issue).ok();
        let raw = self
            .once(Method::POST, &repo.path("issues"), &[], body.as_ref())
            .await?;
        if raw.status != StatusCode::CREATED {
            return Err(self.status_error(raw));
        }
        serde_json::from_slice(&raw.body).map_err(|e| ForgeError::Decode {
            call: raw.call,
            detail: e.to_string(),
        })
    }

    /// The first page of issues (not pull requests) in `state` (`open`, `closed`), newest
    /// first, with `limit` per page; with `label`, as the server's label filter keeps them (see
    /// [`ForgeClient::open_issues`] for why callers must check labels themselves).
    pub async fn newest_issues(
        &self,
        repo: &RepoRef,
        state: &str,
        label: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Issue>> {
        let query = issue_query(state, label);
        let (first, _) = self.page(&repo.path("issues"), &query, limit, 1, 0).await?;
        Ok(first.items)
    }

    /// Adds labels by id; answers the issue's complete label list.
    pub async fn add_labels(
        &self,
        repo: &RepoRef,
        n: IssueNumber,
        ids: &[LabelId],
    ) -> Result<Vec<Label>> {
        let path = repo.path(&format!("issues/{}/labels", n.0));
        let body = Some(json!({ "labels": ids }));
        self.send(Method::POST, &path, &[], body, OK).await
    }

    /// Closes an issue.
    pub async fn close_issue(&self, repo: &RepoRef, n: IssueNumber) -> Result<Issue> {
        self.edit_issue(repo, n, json!({ "state": "closed" })).await
    }

    /// Replaces an issue's body.
    pub async fn edit_issue_body(
        &self,
        repo: &RepoRef,
        n: IssueNumber,
        body: &str,
    ) -> Result<Issue> {
        self.edit_issue(repo, n, json!({ "body": body })).await
    }

    /// `PATCH /repos/{o}/{r}/issues/{n}` with `edit`; the server answers 201 to an edit, not 200.
    async fn edit_issue(&self, repo: &RepoRef, n: IssueNumber, edit: Value) -> Result<Issue> {
        let path = repo.path(&format!("issues/{}", n.0));
        self.send(Method::PATCH, &path, &[], Some(edit), CREATED)
            .await
    }

    /// Deletes one comment (`DELETE /repos/{o}/{r}/issues/comments/{id}`, §3.12): `Ok(true)` on
    /// 204, `Ok(false)` when it is already gone (404; a retry after a lost answer sees this).
    /// 403 (empty body) means the token's user is neither the poster nor an issue writer.
    /// Idempotent, so it goes through the retrying request path.
    pub async fn delete_comment(&self, repo: &RepoRef, id: CommentId) -> Result<bool> {
        let path = repo.path(&format!("issues/comments/{}", id.0));
        let raw = self.raw(Method::DELETE, &path, &[], None).await?;
        match raw.status {
            StatusCode::NO_CONTENT => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            _ => Err(self.status_error(raw)),
        }
    }

    pub async fn create_comment(
        &self,
        repo: &RepoRef,
        n: IssueNumber,
        body: &str,
    ) -> Result<Comment> {
        let path = repo.path(&format!("issues/{}/comments", n.0));
        let body = Some(json!({ "body": body }));
        self.send(Method::POST, &path, &[], body, CREATED).await
    }
}
