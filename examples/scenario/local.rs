//! The local-store case of the scenario benchmark: `forgestate --store DIR resume` on a store
//! of 100,000 records (the issue #30 table's "hold" row), warm (after a first read built its
//! read cache) and cold.

use std::io::Write;
use std::path::Path;

use crate::fake_forge::FakeForge;
use crate::run::{Run, measure, median};
use crate::thread::bodies;

/// Cold and warm `resume` on a local store of `n` records: `(cold, warm)`.
pub async fn local_resumes(fake: &FakeForge, bin: &Path, n: usize, runs: usize) -> (Run, Run) {
    let work = tempfile::tempdir().expect("a temporary directory");
    let store = work.path().join("store");
    std::fs::create_dir_all(&store).expect("a store directory");
    {
        let file = std::fs::File::create(store.join("thread.jsonl")).expect("a thread file");
        let mut file = std::io::BufWriter::new(file);
        // One record a second up to now, as an agent writes them.
        let start = chrono::Utc::now() - chrono::Duration::seconds(n as i64);
        for (i, body) in bodies(n).into_iter().enumerate() {
            let at = start + chrono::Duration::seconds(i as i64);
            let line = serde_json::json!({
                "id": i + 1, "author": "bench", "created_at": at, "updated_at": at,
                "body": body,
            });
            writeln!(file, "{line}").expect("writes the thread");
        }
    }
    let store = store.display().to_string();
    let resume = [
        "--store",
        store.as_str(),
        "resume",
        "--agent",
        "implementation-worker",
        "--session",
        "sess-0000",
        "--json",
    ];
    let mut all = Vec::new();
    for _ in 0..runs {
        // `--refresh` rebuilds the store's read cache: a cold read.
        let mut cold = resume.to_vec();
        cold.push("--refresh");
        all.push(measure(fake, bin, &cold, work.path()).await);
    }
    let cold = median(all);
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(measure(fake, bin, &resume, work.path()).await);
    }
    (cold, median(all))
}
