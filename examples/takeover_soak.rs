//! The takeover soak of issue #43: N sessions, each re-dispatched mid-run. A worker saves its
//! steps as a series of `forgestate checkpoint` processes (a machine of its own); once it has
//! saved a third of them, a supervisor machine takes the session over for the next worker
//! (`resume --take-over --writer NEXT`), and the next worker (`FORGESTATE_WRITER=NEXT`, another
//! machine) resumes and saves the rest, while the old worker keeps saving for a while, as a
//! worker that only looked stalled does. Commands of every party are killed with SIGKILL
//! throughout (a killed takeover is run again). In every other session the old worker runs with
//! `[session] check_owner = true`. Then a quiet phase counts, command by command, the requests
//! the fake forge received.
//!
//! It prints figures and asserts nothing (exit 0). Run:
//! `cargo build --release --locked --features dev-examples --example takeover_soak --bin
//! forgestate && target/release/examples/takeover_soak` (8 sessions × 18 steps; `--quick` for
//! 3 × 8; `--sessions N`, `--steps N`, `--stale N` (saves the old worker attempts after the
//! takeover, default 4), `--kill-percent N` (default 8), `--kill-ms N` (a command picked to be
//! killed gets SIGKILL up to N ms after it starts, default 40: a command of the release build
//! against the local fake takes about that long), `--pause-ms N` (a worker's work between
//! steps: up to N ms, default 300), `--rotate-after N` (the machines' `[forge]
//! rotate_after`, default 0: never), `--rounds N` (quiet-phase repetitions, default 5), `--bin
//! PATH`, `--keep`).
//!
//! Figures (targets in the last line it prints):
//! - resumes from a fenced writer: a `resume` (the next worker's, a fresh machine's during the
//!   run, fresh and warm machines' at the end) whose record is listed `fenced: true` at the end;
//! - the old worker's reads after the takeover and how many ended in exit 73;
//! - the old worker's saves after the takeover: posted (plain: fenced, ignored) or refused
//!   (`check_owner`: exit 73, nothing posted);
//! - lost: a save that exited 0 whose record no fresh machine lists; duplicated: a record id
//!   listed twice, or one step of one writer listed as two records;
//! - the requests of each command in the quiet phase, and what a takeover adds.

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;
#[path = "soak/machine.rs"]
#[allow(dead_code)]
mod machine;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use fake_forge::{BOT_TOKEN, FakeForge};
use machine::{Machine, Rng, Setup, names, step_of};

struct Opts {
    sessions: usize,
    steps: usize,
    stale: usize,
    kill_percent: u64,
    pause_ms: u64,
    /// A command to be killed is killed this many ms after it starts, at most.
    kill_ms: u64,
    rotate_after: u64,
    rounds: usize,
    bin: Option<PathBuf>,
    keep: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        sessions: 8,
        steps: 18,
        stale: 4,
        kill_percent: 8,
        pause_ms: 300,
        kill_ms: 40,
        rotate_after: 0,
        rounds: 5,
        bin: None,
        keep: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match flag.as_str() {
            "--quick" => (o.sessions, o.steps, o.stale, o.rounds) = (3, 8, 3, 2),
            "--sessions" => o.sessions = value().parse().unwrap_or(o.sessions),
            "--steps" => o.steps = value().parse().unwrap_or(o.steps),
            "--stale" => o.stale = value().parse().unwrap_or(o.stale),
            "--kill-percent" => o.kill_percent = value().parse().unwrap_or(o.kill_percent),
            "--pause-ms" => o.pause_ms = value().parse().unwrap_or(o.pause_ms),
            "--kill-ms" => o.kill_ms = value().parse().unwrap_or(o.kill_ms).max(1),
            "--rotate-after" => o.rotate_after = value().parse().unwrap_or(o.rotate_after),
            "--rounds" => o.rounds = value().parse().unwrap_or(o.rounds),
            "--bin" => o.bin = Some(PathBuf::from(value())),
            "--keep" => o.keep = true,
            other => eprintln!("takeover_soak: ignoring {other}"),
        }
    }
    o
}

/// The configuration of every machine; `check_owner` adds `[session] check_owner = true`.
fn config(o: &Opts, check_owner: bool) -> String {
    let mut text = format!(
        "[forge]\nconnect_timeout_secs = 2\nrequest_timeout_secs = 10\nretry_budget_secs = 10\n\
         rotate_after = {}\n",
        o.rotate_after
    );
    if check_owner {
        text.push_str("[session]\ncheck_owner = true\n");
    }
    text
}

/// How one command ended.
#[derive(Debug, Clone, PartialEq)]
enum End {
    /// Exit 0, with the answer.
    Ok(serde_json::Value),
    /// Exit 73 with `fenced:` (or any 73: the soak has no other compare-and-set).
    Fenced,
    /// Killed by us.
    Killed,
    /// Any other end.
    Failed(i32),
}

fn run(m: &Machine, args: &[&str], kill: Option<Duration>) -> End {
    match m.run_killing(args, kill) {
        None if kill.is_some() => End::Killed,
        None => End::Failed(-1),
        Some((0, out)) => End::Ok(serde_json::from_str(&out).unwrap_or_default()),
        Some((73, _)) => End::Fenced,
        Some((code, _)) => End::Failed(code),
    }
}

fn checkpoint(m: &Machine, w: usize, step: usize, kill: Option<Duration>) -> End {
    let (agent, session, phase) = names(w, step);
    let set = format!("step={step}");
    let args: [&str; 10] = [
        "checkpoint",
        "--agent",
        &agent,
        "--session",
        &session,
        "--phase",
        &phase,
        "--set",
        &set,
        "--json",
    ];
    run(m, &args, kill)
}

fn resume(m: &Machine, w: usize) -> End {
    let (agent, session, _) = names(w, 0);
    let args: [&str; 6] = ["resume", "--agent", &agent, "--session", &session, "--json"];
    run(m, &args, None)
}

/// Who saved or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Who {
    Old,
    Next,
    Fresh,
    Supervisor,
}

/// One `resume` answer of a reader that must never resume from a fenced writer.
struct Probe {
    who: Who,
    /// The record resumed from (`None`: a fresh start or no answer).
    record: Option<String>,
    ok: bool,
}

impl Probe {
    fn of(who: Who, end: &End) -> Probe {
        match end {
            End::Ok(doc) => Probe {
                who,
                record: doc["record_id"].as_str().map(str::to_string),
                ok: true,
            },
            _ => Probe {
                who,
                record: None,
                ok: false,
            },
        }
    }
}

/// What one session went through.
#[derive(Default)]
struct Session {
    /// (who, step, record id) of every save that exited 0.
    saved: Vec<(Who, usize, String)>,
    probes: Vec<Probe>,
    killed: usize,
    failed: usize,
    /// Takeover runs until one exited 0, and how many of them were killed.
    takeover_runs: usize,
    takeover_killed: usize,
    takeover_id: Option<String>,
    /// The step the takeover continues from, and the step the next worker resumed at.
    from_step: Option<usize>,
    next_resumed: Option<usize>,
    /// The old worker after the takeover: saves posted, saves refused (73), reads and how
    /// many were answered 73, and saves that raced the takeover (started before it ended).
    old_posted_after: usize,
    old_refused: usize,
    old_reads_after: usize,
    old_reads_fenced: usize,
    old_raced: usize,
    check_owner: bool,
    /// The next worker answered exit 73 (it owns the session: must be 0).
    wrongly_fenced: usize,
    /// The newest step the next worker knows is done: saved, or (killed) found by `resume`.
    next_done: Option<usize>,
}

struct Parties {
    old: Machine,
    next: Machine,
    supervisor: Machine,
    fresh_root: PathBuf,
    setup: Arc<Setup>,
}

/// Saves steps `from..to` in order as `who` on `m`, some commands killed; after a killed or
/// failed one, `resume` decides whether to redo the step. Stops at a fenced answer.
#[allow(clippy::too_many_arguments)]
fn steps(
    m: &Machine,
    who: Who,
    w: usize,
    (from, to): (usize, usize),
    o: &Opts,
    rng: &mut Rng,
    s: &mut Session,
    saved_count: Option<&AtomicUsize>,
) {
    let mut step = from;
    let mut attempts = 0;
    while step < to && attempts < (to - from) * 20 {
        attempts += 1;
        std::thread::sleep(Duration::from_millis(rng.below(o.pause_ms + 1)));
        let kill =
            (rng.below(100) < o.kill_percent).then(|| Duration::from_millis(rng.below(o.kill_ms)));
        match checkpoint(m, w, step, kill) {
            End::Ok(doc) => {
                let id = doc["id"].as_str().unwrap_or_default().to_string();
                s.saved.push((who, step, id));
                if who == Who::Next {
                    s.next_done = s.next_done.max(Some(step));
                }
                if let Some(n) = saved_count {
                    n.fetch_add(1, Ordering::Relaxed);
                }
                step += 1;
                continue;
            }
            End::Fenced => {
                s.wrongly_fenced += usize::from(who == Who::Next);
                return;
            }
            End::Killed => s.killed += 1,
            End::Failed(_) => s.failed += 1,
        }
        let answer = resume(m, w);
        s.probes.push(Probe::of(who, &answer));
        match answer {
            End::Ok(doc) => {
                if let Some(last) = doc["phase"].as_str().and_then(step_of)
                    && last >= step
                {
                    if who == Who::Next {
                        s.next_done = s.next_done.max(Some(last));
                    }
                    step = last + 1;
                }
            }
            End::Fenced => {
                s.wrongly_fenced += usize::from(who == Who::Next);
                return;
            }
            _ => {}
        }
    }
}

/// One session: the old worker, the takeover after a third of the steps, the next worker.
fn session(w: usize, p: &Parties, o: &Opts, check_owner: bool) -> Session {
    let mut s = Session {
        check_owner,
        ..Session::default()
    };
    let taken: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    let saved = Arc::new(AtomicUsize::new(0));
    let at = (o.steps / 3).max(1);
    let old = std::thread::scope(|scope| {
        let old = scope.spawn(|| {
            // The old worker: all its steps, unaware, until the stale saves after the takeover
            // are done or it learns it was fenced.
            let mut rng = Rng::new(w as u64 + 1);
            let mut mine = Session::default();
            steps(
                &p.old,
                Who::Old,
                w,
                (0, at),
                o,
                &mut rng,
                &mut mine,
                Some(&saved),
            );
            let mut step = at;
            let mut after = 0;
            while after < o.stale && step < o.steps * 2 {
                std::thread::sleep(Duration::from_millis(rng.below(o.pause_ms + 1)));
                let begun = Instant::now();
                let is_after = taken.get().is_some_and(|t| *t <= begun);
                let kill = (rng.below(100) < o.kill_percent)
                    .then(|| Duration::from_millis(rng.below(o.kill_ms)));
                let end = checkpoint(&p.old, w, step, kill);
                if is_after {
                    after += 1;
                } else if taken.get().is_some() {
                    mine.old_raced += 1;
                }
                match end {
                    End::Ok(doc) => {
                        let id = doc["id"].as_str().unwrap_or_default().to_string();
                        mine.saved.push((Who::Old, step, id));
                        mine.old_posted_after += usize::from(is_after);
                        step += 1;
                    }
                    End::Fenced => {
                        mine.old_refused += usize::from(is_after);
                        break;
                    }
                    End::Killed | End::Failed(_) => {
                        if matches!(end, End::Killed) {
                            mine.killed += 1;
                        } else {
                            mine.failed += 1;
                        }
                        // A restarted worker reads first: after the takeover, it learns.
                        let begun = Instant::now();
                        let answer = resume(&p.old, w);
                        if taken.get().is_some_and(|t| *t <= begun) {
                            mine.old_reads_after += 1;
                            mine.old_reads_fenced += usize::from(answer == End::Fenced);
                            if answer == End::Fenced {
                                break;
                            }
                        }
                        if let End::Ok(doc) = answer
                            && let Some(last) = doc["phase"].as_str().and_then(step_of)
                            && last >= step
                        {
                            step = last + 1;
                        }
                    }
                }
                // Past its stale saves (or when the takeover never came), it reads.
                if after >= o.stale || (taken.get().is_none() && step >= o.steps * 2) {
                    break;
                }
            }
            if taken.get().is_some() {
                let answer = resume(&p.old, w);
                mine.old_reads_after += 1;
                mine.old_reads_fenced += usize::from(answer == End::Fenced);
            }
            mine
        });
        // The supervisor: once the old worker saved a third of its steps, it takes over.
        let mut rng = Rng::new(0x5eed + w as u64);
        while saved.load(Ordering::Relaxed) < at && !old.is_finished() {
            std::thread::sleep(Duration::from_millis(20));
        }
        let (agent, session, _) = names(w, 0);
        let next = format!("next-{w:02}");
        let args: [&str; 9] = [
            "resume",
            "--agent",
            &agent,
            "--session",
            &session,
            "--take-over",
            "--writer",
            &next,
            "--json",
        ];
        while s.takeover_runs < 50 {
            s.takeover_runs += 1;
            let kill = (rng.below(100) < o.kill_percent * 2)
                .then(|| Duration::from_millis(rng.below(o.kill_ms)));
            match run(&p.supervisor, &args, kill) {
                End::Ok(doc) => {
                    s.takeover_id = doc["takeover_id"].as_str().map(str::to_string);
                    s.from_step = doc["phase"].as_str().and_then(step_of);
                    let _ = taken.set(Instant::now());
                    break;
                }
                End::Killed => s.takeover_killed += 1,
                _ => std::thread::sleep(Duration::from_millis(200)),
            }
        }
        // The next worker starts fenced-in: it resumes, then saves the rest.
        let first = resume(&p.next, w);
        s.probes.push(Probe::of(Who::Next, &first));
        let from = match &first {
            End::Ok(doc) => doc["phase"].as_str().and_then(step_of),
            _ => None,
        };
        s.next_resumed = from;
        let mut rng = Rng::new(0xbeef + w as u64);
        let begin = from.map_or(0, |f| f + 1);
        let (from, to) = (begin, o.steps);
        let mut step = from;
        while step < to {
            let end = (step + 3).min(to);
            steps(
                &p.next,
                Who::Next,
                w,
                (step, end),
                o,
                &mut rng,
                &mut s,
                None,
            );
            step = end;
            // Every few steps a fresh machine resumes the session.
            let fresh = Machine::new(
                p.setup.clone(),
                p.fresh_root.join(format!("w{w:02}-s{step:02}")),
            );
            s.probes.push(Probe::of(Who::Fresh, &resume(&fresh, w)));
        }
        old.join().unwrap_or_default()
    });
    s.saved.extend(old.saved);
    s.probes.extend(old.probes);
    s.killed += old.killed;
    s.failed += old.failed;
    s.old_posted_after = old.old_posted_after;
    s.old_refused = old.old_refused;
    s.old_reads_after = old.old_reads_after;
    s.old_reads_fenced = old.old_reads_fenced;
    s.old_raced = old.old_raced;
    s
}

/// Requests the fake received, by method.
type Counts = BTreeMap<String, usize>;

fn counts(runtime: &tokio::runtime::Runtime, fake: &FakeForge) -> Counts {
    let mut n = Counts::new();
    for r in runtime.block_on(fake.requests()) {
        *n.entry(r.method.to_string()).or_default() += 1;
    }
    n
}

fn minus(a: &Counts, b: &Counts) -> Counts {
    a.iter()
        .map(|(k, v)| (k.clone(), v - b.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

fn show(c: &Counts, rounds: usize) -> String {
    let total: usize = c.values().sum();
    let parts: Vec<String> = c
        .iter()
        .map(|(k, v)| format!("{k} {:.1}", *v as f64 / rounds as f64))
        .collect();
    format!(
        "{:.1} ({})",
        total as f64 / rounds as f64,
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    )
}

fn main() {
    let o = opts();
    let Some(bin) = machine::binary(o.bin.clone()) else {
        println!(
            "takeover_soak: no release binary; run `cargo build --release --locked --bin \
             forgestate` (or pass --bin PATH)"
        );
        return;
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return println!("takeover_soak: cannot start the async runtime: {e}"),
    };
    let fake = runtime.block_on(FakeForge::start());
    let root = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => return println!("takeover_soak: cannot make a scratch directory: {e}"),
    };
    let setup = |name: &str, check_owner: bool| -> Option<Arc<Setup>> {
        let path = root.path().join(name);
        std::fs::write(&path, config(&o, check_owner)).ok()?;
        Some(Arc::new(Setup {
            bin: bin.clone(),
            url: fake.uri(),
            token: BOT_TOKEN.to_string(),
            config: path,
        }))
    };
    let (Some(plain), Some(checking)) = (setup("plain.toml", false), setup("check.toml", true))
    else {
        return println!("takeover_soak: cannot write the configuration files");
    };
    println!(
        "takeover_soak: {} sessions × {} steps, takeover after {} saved steps, the old worker \
         saves {} more after it ([session] check_owner in every other session), kill -9 in ~{}% \
         of commands (takeovers ~{}%) within {} ms of their start, rotate_after = {}, binary {}",
        o.sessions,
        o.steps,
        (o.steps / 3).max(1),
        o.stale,
        o.kill_percent,
        o.kill_percent * 2,
        o.kill_ms,
        o.rotate_after,
        bin.display()
    );
    let started = Instant::now();
    let dir = |name: String| root.path().join(name);
    let reports: Vec<Session> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..o.sessions)
            .map(|w| {
                let check_owner = w % 2 == 1;
                let old_setup = if check_owner { &checking } else { &plain };
                let parties = Parties {
                    old: Machine::new(old_setup.clone(), dir(format!("w{w:02}-old"))),
                    next: Machine::new(plain.clone(), dir(format!("w{w:02}-next")))
                        .writing_as(format!("next-{w:02}")),
                    supervisor: Machine::new(plain.clone(), dir(format!("w{w:02}-sup"))),
                    fresh_root: dir("fresh".into()),
                    setup: plain.clone(),
                };
                let o = &o;
                scope.spawn(move || session(w, &parties, o, check_owner))
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let worked = started.elapsed();

    // The end: every session read by warm and fresh machines.
    let mut end_ok = 0;
    let mut end_wrong: Vec<String> = Vec::new();
    let mut end_probes: Vec<(usize, Probe)> = Vec::new();
    let mut old_end_fenced = 0;
    for (w, s) in reports.iter().enumerate() {
        let check_owner = s.check_owner;
        let old_setup = if check_owner { &checking } else { &plain };
        let old = Machine::new(old_setup.clone(), dir(format!("w{w:02}-old")));
        old_end_fenced += usize::from(resume(&old, w) == End::Fenced);
        let sup = Machine::new(plain.clone(), dir(format!("w{w:02}-sup")));
        end_probes.push((w, Probe::of(Who::Supervisor, &resume(&sup, w))));
        let fresh = Machine::new(plain.clone(), dir(format!("end/w{w:02}")));
        let answer = resume(&fresh, w);
        // The owner's line ends at the next worker's newest step, or where it resumed (a
        // takeover late enough leaves it nothing to do).
        let newest = s.next_done.or(s.next_resumed);
        match (&answer, newest) {
            (End::Ok(doc), Some(step)) if doc["phase"].as_str().and_then(step_of) == Some(step) => {
                end_ok += 1;
            }
            (End::Ok(doc), newest) => end_wrong.push(format!(
                "session {w:02}: the next worker's last step {newest:?}, a fresh machine resumed \
                 at {} (record {}, fenced {}, warnings {})",
                doc["phase"], doc["record_id"], doc["fenced"], doc["warnings"]
            )),
            (end, _) => {
                end_wrong.push(format!("session {w:02}: a fresh machine's resume: {end:?}"))
            }
        }
        end_probes.push((w, Probe::of(Who::Fresh, &answer)));
    }
    // A fresh machine lists everything.
    let lister = Machine::new(plain.clone(), dir("end/list".into()));
    let listed: Vec<serde_json::Value> = match run(&lister, &["list", "--all", "--json"], None) {
        End::Ok(doc) => doc["records"].as_array().cloned().unwrap_or_default(),
        _ => Vec::new(),
    };
    let fenced_ids: std::collections::BTreeSet<String> = listed
        .iter()
        .filter(|r| r["fenced"] == true)
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut steps_seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in &listed {
        let text = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        *seen.entry(text("id")).or_default() += 1;
        if r["kind"] == "checkpoint" {
            *steps_seen
                .entry((text("session"), text("writer"), text("phase")))
                .or_default() += 1;
        }
    }
    let duplicated =
        seen.values().filter(|n| **n > 1).count() + steps_seen.values().filter(|n| **n > 1).count();
    for (key, n) in steps_seen.iter().filter(|(_, n)| **n > 1).take(8) {
        println!("duplicated: {key:?} listed {n} times");
    }
    let saved: Vec<&(Who, usize, String)> = reports.iter().flat_map(|s| &s.saved).collect();
    let lost = saved
        .iter()
        .filter(|(_, _, id)| !seen.contains_key(id))
        .count();
    let probes: Vec<&Probe> = reports
        .iter()
        .flat_map(|s| &s.probes)
        .chain(end_probes.iter().map(|(_, p)| p))
        .filter(|p| p.who != Who::Old)
        .collect();
    let from_fenced = probes
        .iter()
        .filter(|p| p.record.as_ref().is_some_and(|r| fenced_ids.contains(r)))
        .count();
    let answered = probes.iter().filter(|p| p.ok).count();
    let sum = |f: fn(&Session) -> usize| reports.iter().map(f).sum::<usize>();
    let by = |check: bool, f: fn(&Session) -> usize| {
        reports
            .iter()
            .filter(|s| s.check_owner == check)
            .map(f)
            .sum::<usize>()
    };
    let total_requests = counts(&runtime, &fake);

    // The quiet phase: one command at a time, its requests counted at the fake.
    let quiet = Instant::now();
    let mut cost: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut measure = |name: &'static str, f: &dyn Fn() -> End| -> End {
        let before = counts(&runtime, &fake);
        let end = f();
        let delta = minus(&counts(&runtime, &fake), &before);
        let slot = cost.entry(name).or_default();
        for (k, v) in delta {
            *slot.entry(k).or_default() += v;
        }
        end
    };
    let mut quiet_ok = true;
    for r in 0..o.rounds {
        let w = o.sessions + r;
        let (agent, session, _) = names(w, 0);
        let next = format!("next-{w:02}");
        let old = Machine::new(plain.clone(), dir(format!("q{w:02}-old")));
        let old_checking = Machine::new(checking.clone(), dir(format!("q{w:02}-old")));
        let sup = Machine::new(plain.clone(), dir(format!("q{w:02}-sup")));
        let new = Machine::new(plain.clone(), dir(format!("q{w:02}-next"))).writing_as(&next);
        // Warm every machine first (each has read the thread once).
        for step in 0..2 {
            quiet_ok &= matches!(checkpoint(&old, w, step, None), End::Ok(_));
        }
        quiet_ok &= matches!(resume(&old, w), End::Ok(_));
        quiet_ok &= matches!(resume(&sup, w), End::Ok(_));
        quiet_ok &= matches!(resume(&new, w), End::Ok(_));
        let e = measure("old worker: plain checkpoint (owner)", &|| {
            checkpoint(&old, w, 2, None)
        });
        quiet_ok &= matches!(e, End::Ok(_));
        let e = measure("old worker: check_owner checkpoint (owner)", &|| {
            checkpoint(&old_checking, w, 3, None)
        });
        quiet_ok &= matches!(e, End::Ok(_));
        let e = measure("supervisor: resume (warm)", &|| resume(&sup, w));
        quiet_ok &= matches!(e, End::Ok(_));
        let args: [&str; 9] = [
            "resume",
            "--agent",
            &agent,
            "--session",
            &session,
            "--take-over",
            "--writer",
            &next,
            "--json",
        ];
        let e = measure("supervisor: resume --take-over (warm)", &|| {
            run(&sup, &args, None)
        });
        quiet_ok &= matches!(e, End::Ok(_));
        let e = measure("next worker: resume (warm)", &|| resume(&new, w));
        quiet_ok &= matches!(e, End::Ok(_));
        let e = measure("next worker: checkpoint", &|| checkpoint(&new, w, 4, None));
        quiet_ok &= matches!(e, End::Ok(_));
        let e = measure("old worker: plain checkpoint (fenced: posted)", &|| {
            checkpoint(&old, w, 4, None)
        });
        quiet_ok &= matches!(e, End::Ok(_));
        let e = measure(
            "old worker: check_owner checkpoint (fenced: refused)",
            &|| checkpoint(&old_checking, w, 5, None),
        );
        quiet_ok &= e == End::Fenced;
        let e = measure("old worker: resume (fenced: exit 73)", &|| resume(&old, w));
        quiet_ok &= e == End::Fenced;
        let fresh = Machine::new(plain.clone(), dir(format!("q{w:02}-fresh")));
        let e = measure("fresh machine: resume (cold)", &|| resume(&fresh, w));
        quiet_ok &= matches!(e, End::Ok(_));
    }
    let quiet_secs = quiet.elapsed().as_secs_f64();

    // The figures.
    println!("sessions done in {:.1} s", worked.as_secs_f64());
    for (w, s) in reports.iter().enumerate() {
        let last = |who: Who| {
            s.saved
                .iter()
                .filter(|x| x.0 == who)
                .map(|x| x.1)
                .max()
                .map_or("-".to_string(), |n| n.to_string())
        };
        println!(
            "  session {w:02}{}: takeover from step {:?} ({} run(s)), next worker resumed at {:?}, \
             old worker's last step {}, next worker's last step {}",
            if s.check_owner { " (check_owner)" } else { "" },
            s.from_step,
            s.takeover_runs,
            s.next_resumed,
            last(Who::Old),
            last(Who::Next)
        );
    }
    println!(
        "commands killed: {} (takeovers: {} of {} runs), failed: {}",
        sum(|s| s.killed) + sum(|s| s.takeover_killed),
        sum(|s| s.takeover_killed),
        sum(|s| s.takeover_runs),
        sum(|s| s.failed)
    );
    println!(
        "takeovers that ended in exit 0: {} of {}; the next worker resumed at the takeover's \
         step in {} of them (in the others an old save landed between the takeover's read and \
         its post: before the takeover in the thread, so not fenced)",
        reports.iter().filter(|s| s.takeover_id.is_some()).count(),
        o.sessions,
        reports
            .iter()
            .filter(|s| s.from_step.is_some() && s.from_step == s.next_resumed)
            .count()
    );
    println!(
        "old worker after the takeover, plain:       {} saves posted (fenced), {} reads, {} \
         answered exit 73",
        by(false, |s| s.old_posted_after),
        by(false, |s| s.old_reads_after),
        by(false, |s| s.old_reads_fenced)
    );
    println!(
        "old worker after the takeover, check_owner: {} saves posted, {} refused with exit 73, \
         {} reads, {} answered exit 73",
        by(true, |s| s.old_posted_after),
        by(true, |s| s.old_refused),
        by(true, |s| s.old_reads_after),
        by(true, |s| s.old_reads_fenced)
    );
    println!(
        "old worker's saves that raced the takeover (begun before it ended): {}",
        sum(|s| s.old_raced)
    );
    println!(
        "next workers answered exit 73 (must be 0): {}",
        sum(|s| s.wrongly_fenced)
    );
    println!(
        "the old machines' reads at the end: {} of {} answered exit 73",
        old_end_fenced,
        reports.len()
    );
    println!("---");
    println!(
        "records saved (exit 0): {} ({} by old workers, {} by next workers); listed by a fresh \
         machine: {} ({} fenced)",
        saved.len(),
        saved.iter().filter(|s| s.0 == Who::Old).count(),
        saved.iter().filter(|s| s.0 == Who::Next).count(),
        listed.len(),
        fenced_ids.len()
    );
    println!("lost: {lost}, duplicated: {duplicated}");
    println!(
        "resumes by the next workers, fresh and warm machines: {} ({} answered); from a fenced \
         writer: {from_fenced}",
        probes.len(),
        answered
    );
    println!(
        "sessions a fresh machine resumes at the next worker's last step at the end: {end_ok} of \
         {}",
        reports.len()
    );
    for line in end_wrong.iter().take(8) {
        println!("  {line}");
    }
    println!("requests during the run: {}", show(&total_requests, 1));
    println!("---");
    println!(
        "requests per command, quiet phase (mean of {} rounds, {:.1} s; all as expected: {}):",
        o.rounds, quiet_secs, quiet_ok
    );
    for (name, c) in &cost {
        println!("  {name:<56} {}", show(c, o.rounds));
    }
    let total = |name: &str| cost.get(name).map_or(0, |c| c.values().sum::<usize>());
    let extra = total("supervisor: resume --take-over (warm)") as f64
        - total("supervisor: resume (warm)") as f64;
    println!(
        "a takeover costs {:.1} request(s) over a warm resume; check_owner costs {:.1} over a \
         plain checkpoint",
        extra / o.rounds as f64,
        (total("old worker: check_owner checkpoint (owner)") as f64
            - total("old worker: plain checkpoint (owner)") as f64)
            / o.rounds as f64
    );
    println!("---");
    println!(
        "summary: {} sessions × {} steps, {} takeovers, resumes from a fenced writer: \
         {from_fenced}, lost: {lost}, duplicated: {duplicated}, check_owner saves posted after \
         the takeover: {}, old reads after the takeover answered 73: {} of {}; wall time {:.1} s",
        o.sessions,
        o.steps,
        reports.iter().filter(|s| s.takeover_id.is_some()).count(),
        by(true, |s| s.old_posted_after),
        sum(|s| s.old_reads_fenced),
        sum(|s| s.old_reads_after),
        started.elapsed().as_secs_f64()
    );
    println!(
        "target: 0 resumes from a fenced writer, 0 lost, 0 duplicated, 0 check_owner saves \
         posted after the takeover, every old read after it answered 73"
    );
    if o.keep {
        println!("machines kept in {}", root.keep().display());
    }
}
