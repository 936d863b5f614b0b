//! The read cache's base (`<key>.mirror`) is checksummed: a byte changed on disk inside a
//! record's data, in the index (a record's phase) or in the header line, is caught before a
//! warm `list`, `status` or `history` believes it: the cache is rebuilt with one warning and the
//! answer is the thread's. A base of the schema before the checksums is rebuilt without a
//! warning.

use super::{cached, uncached};
use crate::fake_forge;
use std::path::{Path, PathBuf};

use fake_forge::FakeForge;
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::client::HistoryQuery;
use forgestate::format::Record;
use forgestate::report::StatusPolicy;
use forgestate::scan::{Filter, Scan};
use serde_json::{Value, json};

const W: &str = "implementation-worker";

/// Every record `client` lists.
async fn all(client: Client<AnyThread>) -> Scan {
    client.list(&Filter::default(), None).await.unwrap()
}

/// What a list answered, comparable across clients.
fn listed(s: &Scan) -> Value {
    let entries: Vec<Value> = (s.entries.iter())
        .map(|e| json!([e.comment.id, e.comment.author, e.record]))
        .collect();
    let rejected: Vec<Value> = (s.rejected.iter())
        .map(|r| json!([r.comment.id, r.code.code(), r.reason]))
        .collect();
    json!({"entries": entries, "rejected": rejected})
}

/// A thread of three checkpoints whose data strings appear nowhere else (not in the index), and
/// its base, written by a cold `list`.
async fn thread(fake: &FakeForge, dir: &Path) -> PathBuf {
    fake_forge::session(fake);
    let client = cached(fake, dir);
    for (phase, value) in [
        ("clone_complete", "alpha-one"),
        ("subtask_1_complete", "alpha-two"),
        ("subtask_2_complete", "alpha-three"),
    ] {
        let record = Record::checkpoint(W, "s1", phase, json!({"v": value})).unwrap();
        client.save(record).await.posted().unwrap();
        // A minute apart: the warm read's `since` (inclusive, by the second) sends the newest
        // comment again, and no other.
        fake.age(60);
    }
    client.list(&Filter::default(), None).await.unwrap();
    crate::common::files_under(dir)
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".mirror"))
        .expect("a base")
}

/// Replaces `from` with `to` (the same length) in the file at `path`, where it appears once:
/// a byte changed as a bad sector or a stray edit would, the file still valid JSON throughout.
fn change(path: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let text = String::from_utf8(std::fs::read(path).unwrap()).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from} once in the base");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// The warnings about the read cache among `warnings`: one, saying it was rebuilt.
fn rebuilt_once(warnings: &[String]) {
    let about: Vec<&String> = (warnings.iter())
        .filter(|w| w.contains("read cache"))
        .collect();
    assert_eq!(about.len(), 1, "{warnings:?}");
    assert!(about[0].contains("rebuilt"), "{about:?}");
}

#[tokio::test]
async fn a_byte_changed_in_a_record_s_data_in_the_base_is_caught_before_a_warm_list() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let base = thread(&fake, dir.path()).await;
    let truth = listed(&all(uncached(&fake, dir.path())).await);
    change(&base, "alpha-two", "alpha-twx");

    let client = cached(&fake, dir.path());
    let warm = client.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed(&warm), truth);
    rebuilt_once(&warm.warnings);
    // Rebuilt: the next warm read believes the cache again, without a warning.
    let again = all(cached(&fake, dir.path())).await;
    assert_eq!(listed(&again), truth);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(text.contains("alpha-two") && !text.contains("alpha-twx"));
}

#[tokio::test]
async fn a_byte_changed_in_the_base_s_index_is_caught_before_a_warm_list() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let base = thread(&fake, dir.path()).await;
    let truth = listed(&all(uncached(&fake, dir.path())).await);
    // A record's phase, in its header in the index.
    change(&base, "subtask_1_complete", "subtask_7_complete");

    let warm = all(cached(&fake, dir.path())).await;
    assert_eq!(listed(&warm), truth);
    rebuilt_once(&warm.warnings);
}

#[tokio::test]
async fn a_byte_changed_in_the_base_s_header_line_is_caught_before_a_warm_list() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let base = thread(&fake, dir.path()).await;
    let truth = all(uncached(&fake, dir.path())).await;
    assert!(!truth.incomplete);
    // Still JSON, the same length: a warm list would say it may have missed comments.
    change(&base, "\"incomplete\":false", "\"incomplete\":true ");

    let warm = all(cached(&fake, dir.path())).await;
    assert_eq!(listed(&warm), listed(&truth));
    assert!(
        !warm.incomplete,
        "the header as written is believed, not the changed one"
    );
    rebuilt_once(&warm.warnings);
}

#[tokio::test]
async fn status_and_history_read_no_changed_byte_of_the_base() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let base = thread(&fake, dir.path()).await;
    let truth = uncached(&fake, dir.path());
    let policy = StatusPolicy::default();
    let query = HistoryQuery::new("s1");
    let phases = |rows: &[forgestate::report::StatusRow]| -> Vec<Option<String>> {
        rows.iter().map(|r| r.phase.clone()).collect()
    };
    let want_status = truth.status(&Filter::default(), &policy).await.unwrap();
    let want_history = truth.history(&query).await.unwrap();

    change(&base, "subtask_1_complete", "subtask_8_complete");
    let status = cached(&fake, dir.path())
        .status(&Filter::default(), &policy)
        .await
        .unwrap();
    assert_eq!(phases(&status.rows), phases(&want_status.rows));
    assert_eq!(status.rows[0].records, want_status.rows[0].records);
    rebuilt_once(&status.warnings);

    // The base rebuilt above: its data changed this time.
    change(&base, "alpha-one", "alpha-onx");
    let history = cached(&fake, dir.path()).history(&query).await.unwrap();
    assert_eq!(
        serde_json::to_value(&history.records).unwrap(),
        serde_json::to_value(&want_history.records).unwrap()
    );
    rebuilt_once(&history.warnings);
}

#[tokio::test]
async fn a_base_of_the_schema_before_checksums_is_rebuilt_without_a_warning() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let base = thread(&fake, dir.path()).await;
    let truth = listed(&all(uncached(&fake, dir.path())).await);
    // What the previous version wrote says schema 4.
    let text = std::fs::read_to_string(&base).unwrap();
    let (header, _) = text.split_once('\n').unwrap();
    let schema: Value = serde_json::from_str(header).unwrap();
    let now = schema["schema"].as_u64().unwrap();
    assert!(now > 4, "the schema moved past the base without checksums");
    change(&base, &format!("\"schema\":{now}"), "\"schema\":4");

    let warm = all(cached(&fake, dir.path())).await;
    assert_eq!(listed(&warm), truth);
    assert!(warm.warnings.is_empty(), "{:?}", warm.warnings);
    let text = std::fs::read_to_string(&base).unwrap();
    assert!(text.starts_with(&format!("{{\"schema\":{now},")), "rebuilt");
}
