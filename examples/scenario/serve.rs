//! Two helpers of the scenario benchmark around one thread: the check that a cold read saw every
//! record, and `--serve N`, the seeded fake served on its own, so that one command can be
//! profiled by hand (`perf record -g -- forgestate resume ...` with the printed environment).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use crate::run::{bench_config, command};

/// Says whether a cold read sees every record: a fast cold read that misses comments is no
/// figure at all. `status --json` counts each (agent, session) pair's records.
pub fn cold_check(fake: &FakeForge, bin: &Path, work: &Path, expected: usize) {
    let dir = work.join("cold-check");
    std::fs::create_dir_all(&dir).expect("a work directory");
    let out = command(fake, bin, &dir)
        .args(["status", "--json"])
        .output()
        .expect("runs forgestate");
    let seen: usize = serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .ok()
        .and_then(|v| {
            v["rows"].as_array().map(|rows| {
                rows.iter()
                    .filter_map(|r| r["records"].as_u64())
                    .sum::<u64>()
            })
        })
        .map_or(0, |n| n as usize);
    println!(
        "cold read check: `status` saw {seen} records, the thread holds {expected}{}",
        if seen == expected { "" } else { " FAILED" }
    );
}

/// Serves a fake seeded with `n` comments (`latency` added to every answer) until stdin closes,
/// after printing the environment a `forgestate` command needs to use it (the fake's own test
/// token, which is nobody's secret).
pub async fn serve(n: usize, latency: Duration) {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    crate::thread::seed(&fake, issue, &crate::thread::bodies(n));
    fake.state().latency = latency;
    let work = tempfile::tempdir().expect("a temporary directory");
    println!(
        "FORGESTATE_URL={} FORGESTATE_OWNER={OWNER} FORGESTATE_REPO={REPO} \
         FORGESTATE_TOKEN={BOT_TOKEN} FORGESTATE_CONFIG={}",
        fake.uri(),
        bench_config(work.path()).display()
    );
    println!("# serving {n} comments on issue {issue}; close stdin (Ctrl-D) to stop");
    let _ = tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new())).await;
}
