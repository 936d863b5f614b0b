//! The read verbs that answer with one record: `latest` and `resume`. Both warn when a comment
//! newer than their answer could not be read, since that comment may have been the answer.

use std::collections::BTreeSet;
use std::sync::Mutex;

use super::takeover::refuse_fenced;
use super::{Client, Latest, Resumed, offline_unknown};
use crate::error::{Error, Result};
use crate::format::{GLOB_CHARS, Kind};
use crate::mirror::Keep;
use crate::report::{conflict_warning, facts};
use crate::resume::{Resume, did_you_mean};
use crate::scan::{Entry, Filter, Scan, Trust, edited_warning, unread_newer};
use crate::store::Thread;

impl<T: Thread> Client<T> {
    /// The newest record matching `filter`, in thread order, plus any store warnings.
    /// Warns of comments newer than the answer that could not be read (see [`unread_newer`]).
    pub async fn latest(&self, filter: &Filter) -> Result<Latest> {
        let wanted = |e: &Entry| filter.matches(e);
        // One exact agent and session: the pair is read whole (the same one request), so the
        // fencing rule can tell this client's writer whether it still owns the session.
        let exact = match (&filter.agent, &filter.session) {
            (Some(a), Some(s)) if !a.contains(GLOB_CHARS) && !s.contains(GLOB_CHARS) => {
                Some((a.as_str(), s.as_str()))
            }
            _ => None,
        };
        let in_pair =
            |e: &Entry| exact.is_some_and(|(a, s)| e.record.agent == a && e.record.session == s);
        // The filter reads the names as written; only what is answered is scrubbed.
        let (all, trust) = match exact {
            // Boxed: two reads in one future would double its size on every caller's stack.
            Some(names) => {
                Box::pin(self.scan_unscrubbed(Keep::Pair(&in_pair, &wanted, names))).await?
            }
            None => Box::pin(self.scan_unscrubbed(Keep::Newest(&wanted))).await?,
        };
        let mut all = self.follow_links(all, |e| filter.matches(e)).await?;
        crate::scan::fence(&mut all.entries);
        if let Some((agent, session)) = exact {
            refuse_fenced(&all.entries, agent, session, self.reading_writer())?;
        }
        let offline = all.offline;
        let record = all
            .entries
            .iter()
            .rev()
            .find(|e| !e.fenced && filter.matches(e))
            .cloned()
            .map(|e| self.scrub_entry(e));
        if offline && record.is_none() {
            return Err(offline_unknown("a matching record"));
        }
        let stale = stale_warnings(&all, trust.as_ref(), record.as_ref(), |kind, agent| {
            filter.wants(kind, agent)
        });
        all.warnings.extend(stale);
        Ok(Latest {
            record,
            offline,
            complete: all.complete(),
            warnings: self.scrub_warnings(all.warnings),
        })
    }

    /// Where `agent` should pick up `session`: its newest checkpoint mapped through the resume
    /// map, or a fresh start. Never a fresh start for a forge that could not be read.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::{Client, format::Record, resume::FRESH_START};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let client = Client::local_as(dir.path(), "me")?;
    /// let first = client.resume("implementation-worker", "s1").await?;
    /// assert_eq!(first.resume.phase, FRESH_START);
    /// assert!(first.resume.checkpoint.is_none());
    ///
    /// let record = Record::checkpoint("implementation-worker", "s1", "clone_complete",
    ///     serde_json::json!({"branch_name": "fix-42"}))?;
    /// client.save(record).await.posted()?;
    /// let later = client.resume("implementation-worker", "s1").await?;
    /// assert_eq!(later.resume.phase, "clone_complete");
    /// assert_eq!(later.resume.resume_point, "phase_2_subtasks");
    /// let state = later.resume.implementation_state(None);
    /// assert_eq!(state.branch_name.as_deref(), Some("fix-42"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// `agent` and `session` match exactly, never as globs: `w[1]` never resumes from `w1`'s
    /// state. A name with glob characters that matches nothing is a usage error pointing to
    /// `list` and `latest` (writes refuse such names, so it could only ever be a fresh start;
    /// a record an older writer posted under such a name still resumes). A fresh start while
    /// the agent has checkpoints in other sessions, or the session has other agents', warns
    /// with the closest names ("did you mean"). Warns of comments newer than the answer that
    /// could not be read.
    pub async fn resume(&self, agent: &str, session: &str) -> Result<Resumed> {
        self.resume_checked(agent, session, Some(self.reading_writer()))
            .await
    }

    /// [`Client::resume`] as `writer`: fails with [`Error::Fenced`] when another writer took
    /// the session over after `writer` wrote to it.
    pub async fn resume_as(&self, agent: &str, session: &str, writer: &str) -> Result<Resumed> {
        self.resume_checked(agent, session, Some(writer)).await
    }

    /// [`Client::resume`]; with `fenced_as`, that writer gets [`Error::Fenced`] instead of an
    /// answer when another one took the session from it.
    pub(super) async fn resume_checked(
        &self,
        agent: &str,
        session: &str,
        fenced_as: Option<&str>,
    ) -> Result<Resumed> {
        // Names are written in NFC; `é` typed as `e` and an accent resumes the same session.
        let (agent, session) = (crate::format::nfc(agent), crate::format::nfc(session));
        let (agent, session) = (agent.as_ref(), session.as_ref());
        let seen = Mutex::new(BTreeSet::<(String, String)>::new());
        let mine = |e: &Entry| {
            let checkpoint = e.record.kind() == Kind::Checkpoint;
            if checkpoint && let Ok(mut seen) = seen.lock() {
                seen.insert((e.record.agent.clone(), e.record.session.clone()));
            }
            checkpoint && e.record.agent == agent && e.record.session == session
        };
        let read = Box::pin(self.read_pair(agent, session)).await?;
        if let Ok(mut seen) = seen.lock() {
            seen.extend(read.names);
        }
        let (mut all, trust) = (read.scan, read.trust);
        all.entries = read.entries;
        let mut all = self.follow_links(all, mine).await?;
        crate::scan::fence(&mut all.entries);
        if let Some(writer) = fenced_as {
            refuse_fenced(&all.entries, agent, session, writer)?;
        }
        let offline = all.offline;
        // The pair is found by its names as written, then scrubbed: a session whose name holds
        // a secret still resumes (docs/redaction.md), answered with the name scrubbed.
        let pair: Vec<Entry> = all
            .entries
            .iter()
            .filter(|e| e.record.agent == agent && e.record.session == session)
            .map(|e| self.scrub_entry(e.clone()))
            .collect();
        let session_facts = facts(&pair);
        let newest = pair
            .iter()
            .rev()
            .find(|e| e.record.kind() == Kind::Checkpoint && !e.fenced)
            .cloned();
        if offline && newest.is_none() {
            return Err(offline_unknown(&format!(
                "agent {agent} in session {session}"
            )));
        }
        if newest.is_none() {
            for (what, name) in [("agent", agent), ("session", session)] {
                if name.contains(GLOB_CHARS) {
                    return Err(Error::usage(format!(
                        "{what} {name:?} has glob characters, but resume takes exact names; \
                         for globs use list or latest (e.g. `forgestate list --{what} '{name}'`)"
                    )));
                }
            }
            let mut names = seen.into_inner().unwrap_or_default();
            names.extend(
                all.entries
                    .iter()
                    .filter(|e| e.record.kind() == Kind::Checkpoint)
                    .map(|e| (e.record.agent.clone(), e.record.session.clone())),
            );
            all.warnings.extend(did_you_mean(agent, session, &names));
        }
        let stale = stale_warnings(&all, trust.as_ref(), newest.as_ref(), |kind, a| {
            kind == Kind::Checkpoint && a == agent
        });
        all.warnings.extend(stale);
        all.warnings
            .extend(newest.as_ref().and_then(edited_warning));
        all.warnings.extend(
            session_facts
                .conflicts
                .iter()
                .map(|c| conflict_warning(agent, session, c)),
        );
        // Each fenced record is named with the takeover that fenced it: the newest one before
        // it, not a later one (its own writer may have taken the session back since).
        let mut fencer = None;
        for e in &pair {
            match crate::scan::Takeover::of(e) {
                Some(t) => fencer = Some(t),
                None if e.fenced => all
                    .warnings
                    .push(crate::scan::fenced_warning(e, fencer.as_ref())),
                None => {}
            }
        }
        // The newest record of the pair this client read back: its next record's `Parent:`.
        if let Some(id) = &session_facts.latest_id {
            self.known.set(agent, session, id.clone());
        }
        let mut resume = Resume::from_checkpoint(&self.resume, newest);
        resume.offline = offline;
        Ok(Resumed {
            resume,
            session: session_facts,
            complete: all.complete(),
            // The warnings quote names as written ("did you mean session …?").
            warnings: self.scrub_warnings(all.warnings),
        })
    }
}

/// Warnings for unreadable comments newer than `answer`; none for an answer from the outbox,
/// which is newer than every comment, nor when the thread was not read.
pub(super) fn stale_warnings(
    all: &Scan,
    trust: Option<&Trust>,
    answer: Option<&Entry>,
    wanted: impl Fn(Kind, &str) -> bool,
) -> Vec<String> {
    match (trust, answer) {
        (None, _) => Vec::new(),
        (Some(_), Some(e)) if e.comment.pending => Vec::new(),
        (Some(trust), answer) => unread_newer(all, trust, answer, wanted),
    }
}
