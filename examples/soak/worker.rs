//! One soak worker: its steps in order, as a series of `forgestate checkpoint` processes (some
//! killed with SIGKILL), and after each step a `resume` from its own machine and, every few
//! steps, from a fresh machine (an empty cache), each answer kept as a [`Probe`].

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::machine::{Machine, Outcome, Resumed, Rng, Setup};

/// How a worker goes.
pub struct Pace {
    pub steps: usize,
    pub kill_percent: u64,
    /// A worker's work between two steps: up to this long (half of it on average).
    pub pause_ms: u64,
    /// Every this many saved steps, a fresh machine resumes the session too (0: never).
    pub fresh_every: usize,
    /// Where the fresh machines' directories go.
    pub root: PathBuf,
    /// When the run started (probe times are measured from it).
    pub started: Instant,
}

/// Who asked `resume`, and when in the worker's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The worker's own machine, right after a step it saved.
    Own,
    /// The worker's own machine, after a killed or failed command (a restarted worker).
    Recovery,
    /// A fresh machine (an empty cache) during the run, right after a saved step.
    Fresh,
    /// A fresh machine of its own for each session, at the end (after every flush).
    End,
}

/// One `resume` and what the worker knew when it was asked.
pub struct Probe {
    pub kind: Kind,
    pub worker: usize,
    /// Seconds since the run started.
    pub at: f64,
    /// The machine's directory (kept with `--keep`).
    pub machine: PathBuf,
    /// The newest step the answer must not be older than: for the own machine, the newest
    /// step saved (exit 0, posted or spooled: the own machine reads its outbox); for a fresh
    /// machine, the newest step saved by a post (a spooled one is not on the forge yet).
    pub reference: Option<usize>,
    /// The newest step the worker knows it saved, spooled or not.
    pub done: Option<usize>,
    /// The answer; `None` when no try exited 0.
    pub answer: Option<Resumed>,
}

/// What one worker did.
#[derive(Default)]
pub struct Worker {
    /// (step, record id, spooled) of every command that exited 0.
    pub saved: Vec<(usize, String, bool)>,
    /// The last step the worker knows is done: saved, or (killed) found by `resume`.
    pub done: Option<usize>,
    /// The last step the worker knows is on the forge: saved by a post (not spooled), or
    /// found by `resume` and not pending.
    pub posted: Option<usize>,
    pub killed: usize,
    pub failed: usize,
    pub resumes: usize,
    pub redone: usize,
    pub probes: Vec<Probe>,
}

impl Worker {
    fn probe(&mut self, kind: Kind, w: usize, m: &Machine, pace: &Pace) {
        let reference = match kind {
            Kind::Own | Kind::Recovery => self.done,
            Kind::Fresh | Kind::End => self.posted,
        };
        let answer = m.resume(w);
        self.probes.push(Probe {
            kind,
            worker: w,
            at: pace.started.elapsed().as_secs_f64(),
            machine: m.dir().to_path_buf(),
            reference,
            done: self.done,
            answer,
        });
    }
}

/// One worker: its steps in order, as a series of commands, some killed.
pub fn work(
    m: &Machine,
    setup: &Arc<Setup>,
    w: usize,
    pace: &Pace,
    progress: &AtomicUsize,
) -> Worker {
    let (steps, kill_percent) = (pace.steps, pace.kill_percent);
    let mut rng = Rng::new(w as u64 + 1);
    let mut report = Worker::default();
    let mut step = 0;
    // A worker that cannot get anywhere (no binary, no forge) stops rather than spin.
    let mut attempts = 0;
    while step < steps && attempts < steps * 20 {
        attempts += 1;
        // The work between steps; the first steps start together (a race to create the
        // session issue on a fresh repository).
        if attempts > 1 {
            std::thread::sleep(Duration::from_millis(rng.below(pace.pause_ms + 1)));
        }
        let kill =
            (rng.below(100) < kill_percent).then(|| Duration::from_millis(20 + rng.below(400)));
        match m.checkpoint(w, step, kill) {
            Outcome::Saved { id, spooled } => {
                report.saved.push((step, id, spooled));
                report.done = Some(step);
                if !spooled {
                    report.posted = Some(step);
                }
                progress.fetch_add(1, Ordering::Relaxed);
                report.probe(Kind::Own, w, m, pace);
                if pace.fresh_every > 0 && report.saved.len() % pace.fresh_every == 0 {
                    let dir = pace.root.join("fresh").join(format!("w{w:02}-s{step:02}"));
                    let fresh = Machine::new(setup.clone(), dir);
                    report.probe(Kind::Fresh, w, &fresh, pace);
                }
                step += 1;
                continue;
            }
            Outcome::Killed => report.killed += 1,
            Outcome::Failed => report.failed += 1,
        }
        // A restarted worker asks where it is before redoing anything.
        report.resumes += 1;
        report.probe(Kind::Recovery, w, m, pace);
        let answer = report.probes.last().and_then(|p| p.answer.as_ref());
        match answer.map(|a| (a.step, a.json["pending"].as_bool() == Some(true))) {
            Some((Some(last), pending)) if last >= step => {
                report.done = Some(last);
                if !pending {
                    report.posted = Some(last);
                }
                step = last + 1;
            }
            _ => report.redone += 1,
        }
    }
    report
}
