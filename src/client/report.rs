//! The supervisor's verbs on the client: read the thread once, then answer with the pure
//! functions of [`crate::report`].

use serde::Serialize;

use super::{Client, ForkQuery, HistoryQuery, Outcome};
use crate::error::Result;
use crate::format::Record;
use crate::report::{History, StatusPolicy, StatusRow, fork_over, history, status};
use crate::scan::Filter;
use crate::store::Thread;

/// What `status` answers.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Status {
    /// One row per (agent, session), stalled first: its verdict (alive, warning, stalled,
    /// paused, completed), the age of its newest record, last phase and resume point, last
    /// health status and metrics, next step and blockers.
    pub rows: Vec<StatusRow>,
    /// How many rows are stalled.
    pub stalled: usize,
    /// The store's clock when the thread was read (RFC 3339): ages are measured on it.
    #[serde(serialize_with = "crate::format::ser_time")]
    #[schemars(with = "String")]
    pub now: chrono::DateTime<chrono::Utc>,
    /// The store could not be read: the rows are judged from this machine's read cache and outbox.
    pub offline: bool,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    pub complete: bool,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

impl<T: Thread> Client<T> {
    /// Who is alive: every (agent, session) matching `filter`, judged under `policy` on the
    /// store's clock (a forge's, from its `Date` header).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::{Client, format::Record, report::{StatusPolicy, Verdict}, scan::Filter};
    /// use serde_json::json;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let client = Client::local_as(dir.path(), "me")?;
    /// client.save(Record::checkpoint("worker-1", "s1", "clone_complete", json!({}))?).await.posted()?;
    /// client.save(Record::health("worker-2", "s1", "Paused", json!({"queue": 0}), None)?).await.posted()?;
    ///
    /// let status = client.status(&Filter::default(), &StatusPolicy::default()).await?;
    /// let verdicts: Vec<_> = status.rows.iter().map(|r| (r.agent.as_str(), r.verdict)).collect();
    /// assert_eq!(verdicts, [("worker-1", Verdict::Alive), ("worker-2", Verdict::Paused)]);
    /// assert_eq!(status.rows[0].resume_point.as_deref(), Some("start"));
    /// assert_eq!(status.stalled, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn status(&self, filter: &Filter, policy: &StatusPolicy) -> Result<Status> {
        Ok(self.status_with_entries(filter, policy).await?.0)
    }

    /// [`Client::status`], with the records it was computed from (in thread order), for what
    /// else a caller draws from the same read (the published timeline).
    pub(crate) async fn status_with_entries(
        &self,
        filter: &Filter,
        policy: &StatusPolicy,
    ) -> Result<(Status, Vec<crate::scan::Entry>)> {
        let mut scan = self.list(filter, None).await?;
        // Ages on one consistent clock, even when the forge's Date disagrees with its own
        // comment times (records from the future).
        let now = self.clock(&mut scan).now;
        let rows = status(&scan.entries, now, policy, &self.resume);
        let status = Status {
            stalled: rows
                .iter()
                .filter(|r| r.verdict == crate::report::Verdict::Stalled)
                .count(),
            rows,
            now,
            offline: scan.offline,
            complete: scan.complete(),
            warnings: scan.warnings,
        };
        Ok((status, scan.entries))
    }

    /// Every record of `query.session`, optionally of agents matching `query.agent` only, with
    /// the JSON changes between consecutive checkpoints when `query.diff`.
    pub async fn history(&self, query: &HistoryQuery) -> Result<History> {
        let session = query.session.as_str();
        // The session is found by its name as written (one holding a secret too), then every
        // record is scrubbed for the answer, the session's own keeping the name asked for until
        // the history is made of them; the answer names it scrubbed.
        let (all, trust) = self.scan_unscrubbed(crate::mirror::Keep::All).await?;
        let raw = (self.list_from(all, trust.as_ref(), &Filter::default(), None, false)).await?;
        let asked: Vec<bool> = raw
            .entries
            .iter()
            .map(|e| e.record.session == session)
            .collect();
        let mut scan = self.scrubbed(raw);
        for (e, asked) in scan.entries.iter_mut().zip(asked) {
            if asked {
                e.record.session = session.to_string();
            }
        }
        let agent = query.agent.as_deref();
        let mut history = history(&scan.entries, session, agent, query.diff, &self.resume);
        self.redactor.redact_text(&mut history.session);
        history.complete = scan.complete();
        let mut warnings = scan.warnings;
        warnings.append(&mut history.warnings);
        history.warnings = self.scrub_warnings(warnings);
        Ok(history)
    }

    /// The checkpoint that would start `query.new_session` from `query.session`'s state at
    /// record `query.at` (its newest checkpoint by default), with `Parent:` naming that record.
    /// See [`crate::report::fork_over`]; [`Client::fork`] also saves it.
    pub async fn fork_record(&self, query: &ForkQuery) -> Result<Record> {
        let scan = self.list(&Filter::default(), None).await?;
        let q = query;
        fork_over(
            &scan.entries,
            &q.session,
            q.at.as_deref(),
            &q.new_session,
            q.agent.as_deref(),
            q.force,
        )
    }

    /// [`Client::fork_record`], saved like any record ([`Client::save`]).
    pub async fn fork(&self, query: &ForkQuery) -> Result<Outcome> {
        let record = self.fork_record(query).await?;
        Ok(self.save(record).await)
    }
}
