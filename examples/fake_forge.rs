//! The test suite's fake Forgejo (`tests/it/fake_forge/`) as a standalone loopback server, so tests
//! outside Rust (the Python package's pytest suite) can drive forgestate against it.
//!
//! Run it with `cargo run --features dev-examples --example fake_forge`. It prints one JSON
//! line on stdout:
//! `{"url", "owner", "repo", "token", "login", "untrusted_token"}` (the bot's token, whose user
//! may write the repository's issues, and one of a user who may only comment), then serves on
//! 127.0.0.1 until stdin closes or it is killed. Lines on stdin steer it: `down` (every request
//! gets a 503 and nothing changes), `up`, `comments` (prints how many comments it holds, as one
//! JSON line, `{"comments": N}`), `requests` (how many requests it received, `{"requests": N}`),
//! `latency MS` (every answer comes MS milliseconds later, as a distant forge's would), and the
//! slow forges of `tests/it/fake_forge/outage.rs`: `slow-list MS` (comment lists start
//! answering MS milliseconds late), `dribble` (headers at once, then the body a few bytes at a
//! time), `alternate 503` and `alternate drop` (every other request 503, or dropped); `up` ends
//! them. The url it prints is the outage front's, which plays them.

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;

use std::io::{BufRead, Write};

use fake_forge::outage::Mode;
use fake_forge::{BOT_TOKEN, FakeForge, MALLORY_TOKEN, OWNER, REPO};

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fake_forge: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(74);
        }
    };
    let fake = runtime.block_on(FakeForge::start());
    let front = runtime.block_on(fake.front());
    let hello = serde_json::json!({
        "url": front.uri(),
        "owner": OWNER,
        "repo": REPO,
        "token": BOT_TOKEN,
        "login": "ca-bot",
        "untrusted_token": MALLORY_TOKEN,
    });
    say(&hello.to_string());
    // The server runs on the runtime's worker; this thread only reads the steering lines.
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        match line.trim() {
            "down" => fake.state().down = true,
            "up" => {
                fake.state().down = false;
                front.set(Mode::Up);
            }
            "dribble" => front.set(Mode::Dribble),
            "alternate 503" => front.set(Mode::Alternating { drop: false }),
            "alternate drop" => front.set(Mode::Alternating { drop: true }),
            "comments" => {
                let count = fake.state().comments.len();
                say(&serde_json::json!({ "comments": count }).to_string());
            }
            "requests" => {
                let count = runtime.block_on(fake.requests()).len();
                say(&serde_json::json!({ "requests": count }).to_string());
            }
            "" => {}
            other => {
                let ms = |prefix: &str| {
                    other
                        .strip_prefix(prefix)
                        .and_then(|ms| ms.trim().parse::<u64>().ok())
                        .map(std::time::Duration::from_millis)
                };
                match (ms("latency "), ms("slow-list ")) {
                    (Some(latency), _) => fake.state().latency = latency,
                    (_, Some(late)) => front.set(Mode::SlowList(late)),
                    _ => eprintln!(
                        "fake_forge: unknown command {other:?} (down, up, comments, requests, \
                         latency MS, slow-list MS, dribble, alternate 503, alternate drop)"
                    ),
                }
            }
        }
    }
    drop(fake);
    std::process::ExitCode::SUCCESS
}

/// One line on stdout, flushed at once (the reader waits for it).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}
