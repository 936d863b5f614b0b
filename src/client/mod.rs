//! The verbs, over any store: post records, read the thread, find the latest, resume.
//!
//! This is the only place where the format and a store meet. It redacts and renders a record,
//! hands the body to the store, and on the way back parses what the store lists. Trust is
//! decided here too, so every backend applies the same rules. The durable path (`save`, the
//! outbox and `flush`) is in `durable.rs`.

mod durable;
mod linked;

use std::collections::BTreeSet;

use serde::Serialize;

pub use durable::{FlushReport, Outcome};

use crate::error::{Error, Result};
use crate::format::{Kind, Payload, Record, Renderer, redact};
use crate::outbox::Outbox;
use crate::resume::{Resume, ResumeMap};
use crate::scan::{Entry, Filter, Scan, Trust, add_pending, scan};
use crate::store::{BackendFailure, Comment, Effort, StoreError, Thread};

/// Where a posted record went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Posted {
    /// The record's own id.
    pub id: Option<String>,
    /// The store's comment id.
    pub comment_id: u64,
    /// The comment's web address, where the store has one.
    pub url: Option<String>,
    /// The store, as [`Thread::describe`] puts it.
    pub store: String,
    pub record: Record,
}

/// The verbs over one thread.
pub struct Client<T> {
    thread: T,
    renderer: Renderer,
    resume: ResumeMap,
    trusted_authors: BTreeSet<String>,
    redact_keys: Vec<String>,
    outbox: Option<Outbox>,
    /// Set when a flush just found the store unreachable: reads then make one quick attempt
    /// instead of spending the retry budget before answering offline.
    unreachable: std::sync::atomic::AtomicBool,
}

impl<T: Thread> Client<T> {
    pub fn new(thread: T, renderer: Renderer, resume: ResumeMap) -> Client<T> {
        Client {
            thread,
            renderer,
            resume,
            trusted_authors: BTreeSet::new(),
            redact_keys: crate::format::DEFAULT_REDACT_KEYS
                .iter()
                .map(|k| k.to_string())
                .collect(),
            outbox: None,
            unreachable: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Trust these authors on top of the store's own identity.
    pub fn with_trusted_authors(mut self, authors: impl IntoIterator<Item = String>) -> Client<T> {
        self.trusted_authors.extend(authors);
        self
    }

    /// Redact the values of these keys (case-insensitive, any depth) before rendering.
    pub fn with_redact_keys(mut self, keys: Vec<String>) -> Client<T> {
        self.redact_keys = keys;
        self
    }

    /// Spool records the store cannot take to this outbox, and read them back as pending.
    pub fn with_outbox(mut self, outbox: Outbox) -> Client<T> {
        self.outbox = Some(outbox);
        self
    }

    pub fn thread(&self) -> &T {
        &self.thread
    }

    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    pub fn outbox(&self) -> Option<&Outbox> {
        self.outbox.as_ref()
    }

    /// Redacts configured keys in the data or metrics, noting the count in the record.
    pub fn prepare(&self, mut record: Record) -> Record {
        let value = match &mut record.payload {
            Payload::Checkpoint { data, .. } => data,
            Payload::Health { metrics, .. } => metrics,
        };
        let count = redact(value, &self.redact_keys);
        if count > 0 {
            record.redacted = Some(record.redacted.unwrap_or(0) + count);
        }
        record
    }

    /// Renders and posts one record now, with no outbox: the strict path. Nothing is posted
    /// unless the body reads back as the record. See [`Client::save`] for the durable path.
    pub async fn post(&self, record: Record) -> Result<Posted> {
        let record = self.prepare(record);
        let body = self.renderer.render(&record)?;
        let comment = self.thread.append(&body).await?;
        Ok(self.posted(record, comment))
    }

    fn posted(&self, record: Record, comment: Comment) -> Posted {
        tracing::info!(comment = comment.id, record = ?record.id, "posted {}", record.kind().name());
        Posted {
            id: record.id.clone(),
            comment_id: comment.id,
            url: comment.url,
            store: self.thread.describe(),
            record,
        }
    }

    /// Who counts as an author of records.
    pub async fn trust(&self) -> Result<Trust> {
        if self.thread.trusts_everyone() {
            return Ok(Trust::Everyone);
        }
        let mut set = self.trusted_authors.clone();
        set.insert(self.thread.whoami().await?);
        Ok(Trust::Only(set))
    }

    /// Reads and classifies the whole thread, plus this machine's pending records. When the
    /// store cannot be reached and there is an outbox, answers from the outbox alone, marked
    /// `offline`.
    pub async fn scan(&self) -> Result<Scan> {
        let effort = if self.unreachable.load(std::sync::atomic::Ordering::Relaxed) {
            Effort::Quick
        } else {
            Effort::Full
        };
        let read = match self.thread.list_with(None, effort).await {
            Ok(listing) => self.trust().await.map(|trust| scan(listing, &trust)),
            Err(e) => Err(e.into()),
        };
        let mut out = match read {
            Ok(s) => s,
            Err(Error::Store(
                e @ StoreError::Backend {
                    kind: BackendFailure::Unavailable,
                    ..
                },
            )) if self.outbox.is_some() => {
                let warning = format!(
                    "the forge cannot be read ({e}); answering from this machine's outbox only"
                );
                Scan {
                    offline: true,
                    warnings: vec![warning],
                    ..Scan::default()
                }
            }
            Err(e) => return Err(e),
        };
        if let Some(outbox) = &self.outbox {
            let spooled = outbox.pending().map_err(|e| {
                Error::Io(format!(
                    "cannot read the outbox {}: {e}",
                    outbox.dir().display()
                ))
            })?;
            add_pending(
                &mut out,
                spooled.into_iter().map(|s| (s.spooled_at, s.body)),
            );
        }
        Ok(out)
    }

    /// Records matching `filter`, oldest first; with `limit`, only the newest `limit` of them.
    /// Rejected comments and warnings are passed through unfiltered.
    pub async fn list(&self, filter: &Filter, limit: Option<usize>) -> Result<Scan> {
        let all = self.scan().await?;
        let mut all = self.follow_links(all, |e| filter.matches(e)).await?;
        all.entries.retain(|e| filter.matches(e));
        if all.offline && all.entries.is_empty() {
            return Err(offline_unknown("records matching this filter"));
        }
        if let Some(limit) = limit {
            let skip = all.entries.len().saturating_sub(limit);
            all.entries.drain(..skip);
        }
        Ok(all)
    }

    /// The newest record matching `filter`, in thread order, plus any store warnings.
    pub async fn latest(&self, filter: &Filter) -> Result<(Option<Entry>, Vec<String>)> {
        let all = self.scan().await?;
        let all = self.follow_links(all, |e| filter.matches(e)).await?;
        let offline = all.offline;
        let newest = all.entries.into_iter().rev().find(|e| filter.matches(e));
        if offline && newest.is_none() {
            return Err(offline_unknown("a matching record"));
        }
        Ok((newest, all.warnings))
    }

    /// Where `agent` should pick up `session`: its newest checkpoint mapped through the resume
    /// map, or a fresh start. Never a fresh start for a forge that could not be read.
    pub async fn resume(&self, agent: &str, session: &str) -> Result<(Resume, Vec<String>)> {
        let filter = Filter {
            agent: Some(agent.to_string()),
            session: Some(session.to_string()),
            kind: Some(Kind::Checkpoint),
            since: None,
        };
        let all = self.scan().await?;
        let all = self.follow_links(all, |e| filter.matches(e)).await?;
        let offline = all.offline;
        let newest = all.entries.into_iter().rev().find(|e| filter.matches(e));
        if offline && newest.is_none() {
            return Err(offline_unknown(&format!(
                "agent {agent} in session {session}"
            )));
        }
        let mut resume = Resume::from_checkpoint(&self.resume, newest);
        resume.offline = offline;
        Ok((resume, all.warnings))
    }
}

fn offline_unknown(what: &str) -> Error {
    Error::Offline(format!(
        "the forge cannot be read and this machine knows nothing about {what}; try again when \
         the forge is reachable (not answering a fresh start for a thread that could not be read)"
    ))
}
