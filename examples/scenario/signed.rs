//! The signed-thread case of the scenario benchmark (issue #30): the same thread, every record
//! signed, read by a `resume` with the signing key set; cold and warm (5 new signed records
//! before each warm run).

use std::path::Path;

use forgestate::format::{SigningKey, sign};

use crate::fake_forge::{FakeForge, session};
use crate::run::{Run, measure_with, median};
use crate::thread::{bodies, seed};

/// The signing key of the benchmark (nobody's secret).
const KEY: &str = "scenario signing key, 32 bytes or more";

fn signed(bodies: &[String]) -> Vec<String> {
    let key = SigningKey::new(KEY).expect("a signing key");
    bodies.iter().map(|b| sign(b, &key)).collect()
}

/// Cold and warm `resume` of `n` signed records: `(cold, warm)`.
pub async fn signed_resumes(
    bin: &Path,
    n: usize,
    runs: usize,
    latency: std::time::Duration,
) -> (Run, Run) {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    seed(&fake, issue, &signed(&bodies(n)));
    fake.state().latency = latency;
    let work = tempfile::tempdir().expect("a temporary directory");
    let env = [("FORGESTATE_SIGNING_KEY", KEY)];
    let resume = [
        "resume",
        "--agent",
        "implementation-worker",
        "--session",
        "sess-0000",
        "--json",
    ];
    let mut all = Vec::new();
    for k in 0..runs {
        let cold = work.path().join(format!("cold-{k}"));
        std::fs::create_dir_all(&cold).expect("a work directory");
        all.push(measure_with(&fake, bin, &resume, &cold, &env).await);
    }
    let cold = median(all);
    let warm = work.path().join("warm");
    std::fs::create_dir_all(&warm).expect("a work directory");
    measure_with(&fake, bin, &resume, &warm, &env).await;
    let key = SigningKey::new(KEY).expect("a signing key");
    let mut all = Vec::new();
    for round in 0..runs {
        for body in bodies(5 * (round + 1)).into_iter().skip(5 * round) {
            fake.add_comment(issue, "ca-bot", &sign(&body, &key));
        }
        all.push(measure_with(&fake, bin, &resume, &warm, &env).await);
    }
    (cold, median(all))
}
