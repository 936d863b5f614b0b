//! The local JSONL store: concurrent writer processes, torn lines, monotonic ids, `since`.

use std::io::Write;
use std::process::Command;

use chrono::{Duration, Utc};
use forgestate::format::{Record, Renderer, parse};
use forgestate::store::{LocalThread, THREAD_FILE, Thread};
use serde_json::json;

const CHILD_ENV: &str = "FORGESTATE_TEST_APPEND_CHILD";

/// Not a test of its own: the body of a writer process spawned by
/// `two_processes_appending_500_each_leave_1000_intact_records`. Does nothing when run normally.
#[test]
fn append_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, who, count) = {
        let mut parts = spec.splitn(3, '|');
        let dir = parts.next().unwrap().to_string();
        let who = parts.next().unwrap().to_string();
        let count: usize = parts.next().unwrap().parse().unwrap();
        (dir, who, count)
    };
    let store = LocalThread::new(dir, who.clone());
    let renderer = Renderer::embedded().unwrap();
    for i in 0..count {
        let record = Record::checkpoint(
            &who,
            "race",
            &format!("step_{i}"),
            json!({"i": i, "who": who}),
        )
        .unwrap();
        store
            .append_blocking(&renderer.render(&record).unwrap())
            .unwrap();
    }
}

#[test]
fn two_processes_appending_500_each_leave_1000_intact_records() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["writer-a", "writer-b"]
        .into_iter()
        .map(|who| {
            Command::new(&exe)
                .args(["--exact", "append_child", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, format!("{}|{who}|500", dir.path().display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }

    let listing = LocalThread::new(dir.path(), "reader")
        .list_blocking(None)
        .unwrap();
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    assert_eq!(listing.comments.len(), 1000);
    let ids: Vec<u64> = listing.comments.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        (1..=1000).collect::<Vec<_>>(),
        "ids are gapless and strictly increasing"
    );
    for who in ["writer-a", "writer-b"] {
        let steps: Vec<u64> = listing
            .comments
            .iter()
            .filter(|c| c.author == who)
            .map(|c| parse(&c.body).unwrap().data()["i"].as_u64().unwrap())
            .collect();
        assert_eq!(
            steps,
            (0..500).collect::<Vec<_>>(),
            "{who}'s records are intact and in order"
        );
    }
    let created: Vec<_> = listing.comments.iter().map(|c| c.created_at).collect();
    assert!(
        created.windows(2).all(|w| w[0] <= w[1]),
        "created_at never goes backwards"
    );
}

#[test]
fn torn_last_line_is_reported_skipped_and_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "me");
    store.append_blocking("first").unwrap();
    store.append_blocking("second").unwrap();
    let path = dir.path().join(THREAD_FILE);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"id":3,"author":"me","created_at":"2026-11-29T0"#)
        .unwrap();
    drop(f);

    let listing = store.list_blocking(None).unwrap();
    assert_eq!(
        listing
            .comments
            .iter()
            .map(|c| c.body.as_str())
            .collect::<Vec<_>>(),
        ["first", "second"]
    );
    assert_eq!(listing.warnings.len(), 1);
    assert!(
        listing.warnings[0].contains("torn last line"),
        "{}",
        listing.warnings[0]
    );

    let third = store.append_blocking("third").unwrap();
    assert_eq!(third.id, 3, "ids continue after the last valid line");
    let listing = store.list_blocking(None).unwrap();
    assert_eq!(
        listing.comments.iter().map(|c| c.id).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        listing.comments[2].body, "third",
        "the torn bytes did not swallow the new record"
    );
    assert_eq!(listing.warnings.len(), 1);
    assert!(
        listing.warnings[0].contains("corrupt line 3"),
        "{}",
        listing.warnings[0]
    );
}

#[test]
fn a_complete_last_line_without_newline_still_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "me");
    store.append_blocking("one").unwrap();
    let path = dir.path().join(THREAD_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end()).unwrap();
    assert_eq!(store.list_blocking(None).unwrap().comments.len(), 1);
    assert_eq!(store.append_blocking("two").unwrap().id, 2);
    let listing = store.list_blocking(None).unwrap();
    assert_eq!(listing.comments.len(), 2);
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
}

#[test]
fn missing_store_lists_empty_and_bodies_are_opaque() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path().join("not-yet"), "me");
    assert!(store.list_blocking(None).unwrap().comments.is_empty());
    let odd = "line\nwith \"quotes\" and \u{0}nul and emoji 🦀";
    store.append_blocking(odd).unwrap();
    assert_eq!(store.list_blocking(None).unwrap().comments[0].body, odd);
}

#[tokio::test]
async fn since_is_inclusive_on_updated_at_in_whole_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "me");
    let c = store.append("x").await.unwrap();
    let same_second = c.updated_at.with_timezone(&Utc) + Duration::milliseconds(999)
        - Duration::nanoseconds(i64::from(c.updated_at.timestamp_subsec_nanos()));
    assert_eq!(
        store.list(Some(same_second)).await.unwrap().comments.len(),
        1
    );
    let next_second = c.updated_at + Duration::seconds(1);
    let after = chrono::DateTime::from_timestamp(next_second.timestamp(), 0).unwrap();
    assert_eq!(store.list(Some(after)).await.unwrap().comments.len(), 0);
    assert_eq!(store.whoami().await.unwrap(), "me");
}
