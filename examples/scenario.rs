//! The scenario benchmark of issue #10: what reads and writes cost on long threads, behind a
//! slow forge. Prints figures and asserts nothing.
//!
//! Run: `cargo run --release --example scenario` (flags: `--latency-ms 20`, `--sizes
//! 1000,10000,50000`, `--flood 270` for the "no other account can break reads" run; `--flood 0`
//! skips it). It builds `target/release/forgestate` first.
//!
//! For each thread size N it starts the test suite's fake Forgejo on 127.0.0.1 with a fixed
//! latency added to every answer, seeds the session issue with N seed-format comments (rendered by
//! forgestate itself, checkpoints and health records of 50 (agent, session) pairs) straight into
//! the fake's state, and measures, each in a fresh child process:
//!
//! 1. a steady-state `checkpoint` (the issue number already cached);
//! 2. a cold `resume` (an empty cache directory);
//! 3. a warm `resume` with 5 comments new since the previous read by the same cache directory;
//! 4. the naive strategy, fetching and parsing everything as the seed does: `resume --refresh`
//!    when the binary has that flag, else plain `resume` (which, before the read cache, is it);
//! 5. the floor: `curl` of `GET .../comments?since=<now>`, with nothing new.
//!
//! Plus `curl` of the whole thread (the bare download a cold read is compared with).
//! Requests are counted from the fake's request log; wall time is spawn to exit; peak RSS is the
//! child's own `VmHWM` (`/proc/PID/status`), sampled every millisecond until it exits (`wait4`'s
//! `ru_maxrss` would carry this process's peak across fork and exec). Rotation is off
//! (`rotate_after = 0`), so reads see the whole thread of N comments.

#[path = "../tests/fake_forge/mod.rs"]
#[allow(unused_imports)]
mod fake_forge;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use fake_forge::{BOT_TOKEN, CommentRow, FakeForge, OWNER, REPO, session};
use forgestate::format::{Record, Renderer};
use serde_json::json;

/// One measured child process.
struct Run {
    requests: usize,
    wall: Duration,
    rss_kib: i64,
    ok: bool,
}

struct Opts {
    latency: Duration,
    sizes: Vec<usize>,
    flood: usize,
}

fn opts() -> Opts {
    let mut o = Opts {
        latency: Duration::from_millis(20),
        sizes: vec![1_000, 10_000, 50_000],
        flood: 270,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or_default();
        match pair[0].as_str() {
            "--latency-ms" => o.latency = Duration::from_millis(value.parse().unwrap_or(20)),
            "--sizes" => o.sizes = value.split(',').filter_map(|n| n.parse().ok()).collect(),
            "--flood" => o.flood = value.parse().unwrap_or(0),
            other => eprintln!("scenario: ignoring {other}"),
        }
    }
    o
}

fn main() {
    let o = opts();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        // With the example itself, so the binary reuses the dependencies just built for it.
        .args(["build", "--release", "--quiet", "--bin", "forgestate"])
        .args(["--example", "scenario"])
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("scenario: cannot build target/release/forgestate");
        return;
    }
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/forgestate");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        println!(
            "# forgestate scenario benchmark: latency {} ms per answer, {}",
            o.latency.as_millis(),
            Utc::now().format("%Y-%m-%d %H:%M UTC")
        );
        println!("# machine: {}", machine());
        let refresh = supports_refresh(&bin);
        println!(
            "# naive = {}",
            if refresh {
                "resume --refresh"
            } else {
                "resume (no read cache in this build: every read is naive)"
            }
        );
        let bodies = bodies(o.sizes.iter().copied().max().unwrap_or(0));
        for &n in &o.sizes {
            scenario(&bin, &bodies[..n], o.latency, refresh).await;
        }
        if o.flood > 0 {
            flood(&bin, o.flood, o.latency).await;
        }
    });
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} cores available, {}", std::env::consts::OS)
}

fn supports_refresh(bin: &Path) -> bool {
    Command::new(bin)
        .args(["resume", "--help"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--refresh"))
}

const AGENTS: [&str; 10] = [
    "implementation-worker",
    "implementation-orchestrator",
    "pr-self-reviewer",
    "issue-triager",
    "test-runner",
    "docs-writer",
    "dependency-bumper",
    "release-manager",
    "security-scanner",
    "refactor-worker",
];

/// `n` realistic bodies: 50 (agent, session) pairs taking turns, mostly checkpoints through the
/// seed's implementation phases, every tenth a health record, each with its own record `Id`.
fn bodies(n: usize) -> Vec<String> {
    let renderer = Renderer::embedded().expect("the built-in templates");
    let phases = [
        "clone_complete",
        "subtask_1_complete",
        "subtask_2_complete",
        "all_subtasks_complete",
        "commit_complete",
        "pr_created",
    ];
    (0..n)
        .map(|i| {
            let pair = i % 50;
            let (agent, sess) = (AGENTS[pair % 10], format!("sess-{:04}", pair / 10));
            let step = i / 50;
            let record = if i % 10 == 9 {
                let metrics = json!({"cycle_count": step, "active_workers": 3,
                    "completed_issues": step / 2, "failed_issues": 0, "queue_depth": 7});
                Record::health(agent, &sess, "Active", metrics, None)
            } else {
                let data = json!({
                    "issue_number": 1000 + pair,
                    "branch_name": format!("feature/issue-{}-step-{step}", 1000 + pair),
                    "completed_subtasks": (1..=(step % 8) as u64).collect::<Vec<_>>(),
                    "working_dir": format!("/var/lib/agents/{agent}/{sess}/workspace"),
                    "commit_sha": format!("{:040x}", i * 7919),
                });
                Record::checkpoint(agent, &sess, phases[step % phases.len()], data)
            };
            renderer
                .render(&record.expect("a valid record"))
                .expect("renders")
        })
        .collect()
}

/// Puts `bodies` on issue `issue` as the bot's comments, one per second up to a minute ago.
fn seed(fake: &FakeForge, issue: u64, bodies: &[String]) {
    let mut s = fake.state();
    let start = s.now() - 60 - bodies.len() as i64;
    for (i, body) in bodies.iter().enumerate() {
        let id = s.next_comment_id;
        s.next_comment_id += 3;
        let at = start + i as i64;
        s.comments.push(CommentRow {
            id,
            issue,
            poster: 7,
            body: body.clone(),
            created: at,
            updated: at,
        });
    }
    if let Some(row) = s.issue_mut(issue) {
        row.comments = bodies.len() as i64;
    }
}

/// Runs `bin` (or curl) with `args` in `dir`, measuring it as [`Run`] says.
async fn measure(fake: &FakeForge, program: &Path, args: &[&str], dir: &Path) -> Run {
    let before = fake.requests().await.len();
    let started = Instant::now();
    let child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", dir)
        .env("USER", "bench")
        .env("FORGESTATE_URL", fake.uri())
        .env("FORGESTATE_OWNER", OWNER)
        .env("FORGESTATE_REPO", REPO)
        .env("FORGESTATE_TOKEN", BOT_TOKEN)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("FORGESTATE_CONFIG", bench_config(dir))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let (ok, rss_kib) = match child {
        Ok(child) => tokio::task::spawn_blocking(move || reap(child.id()))
            .await
            .unwrap_or((false, 0)),
        Err(_) => (false, 0),
    };
    let wall = started.elapsed();
    let requests = fake.requests().await.len() - before;
    Run {
        requests,
        wall,
        rss_kib,
        ok,
    }
}

/// A configuration file with rotation off: the benchmark measures reads of a thread of N
/// comments, which automatic rotation (default past 2,000) would otherwise cut short.
fn bench_config(dir: &Path) -> PathBuf {
    let path = dir.join("bench.toml");
    if !path.exists() {
        let _ = std::fs::write(&path, "[forge]\nrotate_after = 0\n");
    }
    path
}

/// Waits for `pid`: whether it exited 0, and its peak resident set in KiB. The peak is the
/// child's own `VmHWM` from `/proc/PID/status`, sampled every millisecond until it exits:
/// `wait4(2)`'s `ru_maxrss` would carry this (large) process's own peak across fork and exec.
fn reap(pid: u32) -> (bool, i64) {
    let status_file = format!("/proc/{pid}/status");
    let mut peak = 0;
    let mut status = 0;
    loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        }) {
            peak = peak.max(kib);
        }
        // SAFETY: waitpid on our own child's pid, with a valid status pointer.
        let got = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
        if got == pid as i32 {
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            return (ok, peak);
        }
        if got < 0 {
            return (false, peak);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn row(what: &str, r: &Run) {
    println!(
        "| {what:<34} | {:>8} | {:>9.3} | {:>8.1} |{}",
        r.requests,
        r.wall.as_secs_f64(),
        r.rss_kib as f64 / 1024.0,
        if r.ok { "" } else { " FAILED" }
    );
}

fn comments_url(fake: &FakeForge, issue: u64) -> String {
    format!(
        "{}/api/v1/repos/{OWNER}/{REPO}/issues/{issue}/comments",
        fake.uri()
    )
}

async fn curl(fake: &FakeForge, url: &str, dir: &Path) -> Run {
    let auth = format!("Authorization: token {BOT_TOKEN}");
    let args = ["-sf", "-o", "/dev/null", "-H", &auth, url];
    measure(fake, Path::new("curl"), &args, dir).await
}

async fn scenario(bin: &Path, bodies: &[String], latency: Duration, refresh: bool) {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    seed(&fake, issue, bodies);
    fake.state().latency = latency;
    let work = tempfile::tempdir().expect("a temporary directory");
    let (warm, cold) = (work.path().join("warm"), work.path().join("cold"));
    for d in [&warm, &cold] {
        std::fs::create_dir_all(d).expect("a work directory");
    }
    let save = [
        "checkpoint",
        "--agent",
        "implementation-worker",
        "--session",
        "sess-0000",
        "--phase",
        "commit_complete",
        "--set",
        "commit_sha=abc123",
    ];
    let resume = [
        "resume",
        "--agent",
        "implementation-worker",
        "--session",
        "sess-0000",
        "--json",
    ];
    println!(
        "\n## N = {} comments ({:.1} MB of JSON)\n",
        bodies.len(),
        thread_bytes(&fake, issue) as f64 / 1e6
    );
    println!("| operation                          | requests |  wall (s) | RSS (MB) |");
    println!("|------------------------------------|---------:|----------:|---------:|");
    measure(&fake, bin, &save, &warm).await; // finds and caches the issue number
    let checkpoint = measure(&fake, bin, &save, &warm).await;
    row("1. checkpoint (steady state)", &checkpoint);
    let cold_run = measure(&fake, bin, &resume, &cold).await;
    row("2. resume, cold (no cache)", &cold_run);
    measure(&fake, bin, &resume, &warm).await; // the read the warm one follows
    for body in self::bodies(5) {
        fake.add_comment(issue, "ca-bot", &body);
    }
    let warm_run = measure(&fake, bin, &resume, &warm).await;
    row("3. resume, warm (5 new comments)", &warm_run);
    let mut naive_args = resume.to_vec();
    if refresh {
        naive_args.push("--refresh");
    }
    let naive = measure(&fake, bin, &naive_args, &warm).await;
    row("4. naive (fetch and parse all)", &naive);
    let url = comments_url(&fake, issue);
    let now = (Utc::now() + chrono::Duration::seconds(2))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let floor = curl(&fake, &format!("{url}?since={now}"), work.path()).await;
    row("5. floor: curl since=now, nothing new", &floor);
    let bare = curl(&fake, &url, work.path()).await;
    row("   curl of the whole thread", &bare);
    let ratio = |a: &Run, b: &Run| a.wall.as_secs_f64() / b.wall.as_secs_f64().max(1e-9);
    println!();
    println!(
        "- warm resume speedup over naive: {:.2}x",
        ratio(&naive, &warm_run)
    );
    println!(
        "- warm resume / floor: {:.2}x (target at most 1.3x)",
        ratio(&warm_run, &floor)
    );
    println!(
        "- cold resume / bare download of the whole thread: {:.2}x (target at most 1.5x)",
        ratio(&cold_run, &bare)
    );
    println!(
        "- cold resume peak RSS: {:.1} MB (target at N = 50k: at most 100 MB)",
        cold_run.rss_kib as f64 / 1024.0
    );
}

fn thread_bytes(fake: &FakeForge, issue: u64) -> usize {
    let s = fake.state();
    s.comments
        .iter()
        .filter(|c| c.issue == issue)
        .map(|c| fake_forge::views::comment_text(&s, c).len() + 1)
        .sum()
}

/// `count` comments of 1 MiB from another account, and one checkpoint of ours: the read must
/// still answer (it used to fail with exit 78 past the 256 MiB response cap).
async fn flood(bin: &Path, count: usize, latency: Duration) {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    seed(&fake, issue, &bodies(1));
    let huge = format!(
        "[CHECKPOINT] implementation-worker\n{}",
        "x".repeat(1 << 20)
    );
    for _ in 0..count {
        fake.add_comment(issue, "mallory", &huge[..1 << 20]);
    }
    fake.state().latency = latency;
    let work = tempfile::tempdir().expect("a temporary directory");
    let dir: PathBuf = work.path().to_path_buf();
    let args = [
        "resume",
        "--agent",
        AGENTS[0],
        "--session",
        "sess-0000",
        "--json",
    ];
    println!("\n## {count} comments of 1 MiB from another account, one checkpoint of ours\n");
    println!("| operation                          | requests |  wall (s) | RSS (MB) |");
    println!("|------------------------------------|---------:|----------:|---------:|");
    let run = measure(&fake, bin, &args, &dir).await;
    row("resume, cold", &run);
}
