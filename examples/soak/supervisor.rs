//! The soak run's supervisor machine: `forgestate status` every second, and `forgestate rotate`
//! every few seconds while the workers write, some of the rotations killed with SIGKILL.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::machine::{Machine, Rng};

/// What the supervisor did.
#[derive(Default)]
pub struct Supervisor {
    pub status_runs: usize,
    pub status_ok: usize,
    /// `rotate` runs by how they ended: `rotated`, `nothing to do`, `exit N`, `killed`.
    pub rotates: BTreeMap<String, usize>,
}

/// Runs until `done`: `status` every second, `rotate` every `rotate_every` (never when zero),
/// killed after 50 to 1,500 ms in `kill_percent` of the runs.
pub fn supervise(
    m: &Machine,
    done: &AtomicBool,
    rotate_every: Duration,
    kill_percent: u64,
) -> Supervisor {
    let mut report = Supervisor::default();
    let mut rng = Rng::new(0x5eed);
    let (mut last_status, mut last_rotate): (Option<Instant>, Instant) = (None, Instant::now());
    while !done.load(Ordering::Relaxed) {
        if last_status.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            last_status = Some(Instant::now());
            report.status_runs += 1;
            if m.run(&["status", "--json"]).is_some_and(|o| o.0 == 0) {
                report.status_ok += 1;
            }
        }
        if !rotate_every.is_zero() && last_rotate.elapsed() >= rotate_every {
            let kill = (rng.below(100) < kill_percent)
                .then(|| Duration::from_millis(50 + rng.below(1450)));
            let outcome = match m.run_killing(&["rotate", "--json"], kill) {
                None if kill.is_some() => "killed".to_string(),
                None => "hung".to_string(),
                Some((0, out)) => {
                    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
                    if doc["to"].is_null() {
                        "nothing to do".to_string()
                    } else {
                        "rotated".to_string()
                    }
                }
                Some((code, _)) => format!("exit {code}"),
            };
            *report.rotates.entry(outcome).or_default() += 1;
            last_rotate = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    report
}

/// After the workers are done (faults over): the supervisor keeps its periodic `rotate`, as a
/// pool supervisor keeps running, while more than one session issue is open (`open` counts
/// them), for at most `limit`. A rotation stopped by its command's wait budget in the run's last
/// seconds is finished by the first `rotate` once it has shown no progress for `STALLED`; while
/// one issue is open nothing runs (a `rotate` then would rotate the head). How many ran.
pub fn tidy_up(
    m: &Machine,
    open: impl Fn() -> usize,
    rotate_every: Duration,
    limit: Duration,
) -> usize {
    let started = Instant::now();
    let mut runs = 0;
    while open() > 1 && started.elapsed() < limit {
        std::thread::sleep(rotate_every);
        if open() > 1 {
            let _ = m.run(&["rotate", "--json"]);
            runs += 1;
        }
    }
    runs
}
