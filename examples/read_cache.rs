//! Figures for the read cache (prints them, asserts nothing):
//!
//! - the fake forge (the test suite's, on loopback) with 20 ms of latency per request and
//!   N = 10,000 seed-sized checkpoints from 50 (agent, session) pairs: a bare `since` request
//!   with nothing new (the floor), a cold `resume`, a warm `resume` with nothing new and with
//!   5 new comments, and `resume` with the cache off;
//! - the local store with 100,000 records: cold (building the index), warm, warm after 5
//!   appends, and with the cache off.
//!
//! Run: `cargo run --release --features dev-examples --example read_cache [forge_n] [local_n]`.

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;

use std::io::Write;
use std::time::{Duration, Instant};

use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::Client;
use forgestate::format::{Record, Renderer};
use serde_json::json;

fn record(n: usize) -> Record {
    let pair = n % 50;
    let data = json!({
        "issue_number": 1000 + pair,
        "branch_name": format!("feature/issue-{}-implement-the-thing", 1000 + pair),
        "subtasks": (0..6).map(|i| json!({
            "id": i, "title": format!("subtask {i} of the plan for step {n}"),
            "status": if i < 3 { "done" } else { "pending" },
        })).collect::<Vec<_>>(),
        "files_changed": ["src/lib.rs", "src/main.rs", "tests/integration.rs"],
        "notes": "x".repeat(200),
    });
    Record::checkpoint(
        &format!("agent-{}", pair % 10),
        &format!("session-{pair}"),
        &format!("subtask_{}_complete", n % 7),
        data,
    )
    .expect("a valid record")
}

fn ms(d: Duration) -> String {
    format!("{:8.1} ms", d.as_secs_f64() * 1000.0)
}

async fn timed<T>(label: &str, f: impl std::future::Future<Output = T>) -> T {
    let t = Instant::now();
    let out = f.await;
    println!("  {label:<44} {}", ms(t.elapsed()));
    out
}

async fn count(fake: &FakeForge) -> usize {
    fake.requests().await.len()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let forge_n = args.first().copied().unwrap_or(10_000);
    let local_n = args.get(1).copied().unwrap_or(100_000);
    let renderer = Renderer::embedded()?;

    // ---- forge ----
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    for n in 0..forge_n {
        fake.add_comment(issue, "ca-bot", &renderer.render(&record(n))?);
    }
    fake.state().latency = Duration::from_millis(20);
    let dir = tempfile::tempdir()?;
    let client = |cached: bool| -> Result<Client<_>, forgestate::Error> {
        let c = fake_forge::client(&fake, BOT_TOKEN, dir.path()).build()?;
        Ok(if cached { c } else { c.without_read_cache() })
    };
    let (agent, session) = ("agent-3", "session-13");
    println!("forge: {forge_n} comments, 20 ms per request");
    let http = reqwest::Client::new();
    let since = chrono::Utc::now() + chrono::Duration::seconds(5);
    let url = format!(
        "{}/api/v1/repos/{OWNER}/{REPO}/issues/{issue}/comments?since={}",
        fake.uri(),
        since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    for _ in 0..2 {
        timed("floor: bare since request, nothing new", async {
            http.get(&url)
                .header("Authorization", format!("token {BOT_TOKEN}"))
                .send()
                .await
                .map(drop)
        })
        .await?;
    }
    let before = count(&fake).await;
    timed("resume, cache off", client(false)?.resume(agent, session)).await?;
    println!("    requests: {}", count(&fake).await - before);
    let before = count(&fake).await;
    timed(
        "cold resume (builds the cache)",
        client(true)?.resume(agent, session),
    )
    .await?;
    println!("    requests: {}", count(&fake).await - before);
    for _ in 0..3 {
        let before = count(&fake).await;
        timed(
            "warm resume, nothing new (new client)",
            client(true)?.resume(agent, session),
        )
        .await?;
        println!("    requests: {}", count(&fake).await - before);
    }
    for n in 0..5 {
        fake.add_comment(issue, "ca-bot", &renderer.render(&record(forge_n + n))?);
    }
    let before = count(&fake).await;
    timed(
        "warm resume, 5 new comments",
        client(true)?.resume(agent, session),
    )
    .await?;
    println!("    requests: {}", count(&fake).await - before);
    let c = client(true)?;
    timed(
        "warm list (every record built)",
        c.list(&Default::default(), None),
    )
    .await?;

    // ---- local store ----
    let dir = tempfile::tempdir()?;
    println!("local store: {local_n} records");
    {
        let mut file =
            std::io::BufWriter::new(std::fs::File::create(dir.path().join("thread.jsonl"))?);
        let now = chrono::Utc::now();
        for n in 0..local_n {
            let line = json!({
                "id": n + 1, "author": "tester", "created_at": now, "updated_at": now,
                "body": renderer.render(&record(n))?,
            });
            writeln!(file, "{line}")?;
        }
    }
    let size = std::fs::metadata(dir.path().join("thread.jsonl"))?.len();
    println!("  thread.jsonl: {:.1} MB", size as f64 / 1e6);
    let local = || Client::local_as(dir.path(), "tester");
    timed(
        "resume, cache off",
        local()?.without_read_cache().resume(agent, session),
    )
    .await?;
    timed(
        "cold resume (builds the index)",
        local()?.resume(agent, session),
    )
    .await?;
    for _ in 0..3 {
        timed(
            "warm resume, nothing new (new client)",
            local()?.resume(agent, session),
        )
        .await?;
    }
    let writer = local()?.without_read_cache();
    for n in 0..5 {
        writer.save(record(local_n + n)).await.posted()?;
    }
    timed("warm resume, 5 appended", local()?.resume(agent, session)).await?;
    timed("warm resume, nothing new", local()?.resume(agent, session)).await?;
    Ok(())
}
