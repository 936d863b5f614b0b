//! The flood run of the scenario benchmark: a thread flooded by another account's huge comments,
//! which no read may fail on (`--flood N`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fake_forge::{FakeForge, session};
use crate::row;
use crate::run::measure;
use crate::thread::{AGENTS, bodies, seed};

/// `count` comments of 1 MiB from another account, and one checkpoint of ours: the read must
/// still answer (it used to fail with exit 78 past the 256 MiB response cap).
pub async fn flood(bin: &Path, count: usize, latency: Duration) {
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
