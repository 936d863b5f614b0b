//! How long a rotation takes: a session issue of N seed-sized comments from 50 (agent, session)
//! pairs, on the test fake forge with a per-request latency, rotated with one call. Prints the
//! figures; asserts nothing.
//!
//! Run with `cargo run --features dev-examples --example rotation_bench [N] [LATENCY_MS]`
//! (defaults: 10000 and 20).

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;

use std::time::{Duration, Instant};

use fake_forge::{BOT_TOKEN, FakeForge, client, session};
use forgestate::format::{Record, Renderer};
use serde_json::json;

const PAIRS: usize = 50;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let latency_ms: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);

    let fake = FakeForge::start().await;
    let old = session(&fake);
    let renderer = Renderer::embedded().expect("embedded templates compile");
    let mut bytes = 0;
    for i in 0..n {
        let pair = i % PAIRS;
        let (agent, sess) = (format!("worker-{pair}"), format!("session-{pair}"));
        let record = if i % 7 == 0 {
            Record::health(&agent, &sess, "Active", json!({"step": i}), None)
        } else {
            Record::checkpoint(
                &agent,
                &sess,
                &format!("subtask_{i}_complete"),
                json!({"issue_number": i, "branch_name": format!("feat/{i}"),
                       "completed_subtasks": (0..20).collect::<Vec<_>>(),
                       "notes": "n".repeat(1200)}),
            )
        }
        .expect("valid record");
        let body = renderer.render(&record).expect("renders");
        bytes += body.len();
        fake.add_comment(old, "ca-bot", &body);
    }
    fake.state().latency = Duration::from_millis(latency_ms);
    let dir = tempfile::tempdir().expect("temp dir");
    let c = client(&fake, BOT_TOKEN, dir.path())
        .timeouts(Duration::from_secs(5), Duration::from_secs(120))
        .build()
        .expect("client builds");
    let start = Instant::now();
    let read = c
        .list(&forgestate::scan::Filter::default(), Some(1))
        .await
        .expect("the thread reads");
    println!(
        "for comparison, one full read (`list`) of the same thread: {:.2} s ({} records)",
        start.elapsed().as_secs_f64(),
        read.entries.len()
    );
    let before = fake.requests().await.len();
    let start = Instant::now();
    let report = c.rotate().await.expect("rotation succeeds");
    let wall = start.elapsed();
    let requests = fake.requests().await.len() - before;
    println!(
        "rotation of {n} comments ({:.1} MB of bodies), {PAIRS} active sessions, {latency_ms} ms \
         latency: {:.2} s wall, {requests} requests, {} records carried, old issue closed: {}",
        bytes as f64 / 1e6,
        wall.as_secs_f64(),
        report.carried,
        report.closed
    );
}
