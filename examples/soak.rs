//! The soak benchmark of issues #16 and #27: many workers, each a series of `forgestate
//! checkpoint` processes with its own cache and outbox (a machine of its own), against the test
//! suite's fake Forgejo behind a fault-injecting proxy, with the session issue rotating all the
//! while; then a count of what fresh machines read back, and of every stale resume.
//! It prints figures and asserts nothing (exit 0).
//!
//! Run: `cargo run --release --features dev-examples --example soak` (12 workers × 25 steps;
//! `--quick` for 4 × 5;
//! `--workers N`, `--steps N`, `--kill-percent N`, `--pause-ms N` (a worker's work between
//! steps: up to N ms, default 2000), `--rotate-after N` (the machines' `[forge] rotate_after`,
//! default 25; 0 turns automatic rotation off), `--recheck-secs N` (their `recheck_secs`,
//! default 5, so a checkpoint notices the limit soon), `--rotate-every-ms N` (the supervisor's
//! `rotate`, default 6000; 0: never), `--fresh-every N` (a fresh machine resumes a session
//! after every Nth saved step of its worker, default 4), `--bin PATH`, `--keep` to keep the
//! machines' directories with each one's `stderr.log`). It runs
//! `target/release/forgestate`, building it first when it is missing.
//!
//! - Faults roll through windows: calm, a 503 burst (every request), dropped requests,
//!   commit-then-drop (the fake commits, the proxy hangs up), slow answers (some past the
//!   request timeout). Timeouts and retry budgets are short (`soak.toml` below), so faults end
//!   in spooled records as often as in retries.
//! - A worker runs its steps in order. Some commands are killed with SIGKILL while they run; a
//!   killed or failed step is followed by `resume` (as a restarted worker would) and redone only
//!   when `resume` says it was not saved. After each saved step it runs `resume` on its own
//!   machine, and every few steps on a fresh one (`soak/worker.rs`).
//! - Rotations run while the workers write: a checkpoint rotates the issue once it holds more
//!   than `rotate_after` comments, and a supervisor machine runs `forgestate rotate` every few
//!   seconds (a quarter of them killed), besides `forgestate status` every second.
//! - At the end the faults stop, every worker flushes its outbox, a fresh machine (an empty
//!   cache) lists the thread, and a fresh machine of its own resumes each session.
//!
//! Saved: the command exited 0 (posted, or spooled and later flushed). Lost: saved, but on no
//! issue of the fake and in no outbox. Invisible: saved and on an issue, but not listed by the
//! fresh machine. Duplicates: a record `Id` listed twice, or one step listed as two records.
//! Stale: a `resume` answering a step older than the newest the worker knew it had saved (for a
//! fresh machine, saved by a post: a spooled record is not on the forge yet), or a newer step
//! that is on no issue of the fake (`soak/stale.rs`).

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;
#[path = "soak/faults.rs"]
mod faults;
#[path = "soak/machine.rs"]
mod machine;
#[path = "soak/stale.rs"]
mod stale;
#[path = "soak/supervisor.rs"]
mod supervisor;
#[path = "soak/tally.rs"]
mod tally;
#[path = "soak/worker.rs"]
mod worker;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fake_forge::{BOT_TOKEN, FakeForge};
use faults::{FaultProxy, Mode};
use machine::{Machine, Setup};
use worker::{Kind, Pace, Probe, Worker};

/// The configuration every machine uses: short timeouts, so faults cost seconds, not minutes;
/// a low `rotate_after` and a short `recheck_secs`, so checkpoints rotate the issue constantly.
fn config(o: &Opts) -> String {
    format!(
        "[forge]\nconnect_timeout_secs = 1\nrequest_timeout_secs = 2\nretry_budget_secs = 4\n\
         drain_budget_secs = 2\ndrain_max_backoff_secs = 2\nrotate_after = {}\n\
         recheck_secs = {}\n",
        o.rotate_after, o.recheck_secs
    )
}

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
    rotate_after: u64,
    recheck_secs: u64,
    rotate_every_ms: u64,
    fresh_every: usize,
    bin: Option<PathBuf>,
    keep: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        workers: 12,
        steps: 25,
        kill_percent: 8,
        pause_ms: 2000,
        rotate_after: 25,
        recheck_secs: 5,
        rotate_every_ms: 6000,
        fresh_every: 4,
        bin: None,
        keep: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match flag.as_str() {
            "--quick" => {
                (o.workers, o.steps, o.pause_ms) = (4, 5, 1000);
                (o.rotate_after, o.recheck_secs) = (10, 2);
                (o.rotate_every_ms, o.fresh_every) = (3000, 2);
            }
            "--pause-ms" => o.pause_ms = value().parse().unwrap_or(o.pause_ms),
            "--workers" => o.workers = value().parse().unwrap_or(o.workers),
            "--steps" => o.steps = value().parse().unwrap_or(o.steps),
            "--kill-percent" => o.kill_percent = value().parse().unwrap_or(o.kill_percent),
            "--rotate-after" => o.rotate_after = value().parse().unwrap_or(o.rotate_after),
            "--recheck-secs" => o.recheck_secs = value().parse().unwrap_or(o.recheck_secs),
            "--rotate-every-ms" => {
                o.rotate_every_ms = value().parse().unwrap_or(o.rotate_every_ms);
            }
            "--fresh-every" => o.fresh_every = value().parse().unwrap_or(o.fresh_every),
            "--bin" => o.bin = Some(PathBuf::from(value())),
            "--keep" => o.keep = true,
            other => eprintln!("soak: ignoring {other}"),
        }
    }
    o
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
    let config_path = root.path().join("soak.toml");
    if let Err(e) = std::fs::write(&config_path, config(&o)) {
        return println!("soak: cannot write {}: {e}", config_path.display());
    }
    let setup = Arc::new(Setup {
        bin,
        url: proxy.uri(),
        token: BOT_TOKEN.to_string(),
        config: config_path,
    });
    let total = o.workers * o.steps;
    println!(
        "soak: {} workers × {} steps, kill -9 in ~{}% of commands, rotate_after = {}, \
         recheck_secs = {}, supervisor rotate every {} ms, a fresh machine every {} saved steps, \
         binary {}",
        o.workers,
        o.steps,
        o.kill_percent,
        o.rotate_after,
        o.recheck_secs,
        o.rotate_every_ms,
        o.fresh_every,
        setup.bin.display()
    );
    let started = Instant::now();
    // The fake's clock at the start: its times are printed as seconds after it.
    let epoch = fake.state().now();
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
    let machine = |name: &str| Machine::new(setup.clone(), root.path().join(name));
    let workers: Vec<_> = (0..o.workers)
        .map(|w| {
            let m = machine(&format!("w{w:02}"));
            let (setup, progress) = (setup.clone(), progress.clone());
            let pace = Pace {
                steps: o.steps,
                kill_percent: o.kill_percent,
                pause_ms: o.pause_ms,
                fresh_every: o.fresh_every,
                root: root.path().to_path_buf(),
                started,
            };
            std::thread::spawn(move || worker::work(&m, &setup, w, &pace, &progress))
        })
        .collect();
    let supervisor = {
        let m = machine("supervisor");
        let done = done.clone();
        let every = Duration::from_millis(o.rotate_every_ms);
        std::thread::spawn(move || supervisor::supervise(&m, &done, every, 25))
    };
    let reports: Vec<Worker> = workers
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    done.store(true, Ordering::Relaxed);
    let sup = supervisor.join().unwrap_or_default();
    let _ = runtime.block_on(schedule);
    proxy.set(Mode::Calm);
    let worked = started.elapsed();

    // Every worker flushes what it spooled, with the faults gone.
    let waiting: Vec<usize> = (0..o.workers)
        .map(|w| {
            let m = machine(&format!("w{w:02}"));
            let _ = m.run(&["flush", "--json"]);
            m.outbox_len()
        })
        .collect();
    // The supervisor keeps its periodic `rotate` while a rotation is left unfinished.
    let tidy_rotates = supervisor::tidy_up(
        &machine("supervisor"),
        || fake.open_issues_titled(forgestate::defaults::TITLE).len(),
        Duration::from_millis(o.rotate_every_ms.max(1000)),
        Duration::from_secs(90),
    );
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
    // Fresh machines read everything back: one lists the thread, and each session is resumed by
    // a fresh machine of its own; now and (the fake's clock moved on) an hour later.
    let read = |name: &str| {
        let probes: Vec<Probe> = (0..o.workers)
            .map(|w| {
                let fresh = machine(&format!("{name}/w{w:02}"));
                let r = &reports[w];
                Probe {
                    kind: Kind::End,
                    worker: w,
                    at: started.elapsed().as_secs_f64(),
                    machine: fresh.dir().to_path_buf(),
                    reference: if waiting[w] == 0 { r.done } else { r.posted },
                    done: r.done,
                    answer: fresh.resume(w),
                }
            })
            .collect();
        let reading = tally::Reading {
            listed: machine(&format!("{name}/list")).list(),
            resumed: probes
                .iter()
                .map(|p| p.answer.as_ref().and_then(|a| a.step))
                .collect(),
        };
        (reading, probes)
    };
    let now = (read("fresh-end"), forge());
    fake.state().clock_offset += 3600;
    let later = (read("fresh-later"), forge());
    let elapsed = started.elapsed();
    let open = fake.open_issues_titled(forgestate::defaults::TITLE);
    let (issues, comments, rotations) = {
        let s = fake.state();
        let issues: Vec<stale::Issue> = s
            .issues
            .iter()
            .map(|i| {
                let closed = i.closed_at.filter(|_| i.closed).map(|at| at - epoch);
                (i.number, i.created - epoch, closed)
            })
            .collect();
        let comments: Vec<stale::Posted> = s
            .comments
            .iter()
            .map(|c| stale::Posted {
                id: c.id,
                issue: c.issue,
                created: c.created - epoch,
                body: c.body.clone(),
            })
            .collect();
        let rotations = tally::Rotations::of(&s.issues, &s.comments);
        (issues, comments, rotations)
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
    let killed = sum(|r| r.killed) + sup.rotates.get("killed").copied().unwrap_or(0);
    println!(
        "checkpoint commands killed: {}, failed: {}; resumes after a restart: {}, steps redone: \
         {} (the others had landed before the kill: not counted as saved below)",
        sum(|r| r.killed),
        sum(|r| r.failed),
        sum(|r| r.resumes),
        sum(|r| r.redone)
    );
    let rotates: Vec<String> = sup
        .rotates
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!(
        "supervisor: status ran {} times ({} exit 0); rotate ran {} times: {}",
        sup.status_runs,
        sup.status_ok,
        sup.rotates.values().sum::<usize>(),
        rotates.join(", ")
    );
    rotations.print();
    println!("---");
    println!(
        "records saved:    {count} of {total} steps (posted {}, spooled {spooled}; still in an \
         outbox after flush: {})",
        count - spooled,
        waiting.iter().sum::<usize>()
    );
    let (lost, dup) = tally::print("at the end", &work, &now.0.0, &now.1);
    tally::print("an hour later (server time)", &work, &later.0.0, &later.1);
    let probes: Vec<&Probe> = reports
        .iter()
        .flat_map(|r| &r.probes)
        .chain(&now.0.1)
        .chain(&later.0.1)
        .collect();
    let (stale_own, stale_fresh) = stale::print(&probes, &comments, &issues);
    println!(
        "open session issues at the end:      {} {open:?} (the supervisor's rotates after the \
         workers: {tidy_rotates})",
        open.len()
    );
    // How far the thread grew before a rotation caught up: every comment on one issue.
    let largest = comments
        .iter()
        .fold(
            std::collections::BTreeMap::<u64, usize>::new(),
            |mut n, c| {
                *n.entry(c.issue).or_default() += 1;
                n
            },
        )
        .into_iter()
        .max_by_key(|&(issue, n)| (n, std::cmp::Reverse(issue)));
    let (largest_issue, largest_count) = largest.unwrap_or((0, 0));
    let bound = o.rotate_after.saturating_mul(2);
    println!(
        "largest issue: #{largest_issue} with {largest_count} comments ({} twice rotate_after = \
         {bound})",
        match o.rotate_after == 0 || largest_count as u64 <= bound {
            true => "within",
            false => "OVER",
        }
    );
    println!("---");
    println!(
        "summary: {} workers, {count} steps saved of {total}, {} rotations ({} session issues \
         made, {} closed), {killed} commands killed, stale resumes: {stale_own} from the own \
         machine, {stale_fresh} from fresh machines; {lost} lost, {dup} duplicated; {} open \
         session issue(s); largest issue {largest_count} comments (rotate_after {}); wall time \
         {:.1} s",
        o.workers,
        rotations.closing_notes,
        rotations.made,
        rotations.closed,
        open.len(),
        o.rotate_after,
        elapsed.as_secs_f64()
    );
    println!(
        "target: 0 lost, 0 invisible, 0 duplicated, 1 open session issue, 0 stale resumes, the \
         largest issue within twice rotate_after"
    );
    if o.keep {
        stale::dump(&root.path().join("comments.tsv"), &comments);
        println!("machines kept in {}", root.keep().display());
    }
}
