//! The wait budget: how long one command may wait for a forge that does not answer.
//!
//! One budget for the whole command (`[forge] wait`, `FORGESTATE_WAIT`, `--wait`; 3 s by
//! default), shared by every request of a client and its clones: connecting, waiting for an
//! answer's headers and the retry waits all end at its deadline, which runs from the first
//! attempt since the forge last answered (a body that stops flowing for a whole budget is a
//! forge that stopped answering too). Any answer that is not a retryable failure (a 2xx, a
//! 404, ...) shows the forge is answering and renews the budget, so a healthy forge is never
//! cut short however much a command reads, and time spent between requests costs nothing; a
//! forge that refuses connections, answers 503 to everything or accepts and never answers
//! costs at most the budget, after which every further request of the command fails at once
//! (and the caller spools or answers offline).
//!
//! When a command runs out of its budget it leaves an **outage marker** (a small file in this
//! forge's outbox directory, [`MARKER_FILE`]); for [`MARKER_SECS`] after it, the next command on
//! the machine gets one quick attempt ([`Wait::quick`], no retry) before it too gives up. The
//! first answer from the forge removes the marker.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;

/// The marker's name in the forge's outbox directory.
pub(crate) const MARKER_FILE: &str = ".outage";
/// How long a marker keeps later commands to one quick attempt.
pub(crate) const MARKER_SECS: i64 = 30;

/// The command's budget, shared by clones (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) struct Wait {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    budget: Duration,
    quick: Duration,
    marker: Mutex<Option<PathBuf>>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// When the forge went silent: the start of the first attempt since its last answer (the
    /// budget runs from there). `None` while it answers, so a program idle between requests
    /// loses nothing of its budget.
    silent_since: Option<Instant>,
    /// Whether this command looked for a marker yet.
    checked: bool,
    /// A marker said the forge was down: one quick attempt, no retry.
    probing: bool,
    /// The command gave up on the forge: no further attempt.
    spent: bool,
    /// When it gave up: a program that never says when a command starts gets a new budget
    /// once a whole budget has passed since (a quick one, while the marker is recent).
    gave_up_at: Option<Instant>,
}

impl Default for Wait {
    fn default() -> Self {
        Wait::new(
            Duration::from_secs(crate::defaults::WAIT_SECS),
            Duration::from_millis(crate::defaults::QUICK_TIMEOUT_MS),
        )
    }
}

impl Wait {
    /// A budget of `budget` per command; `quick` is the one attempt allowed after an outage.
    pub(crate) fn new(budget: Duration, quick: Duration) -> Wait {
        Wait {
            inner: Arc::new(Inner {
                budget,
                quick: quick.min(budget),
                marker: Mutex::new(None),
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The budget per command.
    pub(crate) fn budget(&self) -> Duration {
        self.inner.budget
    }

    /// Keeps the outage marker at `path` (the forge's outbox directory holds it).
    pub(crate) fn set_marker(&self, path: PathBuf) {
        if let Ok(mut m) = self.inner.marker.lock() {
            *m = Some(path);
        }
    }

    fn marker(&self) -> Option<PathBuf> {
        self.inner.marker.lock().ok().and_then(|m| m.clone())
    }

    /// Starts a new command: a fresh budget from its first request (the MCP server and library
    /// programs run many commands in one process).
    pub(crate) fn restart(&self) {
        if let Ok(mut s) = self.inner.state.lock() {
            *s = State::default();
        }
    }

    /// What is left of the budget; zero once the command gave up. It runs from the first
    /// attempt since the forge last answered; the first call of a command looks for a recent
    /// outage marker, which makes the budget one quick attempt.
    pub(crate) fn remaining(&self) -> Duration {
        let Ok(mut s) = self.inner.state.lock() else {
            return Duration::ZERO;
        };
        let now = Instant::now();
        if s.spent {
            match s.gave_up_at {
                Some(at) if now.duration_since(at) >= self.inner.budget => *s = State::default(),
                _ => return Duration::ZERO,
            }
        }
        if !s.checked {
            s.checked = true;
            s.probing = self.marker().is_some_and(|p| recent_outage(&p));
            if s.probing {
                tracing::debug!("the forge was down moments ago: one quick attempt");
            }
        }
        let budget = match s.probing {
            true => self.inner.quick,
            false => self.inner.budget,
        };
        let since = *s.silent_since.get_or_insert(now);
        (since + budget).saturating_duration_since(now)
    }

    /// Whether another attempt may follow a failure (not after an outage marker: one attempt).
    pub(crate) fn may_retry(&self) -> bool {
        self.inner
            .state
            .lock()
            .map(|s| !s.probing && !s.spent)
            .unwrap_or(false)
    }

    /// The forge answered: the budget starts again, and a marker is removed.
    pub(crate) fn answered(&self) {
        let was_probing = match self.inner.state.lock() {
            Ok(mut s) => {
                if s.spent {
                    return;
                }
                s.silent_since = None;
                s.checked = true;
                std::mem::replace(&mut s.probing, false)
            }
            Err(_) => return,
        };
        if let Some(path) = self.marker()
            && (was_probing || path.exists())
        {
            let _ = std::fs::remove_file(&path);
        }
    }

    /// The command gives up on the forge: every later request fails at once, and the next
    /// command on this machine is told (the marker).
    pub(crate) fn give_up(&self) {
        if let Ok(mut s) = self.inner.state.lock() {
            if s.spent {
                return;
            }
            s.spent = true;
            s.gave_up_at = Some(Instant::now());
        }
        tracing::debug!(
            "the forge did not answer within the wait budget ({:.1} s): giving up on it for this \
             command",
            self.inner.budget.as_secs_f64()
        );
        if let Some(path) = self.marker() {
            write_marker(&path);
        }
    }

    /// Whether the command gave up on the forge.
    #[cfg(test)]
    pub(crate) fn spent(&self) -> bool {
        self.inner.state.lock().map(|s| s.spent).unwrap_or(true)
    }
}

/// Writes the marker (the time, in seconds since the epoch) where the outbox directory already
/// exists and is ours; a marker that cannot be written only costs the next command its budget.
fn write_marker(path: &Path) {
    let Some(dir) = path.parent() else {
        return;
    };
    if crate::fsutil::create_private_dir(dir).is_err() {
        return;
    }
    let stamp = Utc::now().timestamp().to_string();
    if let Err(e) = crate::fsutil::write_atomic(path, stamp.as_bytes(), true) {
        tracing::debug!("cannot write the outage marker {}: {e}", path.display());
    }
}

/// Whether the marker at `path` says the forge was down within [`MARKER_SECS`].
pub(crate) fn recent_outage(path: &Path) -> bool {
    let Ok(bytes) = crate::fsutil::read_private(path, 64) else {
        return false;
    };
    let Some(at) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| t.trim().parse::<i64>().ok())
    else {
        return false;
    };
    let age = Utc::now().timestamp() - at;
    (-5..MARKER_SECS).contains(&age)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_starts_at_the_first_request_and_answers_renew_it() {
        let w = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        let left = w.remaining();
        assert!(left > Duration::from_millis(2900) && left <= Duration::from_secs(3));
        assert!(w.may_retry());
        w.answered();
        assert!(w.remaining() > Duration::from_millis(2900));
        w.give_up();
        assert_eq!(w.remaining(), Duration::ZERO, "spent: no more attempts");
        assert!(!w.may_retry());
        w.answered();
        assert_eq!(
            w.remaining(),
            Duration::ZERO,
            "a late answer changes nothing"
        );
        w.restart();
        assert!(w.remaining() > Duration::from_millis(2900), "a new command");
    }

    #[test]
    fn time_between_answered_requests_costs_nothing() {
        let w = Wait::new(Duration::from_millis(100), Duration::from_millis(50));
        w.remaining();
        w.answered();
        std::thread::sleep(Duration::from_millis(150));
        assert!(
            w.remaining() > Duration::from_millis(50),
            "idle after an answer: the budget starts at the next attempt"
        );
    }

    #[test]
    fn a_program_that_never_restarts_gets_a_new_budget_after_a_whole_one() {
        let w = Wait::new(Duration::from_millis(100), Duration::from_millis(50));
        w.remaining();
        w.give_up();
        assert_eq!(w.remaining(), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(150));
        assert!(
            w.remaining() > Duration::ZERO,
            "the next unit of work may try again"
        );
    }

    #[test]
    fn a_recent_marker_leaves_one_quick_attempt_and_an_answer_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ob").join(MARKER_FILE);
        let w = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        w.set_marker(path.clone());
        w.remaining();
        w.give_up();
        assert!(recent_outage(&path), "giving up leaves the marker");

        let next = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        next.set_marker(path.clone());
        assert!(next.remaining() <= Duration::from_millis(500), "quick");
        assert!(!next.may_retry(), "one attempt");
        next.answered();
        assert!(!path.exists(), "the forge is back");
        assert!(next.may_retry());
        assert!(next.remaining() > Duration::from_millis(2900));
    }

    #[test]
    fn old_or_garbled_markers_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MARKER_FILE);
        let old = Utc::now().timestamp() - MARKER_SECS - 1;
        crate::fsutil::write_atomic(&path, old.to_string().as_bytes(), true).unwrap();
        assert!(!recent_outage(&path));
        crate::fsutil::write_atomic(&path, b"\xff not a time", true).unwrap();
        assert!(!recent_outage(&path));
        assert!(!recent_outage(&dir.path().join("missing")));
    }
}
