//! The verbs, over any store: post records, read the thread, find the latest, resume.
//!
//! This is the only place where the format and a store meet. It renders a record, hands the body
//! to the store, and on the way back parses what the store lists. Trust is decided here too, so
//! every backend applies the same rules.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::error::Result;
use crate::format::{Kind, Record, Renderer};
use crate::resume::{Resume, ResumeMap};
use crate::scan::{Entry, Filter, Scan, Trust, scan};
use crate::store::{Comment, Thread};

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
}

impl<T: Thread> Client<T> {
    pub fn new(thread: T, renderer: Renderer, resume: ResumeMap) -> Client<T> {
        Client {
            thread,
            renderer,
            resume,
            trusted_authors: BTreeSet::new(),
        }
    }

    /// Trust these authors on top of the store's own identity.
    pub fn with_trusted_authors(mut self, authors: impl IntoIterator<Item = String>) -> Client<T> {
        self.trusted_authors.extend(authors);
        self
    }

    pub fn thread(&self) -> &T {
        &self.thread
    }

    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// Renders and posts one record. Nothing is posted unless the body reads back as `record`.
    pub async fn post(&self, record: Record) -> Result<Posted> {
        let body = self.renderer.render(&record)?;
        let Comment { id, url, .. } = self.thread.append(&body).await?;
        tracing::info!(comment = id, record = ?record.id, "posted {}", record.kind().name());
        Ok(Posted {
            id: record.id.clone(),
            comment_id: id,
            url,
            store: self.thread.describe(),
            record,
        })
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

    /// Reads and classifies the whole thread.
    pub async fn scan(&self) -> Result<Scan> {
        let listing = self.thread.list(None).await?;
        Ok(scan(listing, &self.trust().await?))
    }

    /// Records matching `filter`, oldest first; with `limit`, only the newest `limit` of them.
    /// Rejected comments and warnings are passed through unfiltered.
    pub async fn list(&self, filter: &Filter, limit: Option<usize>) -> Result<Scan> {
        let mut all = self.scan().await?;
        all.entries.retain(|e| filter.matches(e));
        if let Some(limit) = limit {
            let skip = all.entries.len().saturating_sub(limit);
            all.entries.drain(..skip);
        }
        Ok(all)
    }

    /// The newest record matching `filter`, in thread order, plus any store warnings.
    pub async fn latest(&self, filter: &Filter) -> Result<(Option<Entry>, Vec<String>)> {
        let all = self.scan().await?;
        let newest = all.entries.into_iter().rev().find(|e| filter.matches(e));
        Ok((newest, all.warnings))
    }

    /// Where `agent` should pick up `session`: its newest checkpoint mapped through the resume
    /// map, or a fresh start.
    pub async fn resume(&self, agent: &str, session: &str) -> Result<(Resume, Vec<String>)> {
        let filter = Filter {
            agent: Some(agent.to_string()),
            session: Some(session.to_string()),
            kind: Some(Kind::Checkpoint),
            since: None,
        };
        let (newest, warnings) = self.latest(&filter).await?;
        Ok((Resume::from_checkpoint(&self.resume, newest), warnings))
    }
}
