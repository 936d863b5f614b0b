//! The durability layer: never lose a record, never post one twice, never let one block the rest.
//!
//! [`Durable`] wraps any [`Thread`] with this machine's [`Outbox`] and owns the whole policy:
//!
//! - **Save.** A body is posted with the full retry budget; when that fails for a reason a retry
//!   may fix (the forge is down, a setup problem being fixed), it goes to the outbox and the caller
//!   hears "spooled". A body the forge refuses for good (400, 413, 422) goes straight to the dead
//!   letters, so it is kept but never blocks anything. While the outbox holds anything, a new body
//!   is queued behind it, so order is kept.
//! - **Drain.** Every command starts by draining the outbox for at most
//!   [`DrainPolicy::budget`]: each request is one attempt with the normal request timeout, and no
//!   request starts after the budget, except that the first listing and the first post always
//!   run, so a forge that answers at all, however slowly, drains at least one record per command.
//!   A command therefore waits at most `budget + 2 × request timeout` for the backlog, and a
//!   forge's wait budget (`[forge] wait`, 3 s) caps what a forge that does not answer costs the
//!   whole command. After a failed drain, later commands' reads make one attempt for a backoff
//!   (15 s, doubling, capped at [`DrainPolicy::max_backoff`]), but every command still drains,
//!   so the first one after the forge comes back posts the backlog.
//! - **Dead letters.** An entry the forge refuses, or a file that is not a valid record (empty,
//!   truncated, not UTF-8, someone else's text), is moved to `dead/` beside the queue with the
//!   reason, and the queue moves on.
//! - **Read.** The outbox is read *before* the thread, so a record another process flushes in
//!   between is seen in one or the other (twice at worst, which dedupe by record `Id` absorbs).
//!   When the forge cannot be read, the answer comes from the outbox alone, marked offline.
//!
//! Flushes hold the outbox's lock, skip any entry the thread already holds (a post committed
//! before its answer was lost), and take an entry out of the queue only after its post is
//! confirmed. A save writes ahead: its body is in the queue, under the lock, before the post
//! starts. A posted entry moves to the landed ([`LANDED_DIR`]), which answers this
//! machine's offline reads beside the read cache until a read of the thread holds it, so a
//! machine's own records, posted or spooled, are part of every answer it gives, whatever point
//! a kill -9 hit.

mod flush;
mod meta;
mod outbox;
mod read;
#[cfg(test)]
mod read_tests;
mod survey;
mod validate;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::Duration as Span;
use chrono::Utc;

pub use meta::{DeadLetter, DrainState, Origin};
pub use outbox::{DEAD_DIR, LANDED_DIR, Outbox, Spooled};
pub use survey::{OutboxSummary, survey};
pub use validate::Validator;

use flush::Drain;
pub(crate) use read::OUTBOX_ONLY;

use crate::error::{Category, Error, Result};
use crate::progress::ProgressHook;
use crate::store::{AppendGuard, Comment, Effort, Listing, StoreError, Thread};

/// How far before the oldest waiting entry to look for copies already in the thread.
pub(crate) const SKEW: Span = Span::minutes(10);
/// How long the `flush` verb waits for another flusher to finish.
pub(crate) const FLUSH_PATIENCE: Duration = Duration::from_secs(300);

/// How much of each command may go to draining the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainPolicy {
    /// No new request starts after this much draining (the first listing and post always run).
    pub budget: Duration,
    /// The longest a failed drain makes later commands' reads try once instead of retrying.
    pub max_backoff: Duration,
}

impl Default for DrainPolicy {
    fn default() -> Self {
        DrainPolicy {
            budget: Duration::from_secs(crate::defaults::DRAIN_BUDGET_SECS),
            max_backoff: Duration::from_secs(crate::defaults::DRAIN_MAX_BACKOFF_SECS),
        }
    }
}

/// What became of a body handed to [`Durable::save`].
#[derive(Debug)]
pub enum Saved {
    /// It is in the thread.
    Posted(Comment),
    /// It is safe in the outbox and will be posted by a later command or flush.
    Spooled {
        /// The outbox entry.
        path: PathBuf,
        /// Why it could not be posted now.
        cause: Error,
    },
}

/// What a flush or drain did.
#[derive(Debug, Default)]
pub struct FlushReport {
    /// Entries posted now, with their comments, in order.
    pub posted: Vec<(PathBuf, Comment)>,
    /// Entries found already in the thread and removed without posting.
    pub already_posted: usize,
    /// Entries the forge refused for good, moved to the dead letters.
    pub dead: Vec<DeadLetter>,
    /// Files in the outbox that are not records, moved aside unposted.
    pub moved_aside: Vec<DeadLetter>,
    /// Entries still waiting.
    pub left: usize,
    /// Another process was flushing, so this one did not.
    pub busy: bool,
    /// A recent failure made this drain wait for its backoff instead of trying.
    pub backing_off: bool,
    /// Why the flush stopped early.
    pub error: Option<Error>,
}

impl FlushReport {
    /// The `flush` verb's verdict: `Ok` when nothing is left waiting, else why not (a forge that
    /// is still unreachable or another flusher is temporary; a setup problem is not).
    pub fn verdict(self) -> Result<()> {
        match self.error {
            Some(e) if self.left > 0 => Err(e),
            _ if self.busy => Err(Error::unavailable(
                "another process is flushing this outbox; try again when it is done",
            )),
            _ => Ok(()),
        }
    }
}

/// A thread read through the durability layer.
#[derive(Debug, Default)]
pub struct DurableRead {
    /// This machine's waiting entries, read before the thread.
    pub pending: Vec<Spooled>,
    /// This machine's posted entries that no read of the thread has held yet
    /// ([`LANDED_DIR`]): part of its offline answers, forgotten once a read holds them.
    pub landed: Vec<Spooled>,
    /// The thread's comments; `None` when the forge could not be read (offline).
    pub listing: Option<Listing>,
    /// Warnings about the outbox (records still waiting, dead letters, why offline).
    pub warnings: Vec<String>,
}

/// A [`Thread`] with an outbox: see the module documentation for the policy.
#[derive(Debug)]
pub struct Durable<T> {
    thread: T,
    outbox: Option<Outbox>,
    policy: DrainPolicy,
    validator: Option<Validator>,
    progress: ProgressHook,
    /// Set when this process found the forge unreachable: later reads make one attempt instead of
    /// spending the retry budget again.
    unreachable: AtomicBool,
}

impl<T: Thread> Durable<T> {
    /// Wraps `thread`; without an outbox, a record the store cannot take is an error.
    pub fn new(thread: T, outbox: Option<Outbox>, policy: DrainPolicy) -> Durable<T> {
        Durable {
            thread,
            outbox,
            policy,
            validator: None,
            progress: ProgressHook::silent(),
            unreachable: AtomicBool::new(false),
        }
    }

    /// Spools to `outbox`, drained under `policy`.
    pub fn with_outbox(mut self, outbox: Outbox, policy: DrainPolicy) -> Durable<T> {
        self.outbox = Some(outbox);
        self.policy = policy;
        self
    }

    /// Checks every spooled body with `validator` before posting it; failures are moved aside.
    pub fn with_validator(mut self, validator: Validator) -> Durable<T> {
        self.validator = Some(validator);
        self
    }

    /// Reports the progress of flushes and drains (one unit per outbox entry) to `progress`.
    pub fn with_progress(mut self, progress: ProgressHook) -> Durable<T> {
        self.progress = progress;
        self
    }

    /// Where long work reports its progress (silent unless set with [`Durable::with_progress`]).
    pub fn progress(&self) -> &ProgressHook {
        &self.progress
    }

    /// Gives back the wrapped thread.
    pub fn into_thread(self) -> T {
        self.thread
    }

    /// The wrapped thread.
    pub fn thread(&self) -> &T {
        &self.thread
    }

    /// The outbox, when there is one.
    pub fn outbox(&self) -> Option<&Outbox> {
        self.outbox.as_ref()
    }

    /// The drain policy in force.
    pub fn policy(&self) -> DrainPolicy {
        self.policy
    }

    /// A failed append with no outbox to keep the record in: data errors as they are, the
    /// rest as "not stored".
    fn not_stored(&self, e: StoreError) -> Error {
        let e = Error::from(e);
        if e.category() == Category::Data {
            return e;
        }
        let why = match self.thread.keeps_an_outbox() {
            true => {
                "and there is no outbox to keep the record in, so it was not stored \
                 anywhere (set $XDG_STATE_HOME or $HOME, or [forge] outbox_dir)"
            }
            // The local store is this machine's disk: nothing to wait for.
            false => {
                "the record was not stored (the local store has no outbox: it is \
                 on this machine's disk already)"
            }
        };
        Error::NotStored {
            message: format!("{e}; {why}"),
            source: None,
        }
    }

    /// [`Durable::save`], where the store can make it one critical section (a store without an
    /// outbox: the local one) only when `guard` accepts the comments after `after`
    /// ([`Thread::append_guarded`]); `None` when it refused and nothing was saved. With an
    /// outbox (a forge) it saves as [`Durable::save`] does, without asking.
    pub async fn save_guarded(
        &self,
        body: &str,
        after: u64,
        guard: AppendGuard,
    ) -> Result<Option<Saved>> {
        match &self.outbox {
            Some(_) => self.save(body).await.map(Some),
            None => match self.thread.append_guarded(body, after, guard).await {
                Ok(c) => Ok(c.map(Saved::Posted)),
                Err(e) => Err(self.not_stored(e)),
            },
        }
    }

    /// Posts a body, or keeps it in the outbox; see the module documentation.
    pub async fn save(&self, body: &str) -> Result<Saved> {
        let Some(outbox) = &self.outbox else {
            return match self.thread.append(body).await {
                Ok(c) => Ok(Saved::Posted(c)),
                Err(e) => Err(self.not_stored(e)),
            };
        };
        if !outbox.is_empty() {
            // Keep order: queue behind what is waiting, then drain.
            return self.spool_behind(outbox, body).await;
        }
        // Write ahead: the body is in the queue before the post starts and moves to the landed
        // once the post is confirmed, so whatever point a kill -9 hits, this machine's offline
        // answers know the record (spooled, or posted). The lock is held throughout, so no
        // other flusher can post it meanwhile; when another holds it, queue behind it.
        let lock = match outbox.try_lock() {
            Ok(Some(lock)) => lock,
            Ok(None) | Err(_) => return self.spool_behind(outbox, body).await,
        };
        let path = match outbox.push(body) {
            Ok(p) => p,
            Err(io) => {
                drop(lock);
                return self.last_resort(outbox, body, io).await;
            }
        };
        tracing::debug!("stage: posting");
        match self.thread.append_with(body, Effort::Full).await {
            Ok(c) => {
                tracing::debug!("stage: posted as comment {}", c.id);
                if let Err(e) = outbox.land(&path) {
                    // Left in the queue, the next drain finds it posted and lands it then.
                    tracing::warn!("cannot move the posted entry {}: {e}", path.display());
                }
                Ok(Saved::Posted(c))
            }
            Err(e) => {
                let cause = Error::from(e);
                tracing::debug!("stage: spooled {}, the post failed", path.display());
                if cause.category() == Category::Data {
                    // The forge will never take this body: keep it, out of everyone's way.
                    let entry = Spooled {
                        path: path.clone(),
                        spooled_at: Utc::now(),
                        body: String::new(),
                        unreadable: None,
                    };
                    let moved = outbox
                        .bury(&entry, &cause.to_string(), None)
                        .map_err(|io| Error::io("cannot move a refused record to", &path, io))?;
                    return Err(Error::data(
                        "the forge",
                        format!("{cause}; the record is kept in {}", moved.display()),
                    ));
                }
                outbox.record_failure(&cause.to_string());
                if cause.category() == Category::TempFail {
                    self.unreachable.store(true, Ordering::Relaxed);
                }
                Ok(Saved::Spooled { path, cause })
            }
        }
    }

    /// Queues `body` behind the entries waiting (or behind another flusher), then drains up to
    /// it: the record is posted in this command when the forge takes everything before it.
    async fn spool_behind(&self, outbox: &Outbox, body: &str) -> Result<Saved> {
        tracing::debug!("stage: spooling behind the waiting records");
        let path = match outbox.push(body) {
            Ok(p) => p,
            Err(io) => return self.last_resort(outbox, body, io).await,
        };
        tracing::debug!("stage: spooled {}", path.display());
        let report = self.drain_to(outbox, &path).await;
        if let Some((_, c)) = report.posted.iter().find(|(p, _)| *p == path) {
            return Ok(Saved::Posted(c.clone()));
        }
        if let Some(letter) = report
            .dead
            .iter()
            .find(|d| d.path.file_name() == path.file_name())
        {
            return Err(refused(letter));
        }
        let cause = report
            .error
            .unwrap_or_else(|| waiting(report.left, report.busy, report.backing_off));
        Ok(Saved::Spooled { path, cause })
    }

    /// The outbox cannot be written: posting directly is the only place left.
    async fn last_resort(&self, outbox: &Outbox, body: &str, io: std::io::Error) -> Result<Saved> {
        match self.thread.append_with(body, Effort::Full).await {
            Ok(c) => Ok(Saved::Posted(c)),
            Err(e) => Err(Error::NotStored {
                message: format!(
                    "cannot write the outbox {} ({io}) and cannot post ({e}): the record was not \
                     stored anywhere",
                    outbox.dir().display()
                ),
                source: Some(io),
            }),
        }
    }

    /// A saving command's drain, up to and including its own entry `own`: always at least one
    /// attempt, backoff or not (a backoff only makes the connection attempt short, so an
    /// unreachable forge costs a second or two), and no budget while the forge answers, so the
    /// command's own record reaches the thread in that command, after the backlog, in order.
    async fn drain_to(&self, outbox: &Outbox, own: &std::path::Path) -> FlushReport {
        let effort = match outbox
            .drain_state()
            .backing_off(Utc::now(), self.policy.max_backoff)
        {
            true => Effort::Probe,
            false => Effort::Once,
        };
        self.flush_from_with(outbox, Drain::Until { own, effort })
            .await
    }

    /// Drains the outbox within the policy's budget. During a backoff after a failure it still
    /// tries (one attempt per request, as always), so the first command after the forge comes
    /// back posts the backlog; the store's wait budget keeps a forge still down cheap.
    pub async fn drain(&self) -> FlushReport {
        let Some(outbox) = &self.outbox else {
            return FlushReport::default();
        };
        if outbox.is_empty() {
            return FlushReport::default();
        }
        if outbox
            .drain_state()
            .backing_off(Utc::now(), self.policy.max_backoff)
        {
            // Reads after this drain make one attempt, not the retry budget.
            self.unreachable.store(true, Ordering::Relaxed);
        }
        let deadline = Instant::now() + self.policy.budget;
        self.flush_from_with(outbox, Drain::Budget(deadline)).await
    }

    /// Posts everything waiting, with the full retry budget, waiting for another flusher.
    pub async fn flush(&self) -> FlushReport {
        self.thread.without_answer(Some(FLUSHING));
        match &self.outbox {
            Some(outbox) => self.flush_from_with(outbox, Drain::Flush).await,
            None => FlushReport::default(),
        }
    }

    /// Posts the entries of another outbox (spooled under other settings) to this thread.
    pub async fn flush_from(&self, source: &Outbox) -> FlushReport {
        self.thread.without_answer(Some(FLUSHING));
        self.flush_from_with(source, Drain::Flush).await
    }
}

/// Why a flush may wait for the store (the wait rule: it has no answer without it).
const FLUSHING: &str = "a flush has nothing to answer without the forge";

fn refused(letter: &DeadLetter) -> Error {
    Error::data(
        "the forge",
        format!(
            "{} ({}); the record is kept in {}",
            letter.reason,
            letter.answer.as_deref().unwrap_or("no answer"),
            letter.path.display()
        ),
    )
}

fn waiting(left: usize, busy: bool, backing_off: bool) -> Error {
    let why = if busy {
        " while another process flushes them"
    } else if backing_off {
        " (the forge failed recently; the next try comes after a short backoff)"
    } else {
        ""
    };
    Error::unavailable(format!(
        "{} earlier record(s) are still waiting in the outbox{why}",
        left.saturating_sub(1)
    ))
}
