//! Read-only probes of a forge setup, for `doctor`: which server, whose token, which
//! repository, label and session issue, the server's clock and the issue-number cache.
//!
//! Every probe is one attempt (no retry budget: a diagnosis must not hang) and nothing is
//! written. Later probes are skipped when an earlier one already explains why they would fail:
//! no answer at all, a refused token, a missing repository. No format knowledge.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::error::ForgeError;
use super::models::{Issue, ServerVersion, User};
use super::retry::RetryPolicy;
use super::{ForgeThread, RepoRef};

/// What the token's user may do in the repository, as far as the token can tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoAccess {
    /// `owner/name` as the forge spells it.
    pub full_name: String,
    /// Write access; `None` when the token cannot read the repository's metadata (no
    /// `read:repository` scope), so the existence was checked through its labels instead.
    pub write: Option<bool>,
    /// The repository is archived: every write is refused.
    pub archived: bool,
}

/// The session issue number this machine remembers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CachedIssue {
    /// The cached issue number, if any.
    pub issue: Option<u64>,
    /// When it was last seen open with the right title and label.
    pub checked_at: Option<DateTime<Utc>>,
    /// Whether it was cached under the current title and label (else it is ignored).
    pub current: bool,
}

/// Everything the probes found. `None` means the probe was skipped (an earlier one failed in
/// a way that explains it).
#[derive(Debug)]
pub struct Probe {
    /// The forge's web root.
    pub base: String,
    /// The repository.
    pub repo: RepoRef,
    /// The session issue's title.
    pub title: String,
    /// The session label.
    pub label: String,
    /// `GET /version`.
    pub version: Result<ServerVersion, ForgeError>,
    /// How far the server's clock is behind ours (negative: ahead), from its `Date` header.
    pub clock_lag: Option<Duration>,
    /// `GET /user`: the token's user.
    pub user: Option<Result<User, ForgeError>>,
    /// The repository and the user's access to it.
    pub repository: Option<Result<RepoAccess, ForgeError>>,
    /// How many labels carry the session label's name.
    pub labels: Option<Result<usize, ForgeError>>,
    /// The head of the session thread (where writes go), if there is one.
    pub issue: Option<Result<Option<Issue>, ForgeError>>,
    /// The thread's members as the newest page of session issues shows them (number, open),
    /// lowest first, the head included.
    pub members: Option<Result<Vec<(u64, bool)>, ForgeError>>,
    /// The issue-number cache.
    pub cache: CachedIssue,
    /// Where the cache file is, when there is one.
    pub cache_dir: Option<std::path::PathBuf>,
    /// Issues with the session title and label that no trusted author opened (ignored).
    pub look_alikes: Vec<u64>,
}

impl ForgeThread {
    /// Probes the setup, read-only, one attempt per request.
    pub(crate) async fn probe(&self) -> Probe {
        let c = self.client.with_policy(RetryPolicy::once());
        let s = &self.settings;
        let cached = self.cached();
        let mut probe = Probe {
            base: self.client.base().to_string(),
            repo: s.repo.clone(),
            title: s.title.clone(),
            label: s.label.clone(),
            version: Err(ForgeError::Setup("not asked".into())),
            clock_lag: None,
            user: None,
            repository: None,
            labels: None,
            issue: None,
            members: None,
            look_alikes: Vec::new(),
            cache: CachedIssue {
                issue: cached.issue,
                checked_at: cached.checked_at,
                current: self.same_settings(&cached),
            },
            cache_dir: s.cache_dir.clone(),
        };
        probe.version = c.version().await;
        probe.clock_lag = c.server_lag();
        // No answer at all: nothing else can be learnt. (A 401 is an answer: Forgejo checks a
        // token on every route, `/version` included.)
        if probe.version.as_ref().is_err_and(|e| e.status().is_none()) {
            return probe;
        }
        let user = c.current_user().await;
        let refused = matches!(user, Err(ForgeError::Unauthorized { .. }));
        probe.user = Some(user);
        if refused {
            return probe;
        }
        let labels = || {
            let c = c.clone();
            async move {
                let limit = self.page_size(&c).await?;
                let all = c.labels(&s.repo, limit).await?;
                Ok::<_, ForgeError>(all.iter().filter(|l| l.name == s.label).count())
            }
        };
        let mut counted = None;
        let repository = match c.repository(&s.repo).await {
            Ok(r) => Ok(RepoAccess {
                full_name: r.full_name,
                write: r.permissions.map(|p| p.push),
                archived: r.archived,
            }),
            // No `read:repository` scope: the labels (an issue-scope route) still tell whether
            // the repository exists.
            Err(ForgeError::Forbidden { .. }) => labels().await.map(|n| {
                counted = Some(n);
                RepoAccess {
                    full_name: s.repo.to_string(),
                    write: None,
                    archived: false,
                }
            }),
            Err(e) => Err(e),
        };
        let missing = repository.is_err();
        probe.repository = Some(repository);
        if missing {
            return probe;
        }
        probe.labels = Some(match counted {
            Some(n) => Ok(n),
            None => labels().await,
        });
        let head = self.discover(&c).await;
        let members = match self.page_size(&c).await {
            Ok(limit) => c
                .newest_issues(&s.repo, "all", Some(&s.label), limit)
                .await
                .map(|all| {
                    let mut found: Vec<(u64, bool)> = all
                        .iter()
                        .filter(|i| self.is_member_issue(i))
                        .map(|i| (i.number.0, i.state == super::models::IssueState::Open))
                        .collect();
                    if let Ok(Some(h)) = &head
                        && !found.iter().any(|(n, _)| *n == h.number.0)
                    {
                        found.push((h.number.0, true)); // a retitled head
                    }
                    found.sort_unstable();
                    found
                }),
            Err(e) => Err(e),
        };
        if let (Some(cached), Ok(Some(h))) = (self.cached_head(), &head)
            && cached != h.number
        {
            // The cached number would keep this machine's writes on #cached until its recheck
            // (and a recheck keeps an issue that still looks like a session issue): forget it,
            // so the next command looks the head up again, as doctor says.
            self.forget_issue();
        }
        probe.issue = Some(head);
        probe.members = Some(members);
        probe.look_alikes = self.look_alikes();
        probe
    }
}
