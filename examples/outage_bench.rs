//! How long `checkpoint` and `resume` take in an outage, at the default wait budget (3 s): the
//! forge refusing connections, answering 503 to everything, or accepting and never answering
//! (the test suite's fake forge behind its outage front). Each step is one command, as an agent
//! runs it: a fresh client over the same outbox and cache directories (what a fresh CLI process
//! has), so the outage marker the first command leaves is what the next one sees. Prints the
//! figures; asserts nothing.
//!
//! Run with `cargo run --release --features dev-examples --example outage_bench [ROUNDS]`
//! (default 3 rounds per outage; the figures are medians).

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;

use std::path::Path;
use std::time::{Duration, Instant};

use fake_forge::outage::{Mode, OUTAGES};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use serde_json::json;

/// A client as a fresh command builds it: default budgets, this machine's directories.
fn command(uri: &str, dir: &Path) -> Client<AnyThread> {
    Client::forge(uri, OWNER, REPO)
        .token(secrecy::SecretString::from(BOT_TOKEN))
        .cache_dir(dir.join("cache"))
        .outbox(dir.join("outbox"))
        .build()
        .expect("client builds")
}

async fn checkpoint(uri: &str, dir: &Path, phase: &str) -> (Duration, bool) {
    let c = command(uri, dir);
    let record = Record::checkpoint("w", "s", phase, json!({"step": phase})).expect("valid");
    let start = Instant::now();
    let outcome = c.save(record).await;
    let spooled = matches!(outcome, forgestate::Outcome::Spooled { .. });
    (start.elapsed(), spooled)
}

async fn resume(uri: &str, dir: &Path) -> (Duration, bool) {
    let c = command(uri, dir);
    let start = Instant::now();
    let offline = c.resume("w", "s").await.map(|r| r.resume.offline);
    (start.elapsed(), offline.unwrap_or(false))
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, Duration::as_secs_f64)
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    println!(
        "| outage | first checkpoint (spools) | resume after it (offline) | next checkpoint | \
         first command after recovery |"
    );
    println!("|---|---|---|---|---|");
    for (mode, what) in OUTAGES {
        let mut first = Vec::new();
        let mut read = Vec::new();
        let mut next = Vec::new();
        let mut back = Vec::new();
        let mut honest = true;
        for _ in 0..rounds {
            let fake = FakeForge::start().await;
            let n = session(&fake);
            let front = fake.front().await;
            let uri = front.uri();
            let dir = tempfile::tempdir().expect("temp dir");
            let d = dir.path();
            checkpoint(&uri, d, "planned").await;
            resume(&uri, d).await;
            front.set(mode);
            let (t, spooled) = checkpoint(&uri, d, "built").await;
            first.push(t);
            let (t, offline) = resume(&uri, d).await;
            read.push(t);
            let (t, spooled_too) = checkpoint(&uri, d, "tested").await;
            next.push(t);
            front.set(Mode::Up);
            let (t, offline_after) = resume(&uri, d).await;
            back.push(t);
            honest &= spooled && offline && spooled_too && !offline_after;
            honest &= fake.comments_on(n).len() == 3;
        }
        println!(
            "| {what} | {:.2} s | {:.2} s | {:.2} s | {:.2} s{} |",
            median(first),
            median(read),
            median(next),
            median(back),
            if honest { "" } else { " (UNEXPECTED OUTCOME)" }
        );
    }
}
