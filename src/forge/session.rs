//! Finding the session issue: the cache and its recheck, discovery over every page and the
//! client-side title and label check. Creating it (`init`) is in `create.rs`.

use chrono::Utc;

use super::ForgeThread;
use super::error::{ForgeError, found};
use super::http::ForgeClient;
use super::lineage::linked;
use super::models::{Issue, IssueNumber, IssueState, LabelId};
use super::rotate::forwarded_to;

/// The session issues this process warned of as edited ([`ForgeThread::warn_if_edited`]).
static EDITED: std::sync::Mutex<std::collections::BTreeSet<u64>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

impl ForgeThread {
    /// The session issue to use. A cached number is used as is while it is fresh; an old one is
    /// checked (still open, same title and label) first. `for_write` allows `auto_init`; a read
    /// with no open session issue reads the most recently closed one.
    ///
    /// Under `-v`, which forge this is is asked at the same time, not before.
    pub(super) async fn issue_for(
        &self,
        c: &ForgeClient,
        for_write: bool,
    ) -> Result<IssueNumber, ForgeError> {
        let ((), n) = tokio::join!(self.note_version(c), self.find_issue(c, for_write));
        n
    }

    /// The session issue the issue-number cache names, for these settings and this token (not
    /// yet rechecked).
    pub(super) fn cached_head(&self) -> Option<IssueNumber> {
        let cached = self.cached();
        cached
            .issue
            .map(IssueNumber)
            .filter(|_| self.same_settings(&cached) && self.same_token(&cached))
    }

    /// Whether `cached` was checked with the token in use. The issue's author was trusted under
    /// that token's login: another account's token trusts other authors, so its first use checks
    /// the issue again (as a cold read would), rather than read or post where it would not.
    fn same_token(&self, cached: &super::CacheEntry) -> bool {
        match &cached.token {
            Some((salt, fingerprint)) => {
                self.client.token_fingerprint(salt).as_ref() == Some(fingerprint)
            }
            None => self.client.token_fingerprint("").is_none(),
        }
    }

    /// Whether `cached` was remembered under this thread's session title and label.
    pub(super) fn same_settings(&self, cached: &super::CacheEntry) -> bool {
        cached.title.as_ref() == Some(&self.settings.title)
            && cached.label.as_ref() == Some(&self.settings.label)
    }

    async fn find_issue(
        &self,
        c: &ForgeClient,
        for_write: bool,
    ) -> Result<IssueNumber, ForgeError> {
        let cached = self.cached();
        let mine = self.same_token(&cached);
        // The cached issue when it is open and ours but no longer recognised (a person edited
        // it): warned of if the head turns out to be another issue.
        let mut edited = None;
        if let Some(n) = cached
            .issue
            .map(IssueNumber)
            .filter(|_| self.same_settings(&cached))
        {
            let fresh = mine
                && cached.checked_at.is_some_and(|t| {
                    Utc::now()
                        .signed_duration_since(t)
                        .to_std()
                        .is_ok_and(|age| age < self.settings.recheck_after)
                });
            if fresh {
                return Ok(n);
            }
            self.login_with(c).await?;
            match c.issue(&self.settings.repo, n).await {
                Ok(issue) if self.is_session_issue(&issue) => {
                    self.adopt(&issue);
                    return Ok(n);
                }
                Ok(issue) => {
                    let member = self.is_member_issue(&issue);
                    let open = issue.state == IssueState::Open && issue.pull_request.is_none();
                    if open && !member && self.trusted_creator(&issue) {
                        edited = Some(n);
                    }
                    if member || issue.state == IssueState::Closed {
                        // Records posted there since the head moved are carried by the tidy.
                        self.note_stray(n, false, false);
                    }
                    tracing::info!(
                        "cached session issue {n} is {} or no longer matches; discovering again",
                        if issue.state == IssueState::Closed {
                            "closed"
                        } else {
                            "retitled"
                        }
                    )
                }
                Err(ForgeError::NotFound { .. }) => {
                    tracing::info!("cached session issue {n} is gone")
                }
                Err(e) => return Err(e),
            }
            self.forget_issue();
        }
        if let Some(issue) = self.discover(c).await? {
            self.adopt(&issue);
            self.warn_left_behind(edited, issue.number);
            return Ok(issue.number);
        }
        if for_write && self.settings.auto_init {
            let n = self.init_issue().await?.number;
            self.warn_left_behind(edited, n);
            return Ok(n);
        }
        if !for_write && let Some(closed) = self.latest_closed().await {
            // Closed and not yet succeeded: its history is still the session's history.
            tracing::warn!(
                "no open session issue in {}; reading the closed session issue {closed} (the \
                 next record opens a new one that links it)",
                self.settings.repo
            );
            return Ok(closed);
        }
        Err(ForgeError::NoSessionIssue(format!(
            "no open issue titled {:?} with label {:?} in {}; run `forgestate init` to create it",
            self.settings.title, self.settings.label, self.settings.repo
        )))
    }

    /// Warns that the cached issue `edited` (open, a trusted author's, but no longer recognised
    /// as the session issue) is left for `head`: the records this machine posted there are not
    /// read with the head's.
    fn warn_left_behind(&self, edited: Option<IssueNumber>, head: IssueNumber) {
        let Some(old) = edited.filter(|old| *old != head) else {
            return;
        };
        tracing::warn!(
            "this machine's session issue {old} is still open, but someone edited it so that it \
             is no longer recognised as the session issue; writing to {head} from now on: the \
             records posted to {old} are not read with {head}'s until its session title and \
             label are restored"
        );
    }

    /// An open issue (not a pull request) with the session title and label that a trusted
    /// author opened (see `authors.rs`; the login must be known: [`ForgeThread::login`]).
    pub(super) fn is_session_issue(&self, issue: &Issue) -> bool {
        self.looks_like_session_issue(issue) && self.trusted_creator(issue)
    }

    /// An open issue with [`ForgeThread::has_session_marks`], whoever opened it.
    fn looks_like_session_issue(&self, issue: &Issue) -> bool {
        issue.state == IssueState::Open && self.has_session_marks(issue)
    }

    /// An issue (not a pull request), open or closed, with the session title and label.
    pub(super) fn has_session_marks(&self, issue: &Issue) -> bool {
        issue.pull_request.is_none()
            && issue.title == self.settings.title
            && issue.has_label(&self.settings.label)
    }

    /// Warns, once per issue and process, that the head `issue` (open, ours) lost the session
    /// title or label: said by every machine that reads or writes it, not only by one that
    /// discovers it afresh.
    pub(super) fn warn_if_edited(&self, issue: &Issue) {
        if issue.state != IssueState::Open || self.looks_like_session_issue(issue) {
            return;
        }
        let first = EDITED
            .lock()
            .map(|mut w| w.insert(issue.number.0))
            .unwrap_or(true);
        if first {
            tracing::warn!(
                "session issue {} no longer has the session title {:?} and label {:?} (someone \
                 edited it); still using it: restore them so that other tools find it",
                issue.number,
                self.settings.title,
                self.settings.label
            );
        }
    }

    pub(super) fn adopt(&self, issue: &Issue) {
        self.note_forge(issue);
        self.note_count(issue);
        self.note_opened(issue);
        self.note_verdict(issue.number.0, true);
        self.remember(|s| {
            s.issue = Some(issue.number.0);
            s.issue_url = Some(issue.html_url.clone());
            s.checked_at = Some(Utc::now());
            s.title = Some(self.settings.title.clone());
            s.label = Some(self.settings.label.clone());
            let salt = uuid::Uuid::now_v7().simple().to_string();
            s.token = self.client.token_fingerprint(&salt).map(|f| (salt, f));
        });
    }

    /// Notices a forge recreated at the same URL, by the session issue it answers: a repository
    /// with another id, or the same issue number created at another time. What was remembered
    /// of the old forge's issues (members, tidied records, the head's creation) is dropped, and
    /// the read cache, whose thread names the forge ([`ForgeThread::forge_generation`]), is read anew.
    fn note_forge(&self, issue: &Issue) {
        let cached = self.cached();
        let repo_id = issue.repository.as_ref().map(|r| r.id);
        let other_repo = cached.repo_id.zip(repo_id).is_some_and(|(a, b)| a != b);
        let other_head = cached
            .opened
            .is_some_and(|(n, at, _)| n == issue.number.0 && at != issue.created_at);
        if other_repo || other_head {
            tracing::warn!(
                "{} is not the forge this machine read before (the repository id or the session \
                 issue's creation time changed): the forge was recreated; reading it afresh",
                self.settings.repo
            );
            if let Ok(mut chain) = self.chain.lock() {
                *chain = Default::default();
            }
            self.remember(|s| {
                s.members.clear();
                s.tidied.clear();
                s.opened = None;
            });
        }
        if repo_id.is_some() && repo_id != cached.repo_id {
            self.remember(|s| s.repo_id = repo_id);
        }
    }

    /// Names this forge's thread for the read cache: the repository id and the head's number
    /// and creation time, as last seen (`None` before any is known).
    pub(crate) fn forge_generation(&self) -> Option<String> {
        let cached = self.cached();
        let (n, at, _) = cached.opened?;
        Some(format!(
            "repository {}, #{n} opened {}",
            cached.repo_id.map_or("?".to_string(), |id| id.to_string()),
            crate::format::format_time(&at)
        ))
    }

    /// The ids of the repository's labels named like the session label, lowest first. Label
    /// names are not unique on the server.
    pub(super) async fn session_label_ids(
        &self,
        c: &ForgeClient,
    ) -> Result<Vec<LabelId>, ForgeError> {
        let limit = self.page_size(c).await?;
        let mut ids: Vec<LabelId> = c
            .labels(&self.settings.repo, limit)
            .await?
            .into_iter()
            .filter(|l| l.name == self.settings.label)
            .map(|l| l.id)
            .collect();
        ids.sort_by_key(|id| id.0);
        Ok(ids)
    }

    /// Every open session issue, lowest number first. The title and label are checked here,
    /// because the server drops a label filter naming an unknown label and returns everything.
    /// `exhaustive` skips the server's label filter (which misses issues while a label name
    /// briefly exists twice, as during racing `init`s) at the cost of listing every open issue.
    pub(super) async fn session_issues(
        &self,
        c: &ForgeClient,
        exhaustive: bool,
    ) -> Result<Vec<Issue>, ForgeError> {
        let repo = &self.settings.repo;
        let label = (!exhaustive).then_some(self.settings.label.as_str());
        let ((), login, listed) = tokio::join!(
            self.learn_page_size(c),
            self.login_with(c),
            c.open_issues(repo, label, self.known_page_size())
        );
        login?;
        let mut found: Vec<Issue> = listed?
            .into_iter()
            .filter(|i| self.looks_like_session_issue(i))
            .filter(|i| match self.trusted_creator(i) {
                true => true,
                false => {
                    self.look_alike(i);
                    false
                }
            })
            .collect();
        found.sort_by_key(|i| i.number);
        found.dedup_by_key(|i| i.number);
        Ok(found)
    }

    /// The head of the session thread (see `chain.rs`): among the open session issues, the one
    /// `chain/elect.rs` elects (no newer member continues it, open or closed), warning about
    /// the others, which are noted as strays to tidy. With none open, the issue the newest closed one
    /// forwards to (`Rotated: this session continues in #M`), when that issue links it back:
    /// a head a person retitled.
    pub(super) async fn discover(&self, c: &ForgeClient) -> Result<Option<Issue>, ForgeError> {
        let mut found = self.session_issues(c, false).await?;
        if found.is_empty() && self.session_label_ids(c).await?.len() > 1 {
            // With the label's name on two labels, the server's filter requires both, and the
            // session issue (which carries one) drops out. Look again without the filter rather
            // than conclude there is none and create a second session issue.
            tracing::warn!(
                "the label {:?} exists more than once in {}; delete the copies that are not on \
                 the session issue, or every cold start lists all open issues",
                self.settings.label,
                self.settings.repo
            );
            found = self.session_issues(c, true).await?;
        }
        if found.is_empty() {
            if let Some(head) = self.forwarded_head(c).await? {
                return Ok(Some(head));
            }
            return self.edited_head(c).await;
        }
        let election = self.elect(c, found).await?;
        let Some(head) = election.head else {
            return Ok(None);
        };
        for (old, _) in &election.continued {
            tracing::warn!(
                "session issue {} is open, but the thread continues past it in {} (it was \
                 reopened, or a rotation did not finish); writing to {}, and this machine's next \
                 record closes {} again",
                old.number,
                head.number,
                head.number,
                old.number
            );
            self.note_stray(old.number, true, true);
        }
        let heads = election.duplicates;
        if !heads.is_empty() {
            let others: Vec<String> = heads.iter().map(|i| i.number.to_string()).collect();
            tracing::warn!(
                "{} open session issues in {}; using {} and ignoring {} (duplicates: their \
                 records are carried to {} and they are closed)",
                heads.len() + 1,
                self.settings.repo,
                head.number,
                others.join(", "),
                head.number
            );
            for dup in &heads {
                self.note_stray(dup.number, true, false);
            }
        }
        Ok(Some(head))
    }

    /// The issue a rotation works on: the lowest open session issue a newer open one links
    /// directly (a rotation to finish, or the old issue reopened one link behind: rotating it
    /// again finishes the job), else the head. An old issue reopened deeper in the chain is
    /// never rotated (its successor is closed): the tidy closes it again.
    pub(super) async fn rotation_target(
        &self,
        c: &ForgeClient,
    ) -> Result<Option<Issue>, ForgeError> {
        let found = self.session_issues(c, false).await?;
        let election = self.elect(c, found).await?;
        if let Some((old, _)) = election.continued.into_iter().find(|(_, direct)| *direct) {
            return Ok(Some(old));
        }
        match election.head {
            Some(head) => Ok(Some(head)),
            None => self.discover(c).await,
        }
    }

    /// With no open session issue and none forwarded to: the lowest open issue the token's own
    /// account opened that kept the session title or the session label (a person changed the
    /// other in the web UI), else the one a trusted author opened that holds a trusted
    /// author's records (`proven.rs`: a person also rewrote its description). It is still the
    /// head, with one warning, rather than a reason to open a second thread beside it.
    async fn edited_head(&self, c: &ForgeClient) -> Result<Option<Issue>, ForgeError> {
        if self.login().await.is_err() {
            return Ok(None);
        }
        let limit = self.page_size(c).await?;
        let open = c.open_issues(&self.settings.repo, None, limit).await?;
        let mut found: Vec<&Issue> = (open.iter())
            .filter(|i| i.state == IssueState::Open && self.is_member_issue(i))
            .collect();
        found.sort_by_key(|i| i.number);
        let head = match found.first() {
            Some(head) => (*head).clone(),
            // Edited past the title, label and body: known by its author and records.
            None => match self.proven_head(c, &open).await? {
                Some(head) => head,
                None => return Ok(None),
            },
        };
        self.warn_if_edited(&head);
        self.note_verdict(head.number.0, true);
        Ok(Some(head))
    }

    /// With no open session issue: the open issue the newest closed session issue forwards to
    /// (its closing note), following up to a few notes, when that issue links back.
    async fn forwarded_head(&self, c: &ForgeClient) -> Result<Option<Issue>, ForgeError> {
        let Some(mut at) = self.latest_closed_issue().await else {
            return Ok(None);
        };
        for _ in 0..4 {
            let Some(next) = self.forwarded(c, &at).await? else {
                return Ok(None);
            };
            if next.state == IssueState::Open {
                tracing::warn!(
                    "session issue {} continues in {}, which no longer has the session title \
                     or label; using it",
                    at.number,
                    next.number
                );
                self.note_verdict(next.number.0, true);
                return Ok(Some(next));
            }
            at = next;
        }
        Ok(None)
    }

    /// The issue a closed session issue's closing note forwards to, when it links back.
    async fn forwarded(&self, c: &ForgeClient, issue: &Issue) -> Result<Option<Issue>, ForgeError> {
        let repo = &self.settings.repo;
        let since = issue.closed_at.map(|t| t - super::chain::MARGIN);
        let notes = c.comments(repo, issue.number, since).await?;
        self.login_with(c).await?;
        // Only a trusted author's closing note forwards: anyone may comment on a closed issue.
        let Some(next) = notes
            .comments
            .iter()
            .rev()
            .filter(|x| {
                x.user
                    .as_ref()
                    .is_some_and(|u| self.trusted_login(&u.login))
            })
            .find_map(|x| forwarded_to(&x.body))
            .filter(|m| *m > issue.number)
        else {
            return Ok(None);
        };
        let Some(found) = found(c.issue(repo, next).await)? else {
            return Ok(None);
        };
        let back = found.pull_request.is_none()
            && linked(&found.body) == Some(issue.number)
            && self.trusted_creator(&found);
        Ok(back.then_some(found))
    }
}
