//! Posting a comment without ever posting it twice, and reading the thread.
//!
//! Creating a comment is not idempotent, and a timeout or dropped connection after the request
//! went out leaves it unknown whether the server committed it. So before any re-post after such
//! an ambiguous failure, the thread is listed `since` the first attempt (minus a margin for clock
//! skew) and searched for a comment by us with the very same body. Bodies carry the record's
//! unique `Id`, so an identical body is that record: this stays free of format knowledge. Bodies
//! are compared with line ends made LF and surrounding whitespace trimmed, since a forge may
//! store them with CRLF. Between that check and the re-post the issue is looked at once more, so
//! that a balancer alternating a good and a dead backend does not put every re-post on the dead
//! one.

use std::collections::HashSet;

use chrono::{DateTime, Duration as Span, Utc};
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::ForgeThread;
use super::decode::Filter;
use super::error::ForgeError;
use super::http::ForgeClient;
use super::models::{Comment, CommentList, IssueNumber, Taken, UnreadableComment};
use super::retry::{RetryPolicy, retry_after};
use crate::store::{self, Effort, Keep, Listing};

/// How far before the first attempt to look for an already-committed copy.
const SKEW: Span = Span::minutes(10);

impl ForgeThread {
    /// The client for a given effort.
    fn client_for(&self, effort: Effort) -> ForgeClient {
        match effort {
            Effort::Full => self.client.clone(),
            Effort::Quick => self
                .client
                .with_policy(RetryPolicy::quick(self.settings.quick_timeout)),
            Effort::Once => self.client.with_policy(RetryPolicy::once()),
            Effort::Probe => self.client.with_policy(RetryPolicy::probe()),
        }
    }

    pub(super) async fn post(
        &self,
        body: &str,
        effort: Effort,
    ) -> Result<store::Comment, ForgeError> {
        let c = self
            .client_for(effort)
            .with_fallback("saving the record to the outbox");
        let n = self.issue_for(&c, true).await?;
        self.post_at(&c, n, body, true).await
    }

    /// Posts `body` on issue `n`, never twice. With `rediscover`, an issue that is gone is found
    /// again once (the session issue moved); without, it is an error.
    pub(super) async fn post_at(
        &self,
        c: &ForgeClient,
        mut n: IssueNumber,
        body: &str,
        rediscover: bool,
    ) -> Result<store::Comment, ForgeError> {
        let started = Utc::now();
        let mut retry = c.retry();
        let mut rediscovered = !rediscover;
        let mut unsure = false;
        loop {
            if unsure {
                match self.find_posted(c, n, body, started).await {
                    Ok(Some(found)) => {
                        tracing::info!(
                            "an earlier attempt was committed after all (comment {})",
                            found.id
                        );
                        return Ok(found);
                    }
                    Ok(None) => {
                        unsure = false;
                        self.look_before_reposting(c, Some(n)).await;
                    }
                    Err(e) => {
                        if retry
                            .wait(None, "checking for an earlier attempt", &e.to_string())
                            .await
                        {
                            continue;
                        }
                        return Err(e);
                    }
                }
            }
            let path = format!(
                "repos/{}/{}/issues/{}/comments",
                self.settings.repo.owner, self.settings.repo.repo, n.0
            );
            let body_json = json!({ "body": body });
            let (error, after) = match c.once(Method::POST, &path, &[], Some(&body_json)).await {
                Ok(raw) if raw.status == StatusCode::CREATED => {
                    let comment: Comment =
                        serde_json::from_slice(&raw.body).map_err(|e| c.decode_error(&raw, &e))?;
                    return Ok(Self::to_comment(comment));
                }
                Ok(raw) => {
                    let after = retry_after(&raw.headers);
                    (c.status_error(raw), after)
                }
                Err(e) => (e, None),
            };
            match error {
                ForgeError::NotFound { .. } if !rediscovered => {
                    // The cached issue is gone (deleted, or the repo moved): find it again, once.
                    tracing::info!("session issue {n} not found; discovering it again");
                    self.forget_issue();
                    n = self.issue_for(c, true).await?;
                    rediscovered = true;
                }
                e if e.is_transient() => {
                    unsure |= e.maybe_committed();
                    if !retry
                        .wait(after, &format!("POST /{path}"), &e.to_string())
                        .await
                    {
                        if unsure
                            && let Ok(Some(found)) = self.find_posted(c, n, body, started).await
                        {
                            return Ok(found);
                        }
                        return Err(e);
                    }
                }
                e => return Err(e),
            }
        }
    }

    /// One look at issue `n` (the repository, without one) between the check for an earlier
    /// attempt and the re-post, whatever it answers. Behind a round-robin balancer with a dead
    /// backend, good and bad answers alternate: the check's answer came from the good backend,
    /// so without this the re-post would always land on the dead one. With it the re-post gets
    /// its own chance at a good backend.
    pub(super) async fn look_before_reposting(&self, c: &ForgeClient, n: Option<IssueNumber>) {
        let once = c.with_policy(RetryPolicy {
            budget: std::time::Duration::ZERO,
            ..c.policy()
        });
        let repo = &self.settings.repo;
        let looked = match n {
            Some(n) => once.issue(repo, n).await.map(drop),
            None => once.repository(repo).await.map(drop),
        };
        if let Err(e) = looked {
            tracing::debug!("looking again before posting again: {e}");
        }
    }

    /// Our comment with exactly this body, posted since `started` (minus the skew margin).
    async fn find_posted(
        &self,
        c: &ForgeClient,
        n: IssueNumber,
        body: &str,
        started: DateTime<Utc>,
    ) -> Result<Option<store::Comment>, ForgeError> {
        let once = c.with_policy(RetryPolicy {
            budget: std::time::Duration::ZERO,
            ..c.policy()
        });
        // Only our own comments can be the earlier attempt: skip the others' bodies.
        let mine = async {
            Ok(match self.login().await {
                Ok(me) => Filter::only(me),
                Err(_) => Filter::all(),
            })
        };
        let comments = once
            .comments_keeping(&self.settings.repo, n, Some(started - SKEW), mine)
            .await?
            .comments;
        let me = self.login().await.ok();
        Ok(comments
            .into_iter()
            .filter(|x| me.is_none() || x.user.as_ref().map(|u| &u.login) == me.as_ref())
            .find(|x| same_body(&x.body, body))
            .map(Self::to_comment))
    }

    /// The thread's comments (`since`, when given), skipping as they stream past those `keep`
    /// does not keep. The keep is remembered for the reads of earlier issues that follow.
    pub(super) async fn read(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
        keep: &Keep,
    ) -> Result<Listing, ForgeError> {
        if let Ok(mut last) = self.keep.lock() {
            // Without the digest: it belongs to this listing's reader alone.
            *last = Keep {
                digest: None,
                ..keep.clone()
            };
        }
        let c = self
            .client_for(effort)
            .with_fallback("answering from this machine's outbox");
        // Whether finding the head reads the issue (a recheck), and with it its comment count.
        let counts_before = self.count_reads();
        let (n, early) = match (since, self.cached_head()) {
            // A cold read of the head the issue-number cache names: its lists are asked at
            // once with the check that it is still the head (one round trip, not two), and
            // used only when it is.
            (None, Some(guess)) => {
                let (n, list) = tokio::join!(
                    self.issue_for(&c, false),
                    self.read_chain(&c, guess, None, keep)
                );
                let n = n?;
                if n != guess {
                    tracing::debug!(
                        "the cached session issue {guess} is not the head ({n}): reading {n}"
                    );
                }
                (n, (n == guess).then_some(list))
            }
            _ => (self.issue_for(&c, false).await?, None),
        };
        // A warm read for the read cache learns the head's comment count too, unless finding
        // the head just read it (`count.rs`).
        let asked = (early.is_none()
            && since.is_some()
            && keep.count
            && self.count_reads() == counts_before)
            .then(|| self.ask_count(&self.client_for(effort), n));
        let list = match early {
            Some(list) => list,
            None => self.read_chain(&c, n, since, keep).await,
        };
        let uncounted = match asked {
            Some(asked) => self.take_count(asked, list.is_ok()).await,
            None => None,
        };
        let list = match list {
            Err(ForgeError::NotFound { .. }) => {
                self.forget_issue();
                let n = self.issue_for(&c, false).await?;
                self.read_chain(&c, n, since, keep).await?
            }
            other => other?,
        };
        let (mut listing, taken) = Self::listing_of(list);
        if let Some(digest) = &keep.digest {
            let newest = taken.iter().map(|t| t.updated_at).max();
            digest.listed(taken.into_iter().map(|t| t.id.0).collect(), newest);
        }
        listing.warnings.extend(self.take_notices());
        listing.warnings.extend(uncounted);
        Ok(listing)
    }

    /// `keep` resolved: the token's login joins the kept authors (the one `keep` names, else
    /// asked once per process, and only when authors are filtered at all).
    pub(super) async fn filter(&self, keep: &Keep) -> Result<Filter, ForgeError> {
        let me = match (&keep.authors, &keep.identity) {
            (Some(_), Some(known)) => Some(known.clone()),
            (Some(_), None) => Some(self.login().await?),
            (None, _) => None,
        };
        Ok(Filter::new(keep, me))
    }

    /// The keep of the last read (everything, before any).
    pub(super) fn last_keep(&self) -> Keep {
        self.keep
            .lock()
            .map(|k| k.clone())
            .unwrap_or_else(|_| Keep::all())
    }

    /// A decoded comment list read without a digest (which takes no comment) as the store's
    /// listing: comments, and the unreadable ones as rejects.
    pub(super) fn into_listing(list: CommentList) -> Listing {
        Self::listing_of(list).0
    }

    /// A decoded comment list as the store's listing, and the comments the reader's digest
    /// took whole (for [`crate::store::Digest::listed`]), each once.
    pub(super) fn listing_of(mut list: CommentList) -> (Listing, Vec<Taken>) {
        // `since` is inclusive, so incremental readers see a comment twice; dedupe by id here.
        let mut seen = HashSet::new();
        // The decoded list gives its memory back as the listing grows (a long thread's two
        // lists are never held whole together).
        let comments = crate::store::map_shrinking(std::mem::take(&mut list.comments), |c| {
            seen.insert(c.id).then(|| Self::to_comment(c))
        });
        let mut taken = std::mem::take(&mut list.taken);
        taken.retain(|t| seen.insert(t.id));
        let rejects = std::mem::take(&mut list.unreadable)
            .into_iter()
            .filter(|u| u.id.is_none_or(|id| seen.insert(id)))
            .map(|u| {
                tracing::debug!(
                    "comment {} is unreadable: {}",
                    u.id.map_or_else(|| "(no id)".to_string(), |id| id.0.to_string()),
                    u.reason
                );
                unreadable(u)
            })
            .collect();
        let listing = Listing {
            comments,
            incomplete: list.partial.is_some(),
            warnings: list.partial.into_iter().collect(),
            rejects,
        };
        (listing, taken)
    }
}

/// Whether a stored body is the one posted (see [`store::normal_body`]).
pub(crate) fn same_body(stored: &str, posted: &str) -> bool {
    stored == posted || store::normal_body(stored) == store::normal_body(posted)
}

fn unreadable(u: UnreadableComment) -> store::Unreadable {
    store::Unreadable {
        id: u.id.map(|id| id.0),
        author: u.login,
        created_at: u.created_at,
        updated_at: u.updated_at,
        url: u.html_url,
        reason: u.reason,
        skipped: u.skipped,
        head: u.head,
    }
}
