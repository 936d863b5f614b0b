//! The soak benchmark of issue #16: many workers, each a series of `forgestate checkpoint`
//! processes with its own cache and outbox (a machine of its own), against the test suite's fake
//! Forgejo behind a fault-injecting proxy, then a count of what a fresh machine can read back.
//! It prints figures and asserts nothing (exit 0).
//!
//! Run: `cargo run --release --features dev-examples --example soak` (16 workers × 30 steps;
//! `--quick` for 4 × 5;
//! `--workers N`, `--steps N`, `--kill-percent N`, `--pause-ms N` (a worker's work between
//! steps: up to N ms, default 2000), `--bin PATH`, `--keep` to keep the machines' directories
//! with each one's `stderr.log`). It runs
//! `target/release/forgestate`, building it first when it is missing.
//!
//! - Faults roll through windows: calm, a 503 burst (every request), dropped requests,
//!   commit-then-drop (the fake commits, the proxy hangs up), slow answers (some past the
//!   request timeout). Timeouts and retry budgets are short (`soak.toml` below), so faults end
//!   in spooled records as often as in retries.
//! - A worker runs its steps in order. Some commands are killed with SIGKILL while they run; a
//!   killed or failed step is followed by `resume` (as a restarted worker would) and redone only
//!   when `resume` says it was not saved.
//! - A supervisor machine runs `forgestate status` every second, and `forgestate rotate` once
//!   half of the steps are saved.
//! - At the end the faults stop, every worker flushes its outbox, and a fresh machine (an empty
//!   cache) lists the thread and resumes every session.
//!
//! Saved: the command exited 0 (posted, or spooled and later flushed). Lost: saved, but on no
//! issue of the fake and in no outbox. Invisible: saved and on an issue, but not listed by the
//! fresh machine. Duplicates: a record `Id` listed twice, or one step listed as two records.

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;
#[path = "soak/faults.rs"]
mod faults;
#[path = "soak/machine.rs"]
mod machine;
#[path = "soak/tally.rs"]
mod tally;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fake_forge::{BOT_TOKEN, FakeForge};
use faults::{FaultProxy, Mode};
use machine::{Machine, Outcome, Rng, Setup};

/// The configuration every machine uses: short timeouts, so faults cost seconds, not minutes.
const CONFIG: &str = "[forge]\nconnect_timeout_secs = 1\nrequest_timeout_secs = 2\n\
                      retry_budget_secs = 4\ndrain_budget_secs = 2\ndrain_max_backoff_secs = 2\n";

/// The fault windows, in order, repeated while the workers run.
const WINDOWS: [(Mode, u64); 8] = [
    (Mode::Calm, 1000),
    (Mode::Burst503, 1500),
    (Mode::Calm, 2000),
    (Mode::Drop, 2000),
    (Mode::Calm, 2000),
    (Mode::CommitThenDrop, 2000),
    (Mode::Calm, 2000),
    (Mode::Slow, 3000),
];

struct Opts {
    workers: usize,
    steps: usize,
    kill_percent: u64,
    /// A worker's work between two steps: up to this long (half of it on average).
    pause_ms: u64,
    bin: Option<PathBuf>,
    keep: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        workers: 16,
        steps: 30,
        kill_percent: 8,
        pause_ms: 2000,
        bin: None,
        keep: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match flag.as_str() {
            "--quick" => (o.workers, o.steps, o.pause_ms) = (4, 5, 1000),
            "--pause-ms" => o.pause_ms = value().parse().unwrap_or(o.pause_ms),
            "--workers" => o.workers = value().parse().unwrap_or(o.workers),
            "--steps" => o.steps = value().parse().unwrap_or(o.steps),
            "--kill-percent" => o.kill_percent = value().parse().unwrap_or(o.kill_percent),
            "--bin" => o.bin = Some(PathBuf::from(value())),
            "--keep" => o.keep = true,
            other => eprintln!("soak: ignoring {other}"),
        }
    }
    o
}

/// What one worker did.
#[derive(Default)]
struct Worker {
    /// (step, record id, spooled) of every command that exited 0.
    saved: Vec<(usize, String, bool)>,
    /// The last step the worker knows is done: saved, or (killed) found by `resume`.
    done: Option<usize>,
    killed: usize,
    failed: usize,
    resumes: usize,
    redone: usize,
}

fn main() {
    let o = opts();
    let Some(bin) = machine::binary(o.bin.clone()) else {
        println!(
            "soak: no release binary; run `cargo build --release --locked --bin forgestate` \
             (or pass --bin PATH)"
        );
        return;
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return println!("soak: cannot start the async runtime: {e}"),
    };
    let fake = runtime.block_on(FakeForge::start());
    let proxy = Arc::new(runtime.block_on(FaultProxy::start(
        fake.addr(),
        35,
        Duration::from_millis(1500),
    )));
    let root = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => return println!("soak: cannot make a scratch directory: {e}"),
    };
    let config = root.path().join("soak.toml");
    if let Err(e) = std::fs::write(&config, CONFIG) {
        return println!("soak: cannot write {}: {e}", config.display());
    }
    let setup = Arc::new(Setup {
        bin,
        url: proxy.uri(),
        token: BOT_TOKEN.to_string(),
        config,
    });
    let total = o.workers * o.steps;
    println!(
        "soak: {} workers × {} steps, kill -9 in ~{}% of commands, binary {}",
        o.workers,
        o.steps,
        o.kill_percent,
        setup.bin.display()
    );
    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicUsize::new(0));

    let schedule = {
        let (proxy, done) = (proxy.clone(), done.clone());
        runtime.spawn(async move {
            for (mode, ms) in WINDOWS.iter().cycle() {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                proxy.set(*mode);
                tokio::time::sleep(Duration::from_millis(*ms)).await;
            }
            proxy.set(Mode::Calm);
        })
    };
    let workers: Vec<_> = (0..o.workers)
        .map(|w| {
            let m = Machine::new(setup.clone(), root.path().join(format!("w{w:02}")));
            let progress = progress.clone();
            let pace = Pace {
                steps: o.steps,
                kill_percent: o.kill_percent,
                pause_ms: o.pause_ms,
            };
            std::thread::spawn(move || work(&m, w, &pace, &progress))
        })
        .collect();
    let supervisor = {
        let m = Machine::new(setup.clone(), root.path().join("supervisor"));
        let (done, progress) = (done.clone(), progress.clone());
        std::thread::spawn(move || supervise(&m, &done, &progress, total))
    };
    let reports: Vec<Worker> = workers
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    done.store(true, Ordering::Relaxed);
    let (status_runs, status_ok, rotated) = supervisor.join().unwrap_or_default();
    let _ = runtime.block_on(schedule);
    proxy.set(Mode::Calm);
    let worked = started.elapsed();

    // Every worker flushes what it spooled, with the faults gone.
    let mut waiting = 0;
    for w in 0..o.workers {
        let m = Machine::new(setup.clone(), root.path().join(format!("w{w:02}")));
        let _ = m.run(&["flush", "--json"]);
        waiting += m.outbox_len();
    }
    // Every comment on the fake, and when each closed issue closed.
    let forge = || {
        let s = fake.state();
        let comments = s.comments.iter();
        tally::Forge {
            comments: comments
                .map(|c| (c.issue, c.created, c.body.clone()))
                .collect(),
            closed_at: s
                .issues
                .iter()
                .filter(|i| i.closed)
                .map(|i| (i.number, i.closed_at.unwrap_or(i64::MAX)))
                .collect(),
        }
    };
    // A fresh machine reads everything back, now and (the fake's clock moved on) an hour later.
    let read = |name: &str| {
        let fresh = Machine::new(setup.clone(), root.path().join(name));
        tally::Reading {
            listed: fresh.list(),
            resumed: (0..o.workers).map(|w| fresh.resume_step(w)).collect(),
        }
    };
    let now = (read("fresh"), forge());
    fake.state().clock_offset += 3600;
    let later = (read("fresh-later"), forge());
    let open = fake.open_issues_titled(forgestate::defaults::TITLE);
    let issues: Vec<String> = {
        let s = fake.state();
        let t0 = s.issues.iter().map(|i| i.created).min().unwrap_or_default();
        s.issues
            .iter()
            .map(|i| {
                let n = s.comments.iter().filter(|c| c.issue == i.number).count();
                let state = match i.closed_at {
                    Some(at) if i.closed => format!("closed at +{}s", at - t0),
                    _ => "open".to_string(),
                };
                format!("#{} made at +{}s, {state}, {n}c", i.number, i.created - t0)
            })
            .collect()
    };

    // The figures.
    let work = tally::Work {
        saved: reports.iter().map(|r| r.saved.clone()).collect(),
        done: reports.iter().map(|r| r.done).collect(),
    };
    let saved = &work.saved;
    let count = saved.iter().map(Vec::len).sum::<usize>();
    let spooled = saved.iter().flatten().filter(|s| s.2).count();
    let sum = |f: fn(&Worker) -> usize| reports.iter().map(f).sum::<usize>();

    println!("workers done in {:.1} s", worked.as_secs_f64());
    let faults: Vec<String> = proxy
        .applied()
        .iter()
        .map(|(m, n)| format!("{} {n}", m.name()))
        .collect();
    println!("requests through the proxy: {}", faults.join(", "));
    println!(
        "checkpoint commands killed: {}, failed: {}; resumes after a restart: {}, steps redone: \
         {} (the others had landed before the kill: not counted as saved below)",
        sum(|r| r.killed),
        sum(|r| r.failed),
        sum(|r| r.resumes),
        sum(|r| r.redone)
    );
    println!(
        "supervisor: status ran {status_runs} times ({status_ok} exit 0); rotate: {}",
        rotated.as_deref().unwrap_or("not run")
    );
    println!("---");
    println!(
        "records saved:    {count} of {total} steps (posted {}, spooled {spooled}; still in an \
         outbox after flush: {waiting})",
        count - spooled
    );
    tally::print("at the end", &work, &now.0, &now.1);
    tally::print("an hour later (server time)", &work, &later.0, &later.1);
    println!(
        "open session issues at the end:      {} {open:?}",
        open.len()
    );
    println!("issues (c: comments): {}", issues.join("; "));
    println!("target: 0 lost, 0 invisible, 0 duplicated, 1 open session issue, 0 wrong resumes");
    if o.keep {
        println!("machines kept in {}", root.keep().display());
    }
}

/// How a worker goes.
struct Pace {
    steps: usize,
    kill_percent: u64,
    pause_ms: u64,
}

/// One worker: its steps in order, as a series of commands, some killed.
fn work(m: &Machine, w: usize, pace: &Pace, progress: &AtomicUsize) -> Worker {
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
                progress.fetch_add(1, Ordering::Relaxed);
                step += 1;
                continue;
            }
            Outcome::Killed => report.killed += 1,
            Outcome::Failed => report.failed += 1,
        }
        // A restarted worker asks where it is before redoing anything.
        report.resumes += 1;
        match m.resume_step(w) {
            Some(last) if last >= step => {
                report.done = Some(last);
                step = last + 1;
            }
            _ => report.redone += 1,
        }
    }
    report
}

/// The supervisor: `status` every second; `rotate` once half of the steps are saved. Returns
/// (status runs, of which exit 0, how the rotation went).
fn supervise(
    m: &Machine,
    done: &AtomicBool,
    progress: &AtomicUsize,
    total: usize,
) -> (usize, usize, Option<String>) {
    let (mut runs, mut ok, mut rotated) = (0, 0, None);
    let mut last_status: Option<Instant> = None;
    while !done.load(Ordering::Relaxed) {
        if last_status.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            last_status = Some(Instant::now());
            runs += 1;
            if m.run(&["status", "--json"]).is_some_and(|o| o.0 == 0) {
                ok += 1;
            }
        }
        if rotated.is_none() && progress.load(Ordering::Relaxed) * 2 >= total {
            let at = progress.load(Ordering::Relaxed);
            let mut tries = 0;
            let code = loop {
                tries += 1;
                let code = m.run(&["rotate", "--json"]).map_or(-1, |o| o.0);
                if code == 0 || tries == 10 {
                    break code;
                }
                std::thread::sleep(Duration::from_millis(500));
            };
            rotated = Some(format!(
                "after {at} saved steps, exit {code} after {tries} attempt(s)"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (runs, ok, rotated)
}
