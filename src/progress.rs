//! Progress of long work (a big flush, a cold sync, prune, rotate), reported through a hook the
//! caller installs. The library never draws anything: the CLI turns reports into a bar on a
//! terminal's stderr, and a library user (MCP server, Python) can log them or ignore them.
//!
//! A long operation asks its [`ProgressHook`] for a [`Task`], advances it as it goes, and lets it
//! drop when done (early returns included), which reports the end:
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use forgestate::progress::{ProgressHook, Step};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = Arc::clone(&seen);
//! let hook = ProgressHook::new(move |step: &Step<'_>| {
//!     if let Ok(mut log) = log.lock() {
//!         log.push((step.task.to_string(), step.done, step.total, step.finished));
//!     }
//! });
//! {
//!     let mut task = hook.task("pruning", Some(2));
//!     task.advance(1);
//!     task.advance(1);
//! } // dropped: finished
//! let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
//! assert_eq!(seen.len(), 4);
//! assert_eq!(seen[2], ("pruning".to_string(), 2, Some(2), false));
//! assert!(seen[3].3);
//! ```

use std::sync::Arc;

/// One report: how far a task got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Step<'a> {
    /// What is being done, in a few words ("flushing the outbox").
    pub task: &'a str,
    /// Units done so far (records posted, comments read, ...).
    pub done: u64,
    /// Units in all, when known; it may grow while the task runs.
    pub total: Option<u64>,
    /// The task is over (done, failed or stopped early); the last report of a task.
    pub finished: bool,
}

/// Receives progress reports. Any `Fn(&Step)` that is `Send + Sync` is one.
///
/// Reports arrive on the thread doing the work, so a receiver should be quick (drawing a bar,
/// sending on a channel) and must not block.
pub trait Progress: Send + Sync {
    /// Called when a task starts (`done == 0`), after each advance, and once when it is over.
    fn report(&self, step: &Step<'_>);
}

impl<F: Fn(&Step<'_>) + Send + Sync> Progress for F {
    fn report(&self, step: &Step<'_>) {
        self(step)
    }
}

/// Where a long operation reports its progress: silent by default, cheap to clone.
#[derive(Clone, Default)]
pub struct ProgressHook(Option<Arc<dyn Progress>>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressHook(on)"
        } else {
            "ProgressHook(silent)"
        })
    }
}

impl ProgressHook {
    /// Sends every report to `progress`.
    pub fn new(progress: impl Progress + 'static) -> ProgressHook {
        ProgressHook(Some(Arc::new(progress)))
    }

    /// Reports nothing.
    pub fn silent() -> ProgressHook {
        ProgressHook(None)
    }

    /// Whether reports go nowhere.
    pub fn is_silent(&self) -> bool {
        self.0.is_none()
    }

    /// Starts a task of `total` units (when known) and reports it at zero. The task reports its
    /// end when dropped.
    pub fn task(&self, name: impl Into<String>, total: Option<u64>) -> Task {
        let task = Task {
            hook: self.clone(),
            name: name.into(),
            done: 0,
            total,
        };
        task.send(false);
        task
    }
}

/// A task under way; see [`ProgressHook::task`].
#[derive(Debug)]
pub struct Task {
    hook: ProgressHook,
    name: String,
    done: u64,
    total: Option<u64>,
}

impl Task {
    /// `n` more units are done.
    pub fn advance(&mut self, n: u64) {
        self.done = self.done.saturating_add(n);
        self.send(false);
    }

    /// `done` units are done in all (reported only when that is news).
    pub fn advance_to(&mut self, done: u64) {
        if done != self.done {
            self.done = done;
            self.send(false);
        }
    }

    /// The total changed (more work turned up); reported with the next advance.
    pub fn set_total(&mut self, total: Option<u64>) {
        self.total = total;
    }

    /// Units done so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    fn send(&self, finished: bool) {
        if let Some(sink) = &self.hook.0 {
            sink.report(&Step {
                task: &self.name,
                done: self.done,
                total: self.total,
                finished,
            });
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.send(true);
    }
}
