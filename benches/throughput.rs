//! Throughput figures for the hot paths, printed rather than asserted (speed targets live here,
//! not in unit tests): render, parse, a thread scan, and local-store appends and reads.
//!
//! Run with `cargo bench --bench throughput`. With `FORGESTATE_DECODE_LIST=FILE` (a comment list
//! answer saved from a forge, e.g. `curl` of the scenario's `--serve 10000` list) it prints only
//! the decode's figures, of that list.

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
    if let Some(file) = std::env::var_os("FORGESTATE_DECODE_LIST") {
        let bytes = std::fs::read(&file).expect("reads the list");
        decode_list_figures(&bytes);
        return;
    }
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

    decode_figures(&renderer);

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

/// A comment as serde_json reads it into a typed struct: the floor for the list decoder.
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Typed {
    id: u64,
    html_url: String,
    issue_url: String,
    user: TypedUser,
    body: String,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct TypedUser {
    id: i64,
    login: String,
    created: Option<chrono::DateTime<chrono::Utc>>,
}

/// A 10,000-comment list as Forgejo answers it (issue #44): forgestate's decode against
/// serde_json into a typed struct, from the bytes in memory.
fn decode_figures(renderer: &Renderer) {
    let items: Vec<serde_json::Value> = (0..10_000u64)
        .map(|i| {
            let r = Record::checkpoint(
                &format!("agent-{}", i % 50),
                &format!("s{}", i % 50),
                &format!("subtask_{i}_complete"),
                json!({"i": i, "notes": "n".repeat(900)}),
            )
            .expect("valid");
            json!({
                "id": 1000 + i,
                "html_url": format!("https://f.example/o/r/issues/1#issuecomment-{}", 1000 + i),
                "pull_request_url": "",
                "issue_url": "https://f.example/o/r/issues/1",
                "user": {"id": 7, "login": "ca-bot", "login_name": "", "source_id": 0,
                         "full_name": "", "email": "ca-bot@noreply.f.example",
                         "avatar_url": "https://f.example/avatars/7", "html_url": "https://f.example/ca-bot",
                         "language": "", "is_admin": false, "last_login": "0001-01-01T00:00:00Z",
                         "created": "2026-07-01T00:00:00Z", "restricted": false, "active": false,
                         "prohibit_login": false, "location": "", "pronouns": "", "website": "",
                         "description": "", "visibility": "public", "followers_count": 0,
                         "following_count": 0, "starred_repos_count": 0, "username": "ca-bot"},
                "original_author": "",
                "original_author_id": 0,
                "body": renderer.render(&r).expect("renders"),
                "assets": [],
                "created_at": "2026-07-14T09:47:31Z",
                "updated_at": "2026-07-14T09:47:31Z",
            })
        })
        .collect();
    let bytes = serde_json::to_vec(&items).expect("serializes");
    decode_list_figures(&bytes);
}

/// A list answer decoded by forgestate and by serde_json into a typed struct of the fields
/// forgestate reads; then the record parse of each body (what a cold read adds per comment).
fn decode_list_figures(bytes: &[u8]) {
    let bytes = bytes.to_vec();
    let typed: Vec<Typed> = serde_json::from_slice(&bytes).expect("decodes");
    let n = typed.len();
    println!("a {n}-comment list of {:.1} MB:", bytes.len() as f64 / 1e6);
    let rounds = 5;
    let start = Instant::now();
    for _ in 0..rounds {
        let got = forgestate::forge::decode_comment_list(&bytes).expect("decodes");
        assert_eq!(got, (n, 0));
    }
    per_op(
        "  forgestate's list decode (per comment)",
        n * rounds,
        start.elapsed(),
    );
    let start = Instant::now();
    for _ in 0..rounds {
        let got: Vec<Typed> = serde_json::from_slice(&bytes).expect("decodes");
        std::hint::black_box(got);
    }
    per_op(
        "  serde_json typed, from a slice (per comment)",
        n * rounds,
        start.elapsed(),
    );
    let start = Instant::now();
    for _ in 0..rounds {
        let reader = std::io::BufReader::with_capacity(64 * 1024, bytes.as_slice());
        let got: Vec<Typed> = serde_json::from_reader(reader).expect("decodes");
        std::hint::black_box(got);
    }
    per_op(
        "  serde_json typed, from a reader (per comment)",
        n * rounds,
        start.elapsed(),
    );
    let start = Instant::now();
    for _ in 0..rounds {
        let got: Vec<serde_json::Value> = serde_json::from_slice(&bytes).expect("decodes");
        std::hint::black_box(got);
    }
    per_op(
        "  serde_json Value, from a slice (per comment)",
        n * rounds,
        start.elapsed(),
    );
    let start = Instant::now();
    let mut records = 0;
    for _ in 0..rounds {
        for comment in &typed {
            records += usize::from(forgestate::format::parse_keeping_data(&comment.body).is_ok());
        }
    }
    per_op(
        "  each body's record parse, data as text (per comment)",
        n * rounds,
        start.elapsed(),
    );
    std::hint::black_box(records);
}
