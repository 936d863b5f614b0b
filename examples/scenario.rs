//! The scenario benchmark of issues #10 and #20: what reads and writes cost on long threads,
//! behind a slow forge, each figure the median of `--runs` (5) whole-process runs and printed
//! next to its floor and its target. Prints figures and asserts nothing.
//!
//! Run: `cargo run --release --features dev-examples --example scenario` (flags:
//! `--latency-ms 20`, `--sizes
//! 1000,10000,50000`, `--runs 5`, `--mcp-max 10000`: the largest thread a long-lived
//! `forgestate mcp` is measured on (20 `resume` calls over one stdio session, `scenario/mcp.rs`),
//! `--flood 270` for the "no other account can break reads" run; `--flood 0` skips it;
//! `--signed 10000`: the signed-thread case's size, `scenario/signed.rs`, and `--local 100000`:
//! the local store's, `scenario/local.rs` (0 skips either); they and every size's figures end in
//! one table of issue #30's rows;
//! `--busy 20000` for the busy-repository run (`scenario/busy.rs`: `--busy-head` 1,000 records on
//! the head, that many comments by another account on another issue since; `--busy 0`, the
//! default, skips it); the run ends with every row of issue #44's table (the cold `resume` at
//! each size, the busy repository's, the cold peak RSS at each size and its spread);
//! `--bin PATH` measures that binary instead of building one (an older build, for a
//! before/after figure);
//! `--serve N` serves a fake seeded with N comments instead, for profiling one command by hand,
//! `scenario/serve.rs`). It builds `target/release/forgestate` first.
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

#[path = "scenario/busy.rs"]
mod busy;
#[path = "scenario/flood.rs"]
mod flood;
#[path = "scenario/local.rs"]
mod local;
#[path = "scenario/mcp.rs"]
mod mcp;
#[path = "scenario/run.rs"]
mod run;
#[path = "scenario/serve.rs"]
mod serve;
#[path = "scenario/signed.rs"]
mod signed;
#[path = "scenario/thread.rs"]
mod thread;

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chrono::Utc;
use fake_forge::{FakeForge, OWNER, REPO, session};
use run::{Run, curl, measure, median};
use thread::{bodies, comments_url, new_posts, seed, thread_bytes};

struct Opts {
    latency: Duration,
    sizes: Vec<usize>,
    flood: usize,
    /// Whole-process runs per figure (the median is reported).
    runs: usize,
    /// The largest thread the long-lived MCP server is measured on.
    mcp_max: usize,
    /// Serve a fake seeded with this many comments instead (`serve.rs`).
    serve: Option<usize>,
    /// Records in the local-store case (`local.rs`; 0 skips it).
    local: usize,
    /// Comments in the signed-thread case (`signed.rs`; 0 skips it).
    signed: usize,
    /// Comments by another account on another issue in the busy-repository run (0: skipped).
    busy: usize,
    /// Records on the head in the busy-repository run.
    busy_head: usize,
    /// The binary to measure, instead of building one.
    bin: Option<PathBuf>,
}

fn opts() -> Opts {
    let mut o = Opts {
        latency: Duration::from_millis(20),
        sizes: vec![1_000, 10_000, 50_000],
        flood: 270,
        runs: 5,
        mcp_max: 10_000,
        serve: None,
        local: 100_000,
        signed: 10_000,
        busy: 0,
        busy_head: 1_000,
        bin: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or_default();
        match pair[0].as_str() {
            "--latency-ms" => o.latency = Duration::from_millis(value.parse().unwrap_or(20)),
            "--sizes" => o.sizes = value.split(',').filter_map(|n| n.parse().ok()).collect(),
            "--flood" => o.flood = value.parse().unwrap_or(0),
            "--runs" => o.runs = value.parse().unwrap_or(5),
            "--mcp-max" => o.mcp_max = value.parse().unwrap_or(10_000),
            "--serve" => o.serve = value.parse().ok(),
            "--local" => o.local = value.parse().unwrap_or(0),
            "--signed" => o.signed = value.parse().unwrap_or(0),
            "--busy" => o.busy = value.parse().unwrap_or(0),
            "--busy-head" => o.busy_head = value.parse().unwrap_or(1_000),
            // Absolute: the children run in their own work directories.
            "--bin" => o.bin = Some(std::fs::canonicalize(value).unwrap_or_else(|_| value.into())),
            other => eprintln!("scenario: ignoring {other}"),
        }
    }
    o
}

fn main() {
    let o = opts();
    if let Some(n) = o.serve {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
        runtime.block_on(serve::serve(n, o.latency));
        return;
    }
    let bin = match o.bin.clone() {
        Some(bin) => bin,
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let built = Command::new(cargo)
                // With the example itself, so the binary reuses the dependencies just built
                // for it.
                .args(["build", "--release", "--quiet", "--bin", "forgestate"])
                .args(["--features", "dev-examples", "--example", "scenario"])
                .status();
            if !built.is_ok_and(|s| s.success()) {
                eprintln!("scenario: cannot build target/release/forgestate");
                return;
            }
            // Where cargo put it: `$CARGO_TARGET_DIR` when set, else `target/`.
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
            target.join("release/forgestate")
        }
    };
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
        let mut figures = Vec::new();
        for &n in &o.sizes {
            figures.push(scenario(&bin, &bodies[..n], &o, refresh).await);
        }
        issue_30(&bin, &o, &figures).await;
        if o.flood > 0 {
            flood::flood(&bin, o.flood, o.latency).await;
        }
        let busy = match o.busy {
            0 => None,
            n => Some(busy::busy(&bin, o.busy_head, n, o.latency, o.runs.max(1)).await),
        };
        issue_44(&figures, busy);
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
        // `--refresh` is hidden from the help: a binary without the flag refuses it.
        .args(["resume", "--refresh", "--help"])
        .output()
        .is_ok_and(|o| o.status.success())
}

pub(crate) fn row(what: &str, r: &Run) {
    println!(
        "| {what:<34} | {:>8} | {:>9.3} | {:>8.1} |{}",
        r.requests,
        r.wall.as_secs_f64(),
        r.rss_kib as f64 / 1024.0,
        if r.ok { "" } else { " FAILED" }
    );
}

/// What one size's run measured, for the issue #30 table.
struct Figures {
    n: usize,
    warm: f64,
    cold: f64,
    /// The cold `resume`'s and the bare download's walls, in seconds.
    cold_secs: (f64, f64),
    rss_mb: f64,
    mcp: Option<f64>,
}

async fn scenario(bin: &Path, bodies: &[String], o: &Opts, refresh: bool) -> Figures {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    seed(&fake, issue, bodies);
    fake.state().latency = o.latency;
    let work = tempfile::tempdir().expect("a temporary directory");
    let warm = work.path().join("warm");
    std::fs::create_dir_all(&warm).expect("a work directory");
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
    let runs = o.runs.max(1);
    println!(
        "\n## N = {} comments ({:.1} MB of JSON), medians of {runs} whole-process runs\n",
        bodies.len(),
        thread_bytes(&fake, issue) as f64 / 1e6
    );
    measure(&fake, bin, &save, &warm).await; // finds and caches the issue number
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(measure(&fake, bin, &save, &warm).await);
    }
    let checkpoint = median(all);
    let mut all = Vec::new();
    for k in 0..runs {
        let cold = work.path().join(format!("cold-{k}"));
        std::fs::create_dir_all(&cold).expect("a work directory");
        all.push(measure(&fake, bin, &resume, &cold).await);
    }
    let cold_run = median(all);
    serve::cold_check(&fake, bin, work.path(), bodies.len() + runs + 1);
    measure(&fake, bin, &resume, &warm).await; // the read the warm ones follow
    let mut all = Vec::new();
    for round in 0..runs {
        new_posts(&fake, issue, round);
        all.push(measure(&fake, bin, &resume, &warm).await);
    }
    let warm_run = median(all);
    let mut naive_args = resume.to_vec();
    if refresh {
        naive_args.push("--refresh");
    }
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(measure(&fake, bin, &naive_args, &warm).await);
    }
    let naive = median(all);
    let url = comments_url(&fake, issue);
    let mut all = Vec::new();
    for _ in 0..runs {
        let now = (Utc::now() + chrono::Duration::seconds(2))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        all.push(curl(&fake, &format!("{url}?since={now}"), work.path()).await);
    }
    let floor = median(all);
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(curl(&fake, &url, work.path()).await);
    }
    let bare = median(all);
    // What a cold read downloads: the repository-wide list since just before the head was
    // created (it holds the head's whole list).
    let opened = fake.state().issue_mut(issue).map_or(0, |row| row.created) - 600;
    let since = chrono::DateTime::from_timestamp(opened, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let wide_url = format!(
        "{}/api/v1/repos/{OWNER}/{REPO}/issues/comments?since={since}",
        fake.uri()
    );
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(curl(&fake, &wide_url, work.path()).await);
    }
    let wide = median(all);
    let mcp = if bodies.len() <= o.mcp_max {
        mcp::resumes(&fake, bin, issue, &warm, runs).await
    } else {
        None
    };

    println!("| operation                          | requests |  wall (s) | RSS (MB) |");
    println!("|------------------------------------|---------:|----------:|---------:|");
    row("1. checkpoint (steady state)", &checkpoint);
    row("2. resume, cold (no cache)", &cold_run);
    row("3. resume, warm (5 new comments)", &warm_run);
    row("4. naive (fetch and parse all)", &naive);
    row("5. floor: curl since=now, nothing new", &floor);
    row("   curl of the whole thread", &bare);
    row("   curl of the repository-wide list", &wide);
    let secs = |r: &Run| r.wall.as_secs_f64();
    let ratio = |a: f64, b: &Run| a / secs(b).max(1e-9);
    println!();
    println!("| figure | forgestate | floor / peer | ratio | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| save | {} request(s), {:.3} s | — | — | 1 request |",
        checkpoint.requests,
        secs(&checkpoint)
    );
    println!(
        "| warm resume (5 new comments) | {:.3} s | bare `since=now` GET: {:.3} s | {:.2}× | ≤ 1.1× |",
        secs(&warm_run),
        secs(&floor),
        ratio(secs(&warm_run), &floor)
    );
    println!(
        "| cold resume | {:.3} s | bare GET of the whole thread: {:.3} s | {:.2}× | ≤ 1.5× |",
        secs(&cold_run),
        secs(&bare),
        ratio(secs(&cold_run), &bare)
    );
    if let Some((median, ok)) = mcp {
        println!(
            "| resume in a long-lived `forgestate mcp` (20 calls, median, 5 new comments each){} | {:.3} s | the same floor: {:.3} s | {:.2}× | ≤ 1.0×, below the CLI ({:.3} s) |",
            if ok { "" } else { " FAILED" },
            median,
            secs(&floor),
            ratio(median, &floor),
            secs(&warm_run)
        );
    }
    println!(
        "| cold resume, peak RSS | {:.1} MB | — | — | ≤ 64 MB at N = 50,000 |",
        cold_run.rss_kib as f64 / 1024.0
    );
    println!(
        "| naive (`resume --refresh`) | {:.3} s | warm is {:.1}× faster | — | — |",
        secs(&naive),
        secs(&naive) / secs(&warm_run).max(1e-9)
    );
    Figures {
        n: bodies.len(),
        warm: ratio(secs(&warm_run), &floor),
        cold: ratio(secs(&cold_run), &bare),
        cold_secs: (secs(&cold_run), secs(&bare)),
        rss_mb: cold_run.rss_kib as f64 / 1024.0,
        mcp: mcp.map(|(median, _)| ratio(median, &floor)),
    }
}

/// Every row of issue #44's table, from this run: the cold `resume` at each size against a
/// bare download of the thread, the busy repository's (`busy`: ratio, walls, requests), and
/// the cold `resume`'s peak RSS at each size, with how far it spreads across the sizes.
fn issue_44(figures: &[Figures], busy: Option<busy::Busy>) {
    println!("\n## Issue #44: every row\n");
    println!("| figure | measured | target |");
    println!("|---|---|---|");
    let mut by_n: Vec<&Figures> = figures.iter().collect();
    by_n.sort_by_key(|f| f.n);
    for f in &by_n {
        println!(
            "| cold `resume`, {}-comment thread | {:.2}× a bare `curl` ({:.3} s against {:.3} s) | ≤ 1.5× |",
            f.n, f.cold, f.cold_secs.0, f.cold_secs.1
        );
    }
    match busy {
        Some(b) => println!(
            "| cold `resume`, busy repository | {:.2}× a bare GET of the head's comments ({:.3} s against {:.3} s, {} requests) | ≤ 1.5× |",
            b.cold_secs / b.bare_secs.max(1e-9),
            b.cold_secs,
            b.bare_secs,
            b.requests
        ),
        None => println!("| cold `resume`, busy repository | not measured (`--busy 0`) | ≤ 1.5× |"),
    }
    for f in &by_n {
        println!(
            "| cold `resume` peak RSS, {} comments | {:.1} MB | ≤ 48 MB, flat in N |",
            f.n, f.rss_mb
        );
    }
    let rss = by_n.iter().map(|f| f.rss_mb);
    if let (Some(lo), Some(hi)) = (rss.clone().reduce(f64::min), rss.reduce(f64::max)) {
        println!(
            "| cold `resume` peak RSS, spread across the sizes | {:.1} MB ({:+.0}% of the smallest) | flat |",
            hi - lo,
            (hi - lo) / lo.max(1e-9) * 100.0
        );
    }
}

/// Every row of issue #30's table that this run measures, with its target.
async fn issue_30(bin: &Path, o: &Opts, figures: &[Figures]) {
    let at = |n: usize| figures.iter().find(|f| f.n == n);
    let near = |n: usize| at(n).or_else(|| figures.iter().min_by_key(|f| f.n.abs_diff(n)));
    println!("\n## Issue #30: every row\n");
    println!("| figure | measured | target |");
    println!("|---|---|---|");
    if let Some(f) = near(10_000) {
        println!(
            "| warm resume, {} comments | {:.2}× a `since=now` GET | ≤ 1.1× |",
            f.n, f.warm
        );
        println!(
            "| cold resume, {} comments | {:.2}× a bare GET of the thread | ≤ 1.5× |",
            f.n, f.cold
        );
        if let Some(mcp) = f.mcp {
            println!(
                "| long-lived MCP server, resume, {} comments | {mcp:.2}× the floor | ≤ 1.0× |",
                f.n
            );
        }
    }
    let mut by_n: Vec<&Figures> = figures.iter().collect();
    by_n.sort_by_key(|f| f.n);
    for f in &by_n {
        println!(
            "| cold resume peak memory, {} comments | {:.1} MB | ≤ 64 MB, and within 10% of the 10k figure |",
            f.n, f.rss_mb
        );
    }
    if o.signed > 0 {
        let (cold, warm) = signed::signed_resumes(bin, o.signed, o.runs.max(1), o.latency).await;
        let floor = near(o.signed).map(|f| f.warm);
        println!(
            "| signed thread ({} records, signing key set), cold resume | {:.3} s, {} requests, {:.1} MB | as unsigned |",
            o.signed,
            cold.wall.as_secs_f64(),
            cold.requests,
            cold.rss_kib as f64 / 1024.0
        );
        println!(
            "| signed thread, warm resume (5 new signed records) | {:.3} s, {} request(s){} | one small request, as unsigned{} |",
            warm.wall.as_secs_f64(),
            warm.requests,
            if warm.ok { "" } else { " FAILED" },
            floor.map_or(String::new(), |r| format!(
                " (unsigned warm: {r:.2}× the floor)"
            ))
        );
    }
    if o.local > 0 {
        let fake = FakeForge::start().await;
        let (cold, warm) = local::local_resumes(&fake, bin, o.local, o.runs.max(1)).await;
        println!(
            "| local store, resume on {} records | warm {:.3} s (cold, `--refresh`: {:.3} s){} | ≤ 0.15 s |",
            o.local,
            warm.wall.as_secs_f64(),
            cold.wall.as_secs_f64(),
            if warm.ok && cold.ok { "" } else { " FAILED" }
        );
    }
    println!(
        "| cold resume, busy repository | measured by the busy-repository case, where it is built | ≤ 1.5× |"
    );
}
