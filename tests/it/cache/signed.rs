//! Signed threads keep warm reads (issue #30): with a signing key, a warm read through the read
//! cache asks only `since` its cursor and checks the signatures of what that brings; a record
//! forged or tampered with after the cache was built is still refused, an edited older signed
//! comment is checked again, and another key (or `require_signatures`) rebuilds the cache.

use std::path::Path;
use std::time::Duration;

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, OPS_TOKEN};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::{Record, Renderer, SigningKey, sign};
use forgestate::mirror::ReadCache;
use forgestate::scan::Filter;
use serde_json::json;

const W: &str = "implementation-worker";

fn cp(phase: &str) -> Record {
    Record::checkpoint(W, "s1", phase, json!({"step": phase})).unwrap()
}

fn key(secret: &str) -> SigningKey {
    SigningKey::new(secret).unwrap()
}

fn plain(record: &Record) -> String {
    Renderer::embedded().unwrap().render(record).unwrap()
}

/// A bot client over the fake with the read cache on, reading with `keys`.
fn reader(fake: &FakeForge, dir: &Path, keys: Vec<SigningKey>, require: bool) -> Client<AnyThread> {
    fake_forge::client(fake, BOT_TOKEN, dir)
        .read_cache(ReadCache {
            enabled: true,
            resync_after: Duration::from_secs(3600),
        })
        .build()
        .unwrap()
        .with_signing_keys(keys)
        .with_required_signatures(require)
}

/// The comment lists asked for after the first `skip` requests: `true` for a warm read (asked
/// `since` a cursor after the session issue was created; a cold read lists it all, or what
/// every member got since a margin before that).
async fn list_reads(fake: &FakeForge, skip: usize) -> Vec<bool> {
    let created = fake.state().issues.iter().map(|i| i.created).min();
    fake.requests()
        .await
        .into_iter()
        .skip(skip)
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        // A cold read's `page=1&limit=1` probe sizes a list; it downloads no thread.
        .filter(|r| !r.url.query_pairs().any(|(k, v)| k == "limit" && v == "1"))
        .map(|r| {
            let since = r.url.query_pairs().find(|(k, _)| k == "since");
            let since = since.and_then(|(_, v)| chrono::DateTime::parse_from_rfc3339(&v).ok());
            since.is_some_and(|t| Some(t.timestamp()) >= created)
        })
        .collect()
}

/// A thread of two signed checkpoints, resumed once by a reader over `dir` (the warm base).
async fn warm_base(fake: &FakeForge, dir: &Path) -> u64 {
    let issue = fake_forge::session(fake);
    let signed = reader(fake, dir, vec![key("team secret")], false);
    for phase in ["clone_complete", "subtask_1_complete"] {
        signed.save(cp(phase)).await.posted().unwrap();
    }
    let r = signed.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_1_complete", "{:?}", r.warnings);
    issue
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warm_signed_read_makes_one_small_list_request() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = warm_base(&fake, dir.path()).await;
    // Another holder of the key posts a newer checkpoint.
    fake.add_comment(
        issue,
        "ca-bot",
        &sign(&plain(&cp("subtask_2_complete")), &key("team secret")),
    );
    let before = fake.requests().await.len();
    let warm = reader(&fake, dir.path(), vec![key("team secret")], false);
    let r = warm.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_2_complete", "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // Besides the list, only the session issue (its comment count shows a deletion).
    assert_eq!(
        fake.requests().await.len() - before,
        2,
        "two requests in all"
    );
    assert_eq!(list_reads(&fake, before).await, [true], "a `since` read");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_forged_after_the_warm_base_is_refused_on_the_warm_path() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = warm_base(&fake, dir.path()).await;
    // With the token but not the key: an unsigned checkpoint, and a signed one whose content
    // was changed after signing.
    fake.add_comment(issue, "ca-bot", &plain(&cp("pr_created")));
    let signed = sign(&plain(&cp("subtask_2_complete")), &key("team secret"));
    let tampered = signed.replace("\"step\": \"subtask_2_complete\"", "\"step\": \"rm -rf\"");
    assert_ne!(tampered, signed);
    fake.add_comment(issue, "ca-bot", &tampered);

    let before = fake.requests().await.len();
    let warm = reader(&fake, dir.path(), vec![key("team secret")], false);
    let r = warm.resume(W, "s1").await.unwrap();
    assert_eq!(list_reads(&fake, before).await, [true], "a warm read");
    assert_eq!(r.resume.phase, "subtask_1_complete", "{:?}", r.warnings);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("records are not believed")
                || w.contains("after the thread's first signed record")),
        "the unsigned one: {:?}",
        r.warnings
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("does not match its content")),
        "the tampered one: {:?}",
        r.warnings
    );
    // Again, warm: still refused (the verdicts were kept), and `list` agrees.
    let r = warm.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_1_complete");
    let listed = warm.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 2);
    assert_eq!(
        listed
            .rejected
            .iter()
            .filter(|r| r.code.code() == "not_believed")
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_older_signed_comment_is_checked_again() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = warm_base(&fake, dir.path()).await;
    let warm = reader(&fake, dir.path(), vec![key("team secret")], false);
    // A newer signed checkpoint, read warm, so the one edited below is an older comment.
    fake.add_comment(
        issue,
        "ca-bot",
        &sign(&plain(&cp("subtask_2_complete")), &key("team secret")),
    );
    assert_eq!(
        warm.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_2_complete"
    );
    // A person with write access edits the first checkpoint: its signature no longer matches.
    let first = fake.comments_on(issue)[0].clone();
    let edited = first
        .body
        .replace("\"step\": \"clone_complete\"", "\"step\": \"rm -rf\"");
    assert_ne!(edited, first.body);
    assert_eq!(
        fake.edit_comment_as(OPS_TOKEN, first.id, &edited).await,
        200
    );

    let before = fake.requests().await.len();
    let listed = warm.list(&Filter::default(), None).await.unwrap();
    assert!(
        list_reads(&fake, before).await.iter().all(|since| *since),
        "read warm"
    );
    let phases: Vec<Option<&str>> = listed.entries.iter().map(|e| e.record.phase()).collect();
    assert_eq!(
        phases,
        [Some("subtask_1_complete"), Some("subtask_2_complete")]
    );
    let refused: Vec<Option<u64>> = listed
        .rejected
        .iter()
        .filter(|r| r.code.code() == "not_believed")
        .map(|r| r.comment.id)
        .collect();
    assert_eq!(refused, [Some(first.id)], "{:?}", listed.warnings);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_key_or_requiring_signatures_resyncs_the_cache() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = fake_forge::session(&fake);
    // Two records from before signing was turned on, then a signed one.
    let keyless = reader(&fake, dir.path(), Vec::new(), false);
    for phase in ["clone_complete", "subtask_1_complete"] {
        keyless.save(cp(phase)).await.posted().unwrap();
    }
    assert_eq!(
        keyless.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    let before = fake.requests().await.len();
    let signed = reader(&fake, dir.path(), vec![key("team secret")], false);
    signed
        .save(cp("subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    let r = signed.resume(W, "s1").await.unwrap();
    assert!(
        list_reads(&fake, before).await.contains(&false),
        "a cache built without keys is read again"
    );
    assert_eq!(r.resume.phase, "subtask_2_complete");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("2 record(s) carry no signature")),
        "{:?}",
        r.warnings
    );
    // Warm with the same key and setting.
    let before = fake.requests().await.len();
    let r = signed.resume(W, "s1").await.unwrap();
    assert_eq!(list_reads(&fake, before).await, [true], "a warm read");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("2 record(s) carry no signature")),
        "the warm read words it as the whole read: {:?}",
        r.warnings
    );

    // Signatures required: the older unsigned records are refused, after a full read.
    let before = fake.requests().await.len();
    let strict = reader(&fake, dir.path(), vec![key("team secret")], true);
    let listed = strict.list(&Filter::default(), None).await.unwrap();
    assert_eq!(list_reads(&fake, before).await, [false], "read again");
    assert_eq!(listed.entries.len(), 1, "{:?}", listed.warnings);

    // Another key: the signed record is not believed either, after a full read.
    let before = fake.requests().await.len();
    let other = reader(&fake, dir.path(), vec![key("another secret")], false);
    let r = other.resume(W, "s1").await.unwrap();
    assert_eq!(list_reads(&fake, before).await, [false], "read again");
    assert_ne!(r.resume.phase, "subtask_2_complete", "{:?}", r.warnings);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("which this reader does not hold")),
        "{:?}",
        r.warnings
    );
    let _ = issue;
}
