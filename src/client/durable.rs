//! The durable path: never lose a record, never post one twice.
//!
//! `save` posts with the full retry budget; when that fails, for whatever reason, the rendered
//! body goes to the outbox and the caller hears "spooled" instead of an error. While the outbox
//! holds anything, a new record goes in behind it (order is kept) and only one quick flush
//! attempt is made, so with the forge down only the first record pays the retry budget.
//! `flush` posts waiting bodies oldest first under the outbox's flush lock, skipping any body
//! the thread already holds (a post that was committed before its answer was lost).

use std::collections::HashSet;
use std::path::PathBuf;

use chrono::Duration as Span;

use super::{Client, Posted};
use crate::error::Error;
use crate::format::Record;
use crate::store::{Comment, Effort, Thread};

/// How far before the oldest waiting entry to look for copies already in the thread.
const SKEW: Span = Span::minutes(10);

/// What became of a record handed to [`Client::save`].
#[derive(Debug)]
pub enum Outcome {
    /// It is in the thread.
    Posted(Posted),
    /// It is safe in the outbox and will be posted by a later flush.
    Spooled {
        record: Record,
        path: PathBuf,
        /// Why it could not be posted now.
        cause: Error,
    },
    /// It could not be stored anywhere (or was invalid to begin with).
    Failed(Error),
}

impl Outcome {
    /// The posted record, or the reason it was not posted.
    pub fn posted(self) -> Result<Posted, Error> {
        match self {
            Outcome::Posted(p) => Ok(p),
            Outcome::Spooled { cause, .. } => Err(cause),
            Outcome::Failed(e) => Err(e),
        }
    }
}

/// What a flush did.
#[derive(Debug, Default)]
pub struct FlushReport {
    /// Entries posted now, with their comments, in order.
    pub posted: Vec<(PathBuf, Comment)>,
    /// Entries found already in the thread and removed without posting.
    pub already_posted: usize,
    /// Entries still waiting.
    pub left: usize,
    /// Another process was flushing, so this one did not.
    pub busy: bool,
    /// Why the flush stopped early.
    pub error: Option<Error>,
}

impl<T: Thread> Client<T> {
    /// Posts a record, or spools it when the store cannot take it. Never panics, never loses a
    /// record that reached the outbox, never posts one twice.
    pub async fn save(&self, record: Record) -> Outcome {
        let record = self.prepare(record);
        let body = match self.renderer.render(&record) {
            Ok(b) => b,
            Err(e) => return Outcome::Failed(e.into()),
        };
        let Some(outbox) = &self.outbox else {
            return match self.thread.append(&body).await {
                Ok(c) => Outcome::Posted(self.posted(record, c)),
                Err(e) => Outcome::Failed(e.into()),
            };
        };
        if !outbox.is_empty() {
            // Keep order: queue behind what is waiting, then try once, quickly.
            let path = match outbox.push(&body) {
                Ok(p) => p,
                Err(io) => return self.last_resort(record, &body, io).await,
            };
            let report = self.flush(Effort::Quick).await;
            if let Some((_, c)) = report.posted.iter().find(|(p, _)| *p == path) {
                return Outcome::Posted(self.posted(record, c.clone()));
            }
            let cause = report.error.unwrap_or_else(|| {
                Error::Offline(format!(
                    "{} earlier record(s) are still waiting in the outbox{}",
                    report.left.saturating_sub(1),
                    if report.busy {
                        " while another process flushes them"
                    } else {
                        ""
                    }
                ))
            });
            return Outcome::Spooled {
                record,
                path,
                cause,
            };
        }
        match self.thread.append_with(&body, Effort::Full).await {
            Ok(c) => Outcome::Posted(self.posted(record, c)),
            Err(e) => match outbox.push(&body) {
                Ok(path) => Outcome::Spooled {
                    record,
                    path,
                    cause: e.into(),
                },
                Err(io) => Outcome::Failed(Error::Io(format!(
                    "{e}; and the outbox {} cannot be written either ({io}): the record was not \
                     stored anywhere",
                    outbox.dir().display()
                ))),
            },
        }
    }

    /// The outbox cannot be written: posting directly is the only place left.
    async fn last_resort(&self, record: Record, body: &str, io: std::io::Error) -> Outcome {
        match self.thread.append_with(body, Effort::Full).await {
            Ok(c) => Outcome::Posted(self.posted(record, c)),
            Err(e) => Outcome::Failed(Error::Io(format!(
                "cannot write the outbox ({io}) and cannot post ({e}): the record was not stored"
            ))),
        }
    }

    /// Posts waiting outbox entries, oldest first. `Quick` makes one short attempt and gives up
    /// at once if another process holds the flush lock; `Full` uses the retry budget and waits
    /// for the lock.
    pub async fn flush(&self, effort: Effort) -> FlushReport {
        let mut report = FlushReport::default();
        let Some(outbox) = &self.outbox else {
            return report;
        };
        let lock = match effort {
            Effort::Quick => outbox.try_lock(),
            Effort::Full => outbox.lock(std::time::Duration::from_secs(300)).await,
        };
        let _lock = match lock {
            Ok(Some(l)) => l,
            Ok(None) => {
                report.busy = true;
                report.left = outbox.len();
                return report;
            }
            Err(e) => {
                report.error = Some(Error::Io(format!(
                    "cannot lock the outbox {}: {e}",
                    outbox.dir().display()
                )));
                report.left = outbox.len();
                return report;
            }
        };
        // Entries pushed while we flush are picked up by the next round.
        for _round in 0..1000 {
            let entries = match outbox.pending() {
                Ok(e) if e.is_empty() => break,
                Ok(e) => e,
                Err(e) => {
                    report.error = Some(Error::Io(format!("cannot read the outbox: {e}")));
                    break;
                }
            };
            let since = entries[0].spooled_at - SKEW;
            let listing = match self.thread.list_with(Some(since), effort).await {
                Ok(listing) => listing,
                Err(e) => {
                    report.error = Some(e.into());
                    break;
                }
            };
            // Only our own comments can be earlier attempts (the login is cached after one look).
            let me = self.thread.whoami().await.ok();
            let present: HashSet<String> = listing
                .comments
                .into_iter()
                .filter(|c| me.as_ref().is_none_or(|m| *m == c.author))
                .map(|c| c.body)
                .collect();
            for entry in &entries {
                if present.contains(&entry.body) {
                    report.already_posted += 1;
                } else {
                    match self.thread.append_with(&entry.body, effort).await {
                        Ok(c) => report.posted.push((entry.path.clone(), c)),
                        Err(e) => {
                            report.error = Some(e.into());
                            break;
                        }
                    }
                }
                if let Err(e) = outbox.remove(entry) {
                    // The next flush finds the body in the thread and removes it then.
                    tracing::warn!(
                        "cannot remove flushed outbox entry {}: {e}",
                        entry.path.display()
                    );
                }
            }
            if report.error.is_some() {
                break;
            }
        }
        report.left = outbox.len();
        if report
            .error
            .as_ref()
            .is_some_and(|e| e.category() == crate::error::Category::Io)
        {
            self.unreachable
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        report
    }
}
