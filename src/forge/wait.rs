//! The wait rule: how long one command waits for the forge, stated once and applied here, by the
//! HTTP layer, for every verb and every face.
//!
//! - **A command with an answer without the forge** (a save spools, a warm read answers offline
//!   from the read cache or the outbox) ends its whole wall time, process start included, within the wait
//!   budget (`[forge] wait`, `FORGESTATE_WAIT`, `--wait`; 3 s by default). Its deadline runs from
//!   the command's start and nothing renews it: not a 2xx status line, not another request's
//!   success, not a body that dribbles in. Connecting, waiting for headers, reading bodies and
//!   the retry waits all end at it; after it the command makes no further request and answers
//!   what it has.
//! - **A command with no such answer** (a cold read, `rotate`, `export`, `import`, `prune`,
//!   `doctor`, `init`, `publish`, `flush`) may wait longer: up to the patience (`[forge]
//!   patience`, 60 s by default) without an answer, renewed by each answer that is not a
//!   retryable failure, an answer being its status line and its whole body. It says once on
//!   stderr that it waits and why, then how long it has waited, while it waits for headers or
//!   reads a body. A body is read up to the patience since the last whole answer, and a forge
//!   that sends no byte, or fewer than [`MIN_RATE`] bytes a second, over a whole wait budget
//!   counts as not answering while a body is read.
//! - **A refused connection is an answer**: after [`REFUSALS`] quick tries the command gives up
//!   on the forge (a save spools).
//! - The retries of one request end with their own retry budget, however other requests fare;
//!   a retryable failure never renews anything.
//!
//! A command says which case it is by [`Wait::fallback`] or [`Wait::patient`] before its first
//! request (the first word of a command holds); one that says nothing is held to the deadline.
//!
//! When a command runs out of its budget it leaves an **outage marker** (a small file in this
//! forge's outbox directory, [`MARKER_FILE`]); for [`MARKER_SECS`] after it, the next command on
//! the machine that has an answer without the forge makes one attempt, no retry, that must
//! connect quickly ([`Wait::quick_connect`]); a forge that accepts the connection gets the
//! command's normal deadline. A command under the marker that fails does not renew it, so a
//! forge that is up but slow to connect gets a whole budget again once the marker is old. The
//! first answer from the forge removes the marker.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use chrono::Utc;

/// The marker's name in the forge's outbox directory.
pub(crate) const MARKER_FILE: &str = ".outage";
/// How long a marker keeps later commands to one quick attempt.
pub(crate) const MARKER_SECS: i64 = 30;
/// The least rate, in bytes a second, at which a body still counts as an answer, measured over
/// each wait budget.
pub(crate) const MIN_RATE: u64 = 1024;
/// How many refused connections end a command's tries.
pub(crate) const REFUSALS: u32 = 2;
/// How often a patient wait says how long it has waited.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// When this process started, when its `main` said so (the CLI and the MCP server): a command's
/// deadline then includes the process's own start.
static PROCESS_START: OnceLock<Instant> = OnceLock::new();

/// Marks now as the process's start (first thing in `main`): the first command's deadline runs
/// from here, and later commands are delimited by `Client::begin_command` rather than guessed.
pub fn mark_process_start() {
    let _ = PROCESS_START.set(Instant::now());
}

/// What a command does when the forge does not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// It has an answer without the forge: the deadline holds.
    Fallback,
    /// It has none, for this reason: it may wait up to the patience.
    Forge(&'static str),
}

/// The command's budget, shared by clones (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) struct Wait {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    budget: Duration,
    patience: Duration,
    quick: Duration,
    marker: Mutex<Option<PathBuf>>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// When the command started: its deadline runs from here.
    started: Instant,
    /// Commands are delimited by [`Wait::restart`] (or the process): no guessing from idle time.
    explicit: bool,
    /// What the command said it does without the forge; `None` is held to the deadline.
    need: Option<Need>,
    /// The last answer that was not a retryable failure (a patient wait runs from here).
    last_answer: Option<Instant>,
    /// The last sign of life of a request (started, answered, a body's bytes).
    last_seen: Instant,
    /// Whether this command looked for a marker yet.
    checked: bool,
    /// A marker said the forge was down: one attempt, no retry, connecting quickly.
    probing: bool,
    /// The command gave up on the forge: no further attempt.
    spent: bool,
    /// When it gave up: a program that never says when a command starts gets a new budget
    /// once a whole budget has passed since (a quick one, while the marker is recent).
    gave_up_at: Option<Instant>,
    /// Connections refused so far.
    refused: u32,
    /// The patient wait was announced.
    announced: bool,
    /// When it last said how long it waited (concurrent requests share the cadence).
    said_at: Option<Instant>,
}

impl State {
    fn fresh(now: Instant, explicit: bool) -> State {
        State {
            started: now,
            explicit,
            need: None,
            last_answer: None,
            last_seen: now,
            checked: false,
            probing: false,
            spent: false,
            gave_up_at: None,
            refused: 0,
            announced: false,
            said_at: None,
        }
    }
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
    /// The patience is the default one ([`Wait::with_patience`]).
    pub(crate) fn new(budget: Duration, quick: Duration) -> Wait {
        let patience = Duration::from_secs(crate::defaults::PATIENCE_SECS);
        Wait::with_patience(budget, patience, quick)
    }

    /// A budget of `budget` per command with an answer without the forge, `patience` for one
    /// without; `quick` is the one attempt allowed after an outage.
    pub(crate) fn with_patience(budget: Duration, patience: Duration, quick: Duration) -> Wait {
        let (started, explicit) = match PROCESS_START.get() {
            Some(at) => (*at, true),
            None => (Instant::now(), false),
        };
        Wait {
            inner: Arc::new(Inner {
                budget,
                patience: patience.max(budget),
                quick: quick.min(budget),
                marker: Mutex::new(None),
                state: Mutex::new(State::fresh(started, explicit)),
            }),
        }
    }

    /// The budget per command.
    pub(crate) fn budget(&self) -> Duration {
        self.inner.budget
    }

    /// The connect timeout of the one attempt after an outage marker.
    pub(crate) fn quick(&self) -> Duration {
        self.inner.quick
    }

    /// How long a command without an answer of its own may wait.
    pub(crate) fn patience(&self) -> Duration {
        self.inner.patience
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

    fn state(&self) -> Option<std::sync::MutexGuard<'_, State>> {
        self.inner.state.lock().ok()
    }

    /// Starts a new command now: a fresh deadline (the MCP server and library programs run
    /// many commands in one process).
    pub(crate) fn restart(&self) {
        if let Some(mut s) = self.state() {
            *s = State::fresh(Instant::now(), true);
        }
    }

    /// The command has an answer without the forge (a save spools, a warm read answers
    /// offline): its deadline holds. The first word of a command holds.
    pub(crate) fn fallback(&self) {
        self.need(Need::Fallback);
    }

    /// The command has no answer without the forge, for reason `why` ("a cold read: …"): it may
    /// wait up to the patience. The first word of a command holds.
    pub(crate) fn patient(&self, why: &'static str) {
        self.need(Need::Forge(why));
    }

    fn need(&self, need: Need) {
        if let Some(mut s) = self.state() {
            self.new_command_after_idle(&mut s, Instant::now());
            s.need.get_or_insert(need);
        }
    }

    /// Why this command waits patiently (it has no answer without the forge); `None` when it
    /// does not.
    pub(crate) fn patient_why(&self) -> Option<&'static str> {
        self.state().and_then(|s| match s.need {
            Some(Need::Forge(why)) => Some(why),
            _ => None,
        })
    }

    /// Whether this command waits patiently (it has no answer without the forge).
    pub(crate) fn is_patient(&self) -> bool {
        self.state()
            .is_some_and(|s| matches!(s.need, Some(Need::Forge(_))))
    }

    /// A program that never says when a command starts: a request after a whole budget without
    /// any sign of life starts a new command.
    fn new_command_after_idle(&self, s: &mut State, now: Instant) {
        if !s.explicit && !s.spent && now.duration_since(s.last_seen) >= self.inner.budget {
            *s = State::fresh(now, false);
        }
    }

    /// What is left of the budget; zero once the command gave up. With an answer without the
    /// forge it is what is left until the command's deadline; without one, until the patience
    /// since the last answer (or the command's start). The first call of a command looks for a
    /// recent outage marker, which makes a command with an answer of its own one quick attempt.
    pub(crate) fn remaining(&self) -> Duration {
        let Some(mut s) = self.state() else {
            return Duration::ZERO;
        };
        let now = Instant::now();
        if s.spent {
            match s.gave_up_at {
                Some(at) if !s.explicit && now.duration_since(at) >= self.inner.budget => {
                    *s = State::fresh(now, false)
                }
                _ => return Duration::ZERO,
            }
        }
        self.new_command_after_idle(&mut s, now);
        s.last_seen = now;
        let patient = matches!(s.need, Some(Need::Forge(_)));
        if !s.checked {
            s.checked = true;
            s.probing = !patient && self.marker().is_some_and(|p| recent_outage(&p));
            if s.probing {
                tracing::debug!("the forge was down moments ago: one quick attempt");
            }
        }
        // Under a marker the deadline is the usual one: only connecting must be quick
        // (`quick_connect`), so a forge that accepts the connection gets its request timeout.
        let deadline = if patient {
            s.last_answer.unwrap_or(s.started).max(s.started) + self.inner.patience
        } else {
            s.started + self.inner.budget
        };
        deadline.saturating_duration_since(now)
    }

    /// The connect timeout of this command's attempt when a recent outage marker makes it quick
    /// (`quick_timeout_ms`); `None` otherwise. Only connecting is quick: a forge that accepts
    /// the connection gets the command's deadline.
    pub(crate) fn quick_connect(&self) -> Option<Duration> {
        // The first look at the budget is what looks for the marker.
        self.remaining();
        self.state()
            .is_some_and(|s| s.probing)
            .then(|| self.quick())
    }

    /// Whether another attempt may follow a failure (not after an outage marker: one attempt).
    pub(crate) fn may_retry(&self) -> bool {
        self.state().is_some_and(|s| !s.probing && !s.spent)
    }

    /// A sign of life that is not an answer (a body's bytes, the end of a retry's pause): a
    /// program that never delimits its commands is not taken as idle.
    pub(crate) fn touch(&self) {
        if let Some(mut s) = self.state() {
            s.last_seen = Instant::now();
        }
    }

    /// The forge answered (not a retryable failure) and its body was read whole: a patient
    /// wait starts again, and a marker is removed. A command's deadline does not move.
    pub(crate) fn answered(&self) {
        self.heard(true);
    }

    /// The forge sent the status line of an answer that is not a retryable failure: it is up
    /// (a marker is removed, refusals forgotten), but the answer is not in yet, so a patient
    /// wait is not renewed until its body is read whole ([`Wait::answered`]).
    pub(crate) fn headers(&self) {
        self.heard(false);
    }

    fn heard(&self, whole: bool) {
        let was_probing = match self.state() {
            Some(mut s) => {
                if s.spent {
                    return;
                }
                let now = Instant::now();
                if whole {
                    s.last_answer = Some(now);
                }
                s.last_seen = now;
                s.checked = true;
                s.refused = 0;
                std::mem::replace(&mut s.probing, false)
            }
            None => return,
        };
        if let Some(path) = self.marker()
            && (was_probing || path.exists())
        {
            let _ = std::fs::remove_file(&path);
        }
    }

    /// A connection was refused: an answer too. After [`REFUSALS`] of them the command gives up
    /// on the forge.
    pub(crate) fn refused(&self) {
        let enough = self.state().is_some_and(|mut s| {
            s.refused += 1;
            s.refused >= REFUSALS
        });
        if enough {
            tracing::debug!("the forge refused the connection {REFUSALS} times");
            self.give_up();
        }
    }

    /// The command gives up on the forge: every later request fails at once, and the next
    /// command on this machine is told (the marker). A command that made the one attempt a
    /// marker allows does not renew it: the marker ages out [`MARKER_SECS`] after the last
    /// command that spent a whole budget, so a forge that is up but slow is tried in full again.
    pub(crate) fn give_up(&self) {
        let probing = match self.state() {
            Some(mut s) => {
                if s.spent {
                    return;
                }
                s.spent = true;
                s.gave_up_at = Some(Instant::now());
                s.probing
            }
            None => false,
        };
        tracing::debug!(
            "the forge did not answer within the wait budget ({:.1} s): giving up on it for this \
             command",
            self.inner.budget.as_secs_f64()
        );
        if let Some(path) = self.marker()
            && !probing
        {
            write_marker(&path);
        }
    }

    /// Whether the command gave up on the forge.
    #[cfg(test)]
    pub(crate) fn spent(&self) -> bool {
        self.state().is_none_or(|s| s.spent)
    }

    /// Waits for `fut` (a request's headers) for at most `left`. A patient command says once,
    /// after a whole wait budget without an answer, that it waits and why, then every
    /// [`PROGRESS_EVERY`] how long it has waited. `None` when `left` ran out first.
    pub(crate) async fn bounded<F: std::future::Future>(
        &self,
        left: Duration,
        what: &str,
        fut: F,
    ) -> Option<F::Output> {
        if !self.is_patient() {
            return tokio::time::timeout(left, fut).await.ok();
        }
        let begun = Instant::now();
        let end = begun + left;
        let mut fut = std::pin::pin!(fut);
        let mut step = self.inner.budget;
        loop {
            let now = Instant::now();
            let slice = step.min(end.saturating_duration_since(now));
            if slice.is_zero() {
                return None;
            }
            if let Ok(v) = tokio::time::timeout(slice, &mut fut).await {
                return Some(v);
            }
            self.touch();
            if Instant::now() >= end {
                return None;
            }
            self.say_waiting(what, begun.elapsed(), left);
            step = PROGRESS_EVERY;
        }
    }

    /// The patient wait's line on stderr: once why, then how long.
    fn say_waiting(&self, what: &str, waited: Duration, left: Duration) {
        let (first, why) = match self.state() {
            Some(mut s) => {
                let why = match s.need {
                    Some(Need::Forge(why)) => why,
                    _ => return,
                };
                let now = Instant::now();
                if s.said_at
                    .is_some_and(|t| now.duration_since(t) < PROGRESS_EVERY / 2)
                {
                    // Another request of this command just said it.
                    return;
                }
                s.said_at = Some(now);
                (!std::mem::replace(&mut s.announced, true), why)
            }
            None => return,
        };
        let more = left.saturating_sub(waited).as_secs();
        if first {
            tracing::warn!(
                "the forge has not answered {what} for {} s; waiting for it up to {more} s more, \
                 since {why} (give it longer with --patience, $FORGESTATE_PATIENCE or [forge] \
                 patience)",
                waited.as_secs(),
            );
        } else {
            tracing::warn!(
                "still waiting for the forge to answer {what}: {} s so far",
                waited.as_secs()
            );
        }
    }

    /// The clock of one body being read ([`Reading`]), the answer to `what` ("GET /…").
    pub(crate) fn reading(&self, what: String) -> Reading {
        let now = Instant::now();
        Reading {
            wait: self.clone(),
            window: now,
            bytes: 0,
            what,
            begun: now,
            notice: now + self.inner.budget,
        }
    }
}

/// How long the next bytes of a body may take: a command stops at its deadline (one with an
/// answer of its own) or at its patience since the last whole answer (one without: a body that
/// flows forever does not hold it longer); every command stops when a whole wait budget brings
/// fewer than [`MIN_RATE`] bytes a second (nothing at all included). A patient command says,
/// while a body is read, that it waits, as it does while waiting for the headers.
pub(crate) struct Reading {
    wait: Wait,
    /// The start of the current window.
    window: Instant,
    /// Bytes read in the current window.
    bytes: u64,
    /// The request whose answer this is, for the notice.
    what: String,
    /// When the body began.
    begun: Instant,
    /// When a patient read next says how long it has waited.
    notice: Instant,
}

impl Reading {
    /// How long the next chunk may take; zero: stop reading now.
    pub(crate) fn limit(&self) -> Duration {
        let budget = self.wait.inner.budget;
        let window = (self.window + budget).saturating_duration_since(Instant::now());
        window.min(self.wait.remaining())
    }

    /// `n` more bytes came: a window that reached the least rate starts another.
    pub(crate) fn got(&mut self, n: usize) {
        self.bytes += n as u64;
        let budget = self.wait.inner.budget;
        let least = (MIN_RATE as f64 * budget.as_secs_f64()) as u64;
        let now = Instant::now();
        if self.bytes >= least {
            self.window = now;
            self.bytes = 0;
        }
        self.wait.touch();
        if now >= self.notice && self.wait.is_patient() {
            self.notice = now + PROGRESS_EVERY;
            let waited = now.duration_since(self.begun);
            let left = waited + self.wait.remaining();
            self.wait.say_waiting(&self.what, waited, left);
        }
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
    fn the_deadline_runs_from_the_command_start_and_no_answer_renews_it() {
        let w = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        w.restart();
        let left = w.remaining();
        assert!(left <= Duration::from_secs(3));
        assert!(w.may_retry());
        std::thread::sleep(Duration::from_millis(20));
        w.answered();
        assert!(
            w.remaining() < left,
            "an answer does not move the deadline back"
        );
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
        assert!(
            w.remaining() > left - Duration::from_millis(20),
            "a new command"
        );
    }

    #[test]
    fn a_program_that_never_delimits_commands_starts_one_after_a_whole_idle_budget() {
        let w = Wait::new(Duration::from_millis(100), Duration::from_millis(50));
        w.remaining();
        w.answered();
        std::thread::sleep(Duration::from_millis(150));
        assert!(
            w.remaining() > Duration::from_millis(50),
            "idle for a whole budget after an answer: a new command"
        );
    }

    #[test]
    fn a_command_without_an_answer_of_its_own_waits_the_patience_renewed_by_answers() {
        let budget = Duration::from_millis(100);
        let w = Wait::with_patience(budget, Duration::from_secs(60), Duration::from_millis(50));
        w.restart();
        w.patient("a cold read");
        w.fallback();
        assert!(w.is_patient(), "the first word of a command holds");
        assert!(w.remaining() > budget, "the patience, not the budget");
        std::thread::sleep(Duration::from_millis(20));
        let before = w.remaining();
        w.answered();
        assert!(w.remaining() > before, "an answer renews the patience");
        w.restart();
        w.fallback();
        w.patient("too late");
        assert!(!w.is_patient());
        assert!(w.remaining() <= budget);
    }

    #[test]
    fn refused_connections_are_an_answer_and_end_the_tries() {
        let w = Wait::with_patience(
            Duration::from_secs(3600),
            Duration::from_secs(3600),
            Duration::from_millis(500),
        );
        w.restart();
        w.patient("rotate");
        w.refused();
        assert!(w.may_retry(), "one refusal: one quick try more");
        w.refused();
        assert!(
            w.spent(),
            "refused twice: the command gives up, whatever it had left"
        );
        assert_eq!(w.remaining(), Duration::ZERO);
    }

    #[test]
    fn a_body_is_read_to_the_deadline_or_while_it_keeps_the_least_rate() {
        let budget = Duration::from_millis(200);
        let least = (MIN_RATE as f64 * budget.as_secs_f64()) as usize;
        // With an answer of its own: the deadline ends the read, however fast the body.
        let w = Wait::new(budget, Duration::from_millis(50));
        w.restart();
        w.fallback();
        let mut pace = w.reading("GET /x".to_string());
        pace.got(least * 10);
        std::thread::sleep(budget);
        assert_eq!(pace.limit(), Duration::ZERO, "the deadline passed");
        // Without: a body that keeps the least rate is read past the budget...
        let w = Wait::new(budget, Duration::from_millis(50));
        w.restart();
        w.patient("a cold read");
        let mut pace = w.reading("GET /x".to_string());
        for _ in 0..3 {
            std::thread::sleep(budget / 2);
            pace.got(least);
            assert!(pace.limit() > Duration::ZERO, "flowing");
        }
        // ...and one that brings less than it over a whole budget is cut off.
        pace.got(least / 2);
        std::thread::sleep(budget);
        assert_eq!(pace.limit(), Duration::ZERO, "too slow");
    }

    /// An outage marker in a fresh directory, left by a command that gave up on its 3 s wait.
    fn given_up() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ob").join(MARKER_FILE);
        let w = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        w.set_marker(path.clone());
        w.remaining();
        w.give_up();
        (dir, path)
    }

    #[test]
    fn a_patient_command_ignores_the_outage_marker() {
        let (_dir, path) = given_up();
        let next = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        next.set_marker(path);
        next.patient("rotate");
        assert!(next.may_retry(), "it has no answer of its own: it waits");
        assert!(next.remaining() > Duration::from_secs(3));
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
        let (_dir, path) = given_up();
        assert!(recent_outage(&path), "giving up leaves the marker");

        let next = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        next.set_marker(path.clone());
        assert_eq!(
            next.quick_connect(),
            Some(Duration::from_millis(500)),
            "connecting is quick"
        );
        assert!(
            next.remaining() > Duration::from_millis(2900),
            "a forge that accepts the connection gets the usual deadline"
        );
        assert!(!next.may_retry(), "one attempt");
        next.answered();
        assert!(!path.exists(), "the forge is back");
        assert!(next.may_retry());
        assert_eq!(next.quick_connect(), None);
    }

    #[test]
    fn a_failed_attempt_under_the_marker_does_not_renew_it() {
        let (_dir, path) = given_up();
        let old = (Utc::now().timestamp() - 20).to_string();
        crate::fsutil::write_atomic(&path, old.as_bytes(), true).unwrap();
        let next = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        next.set_marker(path.clone());
        assert!(next.quick_connect().is_some());
        next.give_up();
        let kept = crate::fsutil::read_private(&path, 64).unwrap();
        assert_eq!(kept, old.as_bytes(), "the marker keeps its age");
        // A command that spent a whole budget (no marker) does renew it.
        std::fs::remove_file(&path).unwrap();
        let full = Wait::new(Duration::from_secs(3), Duration::from_millis(500));
        full.set_marker(path.clone());
        full.remaining();
        full.give_up();
        assert!(recent_outage(&path));
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
