//! Creating the session issue (`init`): the label, the issue itself (never twice after a lost
//! answer), the link to the closed issue it continues, and convergence when `init`s race.
//!
//! Creation is not idempotent. After a failure that may have been committed (the request went
//! out and no clear refusal came back), the open issues are listed again and one with our exact
//! title and body is adopted rather than created a second time, as `post.rs` does for comments.
//! Cleanups (deleting our copy of a label created twice, closing our duplicate issue) are
//! best-effort: they are logged when they fail and never fail the record being written.

use super::ForgeThread;
use super::error::ForgeError;
use super::lineage::{link_line, linked};
use super::models::{CreateIssue, CreateLabel, Issue, IssueNumber, LabelId};

impl ForgeThread {
    /// Finds or creates the session issue. Idempotent; concurrent runs converge on one issue.
    pub async fn init_issue(&self) -> Result<Issue, ForgeError> {
        Ok(self.find_or_create_issue().await?.0)
    }

    /// [`ForgeThread::init_issue`], also saying whether this call created the issue it returns
    /// (false when it found one, including one a concurrent `init` created first).
    pub(super) async fn find_or_create_issue(&self) -> Result<(Issue, bool), ForgeError> {
        self.note_version(&self.client).await;
        if let Some(issue) = self.discover(&self.client).await? {
            self.adopt(&issue);
            return Ok((issue, false));
        }
        let previous = self.latest_closed().await;
        let created = self.create_session_issue(previous, None).await?;
        // Another `init` (or a rotation) may have raced us: everyone converges on the head the
        // links elect (`chain/elect.rs`), the first created among issues that continue the same
        // one. Every racer sees it, because it was created before any of theirs; an issue that
        // continues a newer one wins over ours, and ours never wins over its own successor.
        let all = self.session_issues(&self.client, true).await?;
        let canonical =
            (self.elect(&self.client, all).await?.head).unwrap_or_else(|| created.clone());
        if canonical.number != created.number {
            self.close_duplicate("init", created.number, &canonical)
                .await;
        }
        self.adopt(&canonical);
        let ours = canonical.number == created.number;
        Ok((canonical, ours))
    }

    /// Creates a session issue (labelled, never twice after a lost answer) whose body links
    /// `previous`. With `successor_of`, an ambiguous failure adopts only an issue numbered above
    /// it that links it (a rotation's successor), never the open issue being rotated.
    pub(super) async fn create_session_issue(
        &self,
        previous: Option<IssueNumber>,
        successor_of: Option<IssueNumber>,
    ) -> Result<Issue, ForgeError> {
        let label = self.ensure_label().await?;
        let repo = &self.settings.repo;
        let body = match previous {
            Some(previous) => format!("{}\n\n{}", link_line(previous), self.settings.issue_body),
            None => self.settings.issue_body.clone(),
        };
        let created = self.create_once(label, &body, successor_of).await?;
        tracing::info!("created session issue {} in {repo}", created.number);
        if !created.has_label(&self.settings.label) {
            // The server silently drops labels on creation when the caller cannot write issues.
            if let Err(e) = self.client.add_labels(repo, created.number, &[label]).await {
                let _ = self.client.close_issue(repo, created.number).await;
                return Err(match e {
                    ForgeError::Forbidden { .. } => ForgeError::Setup(format!(
                        "the token's user cannot label issues in {repo} (403): it needs write access \
                         to the repository's issues, or someone with that right must run \
                         `forgestate init`; the unlabelled issue {} was closed",
                        created.number
                    )),
                    other => other,
                });
            }
        }
        Ok(created)
    }

    /// Closes our duplicate of `canonical`, which another `by` (an `init`, a rotation) created
    /// at the same time, with a note linking it. Best-effort: a duplicate left open is only
    /// ignored by discovery (the lowest number wins), so a failure is logged.
    pub(super) async fn close_duplicate(&self, by: &str, ours: IssueNumber, canonical: &Issue) {
        tracing::warn!(
            "another {by} created {} at the same time; closing our duplicate {ours}",
            canonical.number
        );
        let repo = &self.settings.repo;
        let note = format!(
            "Closed as a duplicate of {}, which a concurrent `forgestate init` or `rotate` created first. \
             Session state lives there: {}",
            canonical.number, canonical.html_url
        );
        let closed = match self.client.create_comment(repo, ours, &note).await {
            Ok(_) => self.client.close_issue(repo, ours).await.map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = closed {
            tracing::warn!(
                "cannot close the duplicate session issue {ours} ({e}); close it by hand, {} is \
                 the one in use",
                canonical.number
            );
        }
    }

    /// Creates the issue, never twice: after an ambiguous failure, an open issue with our title
    /// and body is adopted instead of creating another.
    async fn create_once(
        &self,
        label: LabelId,
        body: &str,
        successor_of: Option<IssueNumber>,
    ) -> Result<Issue, ForgeError> {
        let c = &self.client;
        let repo = &self.settings.repo;
        let request = CreateIssue {
            title: &self.settings.title,
            body,
            labels: vec![label],
        };
        let mut retry = c.retry_quietly();
        let mut unsure = false;
        loop {
            if unsure {
                match self.find_created(body, successor_of).await {
                    Ok(Some(found)) => {
                        tracing::info!(
                            "an earlier attempt created session issue {} after all",
                            found.number
                        );
                        return Ok(found);
                    }
                    Ok(None) => {
                        unsure = false;
                        self.look_before_reposting(c, None).await;
                    }
                    Err(e) => {
                        let why = e.to_string();
                        if e.is_transient()
                            && retry
                                .wait(None, "checking for an earlier attempt", &why)
                                .await
                        {
                            continue;
                        }
                        return Err(e);
                    }
                }
            }
            let e = match c.create_issue_once(repo, &request).await {
                Ok(issue) => return Ok(issue),
                Err(e) if e.is_transient() => e,
                Err(e) => return Err(e),
            };
            unsure |= e.maybe_committed();
            let what = format!("POST /repos/{repo}/issues");
            if !retry.wait(None, &what, &e.to_string()).await {
                if unsure && let Ok(Some(found)) = self.find_created(body, successor_of).await {
                    return Ok(found);
                }
                return Err(e);
            }
        }
    }

    /// The lowest open issue with our title and either the session label or our exact body: one
    /// an earlier attempt (or a racing `init`) created. Every open issue is listed (no label
    /// filter), because the label may have been dropped on creation or exist twice. With
    /// `successor_of`, only issues numbered above it that link it count.
    async fn find_created(
        &self,
        body: &str,
        successor_of: Option<IssueNumber>,
    ) -> Result<Option<Issue>, ForgeError> {
        let limit = self.page_size(&self.client).await?;
        self.login().await?;
        let mut found: Vec<Issue> = self
            .client
            .open_issues(&self.settings.repo, None, limit)
            .await?
            .into_iter()
            .filter(|i| i.pull_request.is_none() && self.trusted_creator(i))
            .filter(|i| i.title == self.settings.title)
            .filter(|i| i.has_label(&self.settings.label) || i.body == body)
            .filter(|i| {
                successor_of.is_none_or(|old| i.number > old && linked(&i.body) == Some(old))
            })
            .collect();
        found.sort_by_key(|i| i.number);
        Ok(found.into_iter().next())
    }

    /// The session issue a new one continues: the most recently closed issue with the session
    /// title and label, from the newest page of closed issues. Best-effort: a failure only
    /// leaves the new issue without a link, and is logged.
    pub(super) async fn latest_closed(&self) -> Option<IssueNumber> {
        self.latest_closed_issue().await.map(|i| i.number)
    }

    /// [`ForgeThread::latest_closed`], the issue itself.
    pub(super) async fn latest_closed_issue(&self) -> Option<Issue> {
        let closed = async {
            let limit = self.page_size(&self.client).await?;
            self.login().await?;
            let label = Some(self.settings.label.as_str());
            let repo = &self.settings.repo;
            self.client
                .newest_issues(repo, "closed", label, limit)
                .await
        };
        match closed.await {
            Ok(issues) => issues
                .into_iter()
                .filter(|i| self.has_session_marks(i) && self.trusted_creator(i))
                .max_by_key(|i| (i.closed_at, i.number)),
            Err(e) => {
                tracing::warn!("cannot look for a closed session issue to link: {e}");
                None
            }
        }
    }

    /// The id of the session label, creating it when the repository has none.
    async fn ensure_label(&self) -> Result<LabelId, ForgeError> {
        let repo = &self.settings.repo;
        let name = &self.settings.label;
        if let Some(&id) = self.session_label_ids(&self.client).await?.first() {
            return Ok(id);
        }
        let made = self
            .client
            .create_label(
                repo,
                &CreateLabel {
                    name,
                    color: &self.settings.label_color,
                    description: &self.settings.label_description,
                },
            )
            .await?;
        tracing::info!("created label {name:?} in {repo}");
        // Label names are not unique on the server, and a name that exists twice makes the issue
        // list's label filter require both copies. If a racing init made one too, everyone keeps
        // the lowest id (created first, so every racer sees it) and deletes its own. A failed
        // delete is only logged: discovery copes with a doubled name, and the record matters more.
        let keep = match self.session_label_ids(&self.client).await {
            Ok(ids) => ids.first().copied().unwrap_or(made.id),
            Err(e) => {
                tracing::warn!("cannot list labels after creating {name:?}: {e}; using ours");
                made.id
            }
        };
        if keep != made.id {
            tracing::info!("a concurrent init also created label {name:?}; deleting our copy");
            if let Err(e) = self.client.delete_label(repo, made.id).await {
                tracing::warn!(
                    "cannot delete the duplicate label {name:?} (id {}) in {repo}: {e}; delete it \
                     by hand (the session issue carries id {})",
                    made.id.0,
                    keep.0
                );
            }
        }
        Ok(keep)
    }
}
