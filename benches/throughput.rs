//! Throughput figures for the hot paths, printed rather than asserted (speed targets live here,
//! not in unit tests): render, parse, a thread scan, and local-store appends and reads.
//!
//! Run with `cargo bench --bench throughput`.

use std::time::{Duration, Instant};

use forgestate::format::{Record, Renderer, parse};
use forgestate::scan::{Trust, scan};
use forgestate::store::{Comment, Listing, LocalThread};
use serde_json::json;

fn per_op(label: &str, n: usize, elapsed: Duration) {
    let each = elapsed.as_secs_f64() / n as f64;
    println!(
        "{label:<44} {n:>7} ops  {:>10.2} us/op  {:>12.0} ops/s",
        each * 1e6,
        1.0 / each
    );
}

fn main() {
    let renderer = Renderer::embedded().expect("embedded templates compile");
    let record = Record::checkpoint(
        "implementation-worker",
        "sess-42",
        "subtask_3_complete",
        json!({"issue_number": 42, "branch_name": "feat/x", "completed_subtasks": [1, 2, 3],
               "working_dir": "/tmp/w", "notes": "x".repeat(512)}),
    )
    .expect("valid record");

    let n = 20_000;
    let start = Instant::now();
    let mut body = String::new();
    for _ in 0..n {
        body = renderer.render(&record).expect("renders");
    }
    per_op("render (with read-back check)", n, start.elapsed());

    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(parse(&body).expect("parses"));
    }
    per_op("parse", n, start.elapsed());

    let comments: Vec<Comment> = (0..10_000u64)
        .map(|i| {
            let r = Record::checkpoint(
                "w",
                &format!("s{}", i % 50),
                &format!("p{i}"),
                json!({"i": i}),
            )
            .expect("valid");
            let t = chrono::Utc::now();
            let body = renderer.render(&r).expect("renders");
            Comment {
                id: i,
                author: "bot".into(),
                created_at: t,
                updated_at: t,
                url: None,
                body,
            }
        })
        .collect();
    let start = Instant::now();
    let s = scan(
        Listing {
            comments,
            warnings: vec![],
            rejects: vec![],
            incomplete: false,
        },
        &Trust::Everyone,
    );
    per_op(
        "scan a 10,000-comment thread (per comment)",
        s.entries.len(),
        start.elapsed(),
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let store = LocalThread::new(dir.path(), "bench");
    let n = 2_000;
    let start = Instant::now();
    for _ in 0..n {
        store.append_blocking(&body).expect("appends");
    }
    per_op("local store append (flock + fsync)", n, start.elapsed());
    let start = Instant::now();
    let listing = store.list_blocking(None).expect("lists");
    per_op(
        "local store read (per comment)",
        listing.comments.len(),
        start.elapsed(),
    );
}
