//! A comment a person deletes in the web UI does not live on in warm answers (`src/mirror/
//! deleted.rs`): a `since` read cannot show a deletion, but the session issue's `comments`
//! count, read with every warm list, drops with it. Warm `resume`, `latest`, `list`, `history`
//! and `status` then answer as a read without the cache does, whether the deleted comment is
//! the newest checkpoint, a `[TAKEOVER]`, or an old record, and when another comment was posted
//! since; a warm read that finds nothing deleted costs one request more than before (the issue,
//! asked at the same time as the list); a count out of step with the comments costs one resync.

use super::{cached, uncached};
use crate::fake_forge;
use std::path::Path;

use fake_forge::{FakeForge, Fault};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::report::StatusPolicy;
use forgestate::scan::{Filter, Scan};
use forgestate::{HistoryQuery, Resumed};
use serde_json::{Value, json};

const W: &str = "implementation-worker";

fn cp(phase: &str, data: Value) -> Record {
    Record::checkpoint(W, "s1", phase, data).unwrap()
}

/// The comment ids an answer's entries are in.
fn ids(scan: &Scan) -> Vec<Option<u64>> {
    scan.entries.iter().map(|e| e.comment.id).collect()
}

fn phase(resumed: &Resumed) -> &str {
    &resumed.resume.phase
}

/// Every warm answer (through a fresh client over the cache in `dir`, as a new command would
/// read) against the same answer without the cache. (Each read on the heap: a debug build's
/// read futures are large.)
async fn warm_answers_as_the_thread(fake: &FakeForge, dir: &Path) {
    let warm = || cached(fake, dir);
    let truth = || uncached(fake, dir);
    let resumed = Box::pin(resume(warm())).await;
    assert_eq!(phase(&resumed), phase(&Box::pin(resume(truth())).await));
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    assert_eq!(
        Box::pin(latest(warm())).await,
        Box::pin(latest(truth())).await
    );
    assert_eq!(
        ids(&Box::pin(list(warm())).await),
        ids(&Box::pin(list(truth())).await)
    );
    assert_eq!(
        Box::pin(history(warm())).await,
        Box::pin(history(truth())).await
    );
    assert_eq!(
        Box::pin(status(warm())).await,
        Box::pin(status(truth())).await
    );
}

async fn resume(c: Client<AnyThread>) -> Resumed {
    c.resume(W, "s1").await.unwrap()
}

/// The comment `latest` answers.
async fn latest(c: Client<AnyThread>) -> Option<Option<u64>> {
    let l = c.latest(&Filter::default()).await.unwrap();
    l.record.map(|e| e.comment.id)
}

async fn list(c: Client<AnyThread>) -> Scan {
    c.list(&Filter::default(), None).await.unwrap()
}

/// The session's history records, as JSON.
async fn history(c: Client<AnyThread>) -> Value {
    let h = c.history(&HistoryQuery::new("s1")).await.unwrap();
    serde_json::to_value(&h.records).unwrap()
}

/// Each status row's phase and record count.
async fn status(c: Client<AnyThread>) -> Vec<(Option<String>, usize)> {
    let s = c
        .status(&Filter::default(), &StatusPolicy::default())
        .await
        .unwrap();
    s.rows
        .iter()
        .map(|r| (r.phase.clone(), r.records))
        .collect()
}

/// A session issue with two checkpoints and a person's note, read once through the cache.
async fn two_checkpoints(fake: &FakeForge, dir: &Path) -> u64 {
    let issue = fake_forge::session(fake);
    let client = cached(fake, dir);
    client
        .save(cp("clone_complete", json!({"n": 1})))
        .await
        .posted()
        .unwrap();
    // A note nobody trusts: the cache holds it too (the count counts every comment).
    fake.add_comment(issue, "mallory", "looks good so far");
    client
        .save(cp("subtask_1_complete", json!({"n": 2})))
        .await
        .posted()
        .unwrap();
    assert_eq!(
        phase(&client.resume(W, "s1").await.unwrap()),
        "subtask_1_complete"
    );
    issue
}

#[tokio::test]
async fn a_deleted_newest_checkpoint_leaves_every_warm_answer() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = two_checkpoints(&fake, dir.path()).await;
    let newest = fake.comments_on(issue).last().unwrap().id;
    fake.delete_comment(newest);

    let resumed = cached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(phase(&resumed), "clone_complete");
    Box::pin(warm_answers_as_the_thread(&fake, dir.path())).await;
}

#[tokio::test]
async fn a_deleted_old_checkpoint_leaves_warm_lists_and_history() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = two_checkpoints(&fake, dir.path()).await;
    let oldest = fake.comments_on(issue)[0].id;
    fake.delete_comment(oldest);

    let listed = cached(&fake, dir.path())
        .list(&Filter::default(), None)
        .await
        .unwrap();
    assert!(!ids(&listed).contains(&Some(oldest)), "{:?}", ids(&listed));
    assert_eq!(listed.entries.len(), 1);
    Box::pin(warm_answers_as_the_thread(&fake, dir.path())).await;
}

#[tokio::test]
async fn a_deleted_takeover_no_longer_fences_in_warm_answers() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let old = cached(&fake, dir.path()).with_writer("w-old");
    old.save(cp("one", json!({"x": 1}))).await.posted().unwrap();
    let new = cached(&fake, dir.path()).with_writer("w-new");
    new.take_over(W, "s1", None).await.unwrap();
    // The old writer goes on writing: fenced, so readers answer the record taken over.
    old.save(cp("two", json!({"x": 2}))).await.posted().unwrap();
    let reader = || cached(&fake, dir.path()).with_writer("w-reader");
    let fenced = reader().resume(W, "s1").await.unwrap();
    assert_eq!(fenced.resume.data["x"], 1);

    // A person deletes the [TAKEOVER]: nothing fences the old writer any more.
    let takeover = fake
        .comments_on(issue)
        .into_iter()
        .find(|c| c.body.contains("[TAKEOVER]"))
        .unwrap()
        .id;
    fake.delete_comment(takeover);
    let warm = reader().resume(W, "s1").await.unwrap();
    let cold = uncached(&fake, dir.path()).with_writer("w-reader");
    let cold = cold.resume(W, "s1").await.unwrap();
    assert_eq!(cold.resume.data["x"], 2);
    assert_eq!(warm.resume.data, cold.resume.data);
    Box::pin(warm_answers_as_the_thread(&fake, dir.path())).await;
}

#[tokio::test]
async fn a_deletion_shows_when_another_comment_was_posted_since() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = two_checkpoints(&fake, dir.path()).await;
    // The count is the same as the cache's: one comment gone, one new.
    let newest = fake.comments_on(issue).last().unwrap().id;
    fake.delete_comment(newest);
    fake.add_comment(issue, "mallory", "deleted the broken one");
    let resumed = cached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(phase(&resumed), "clone_complete");
    Box::pin(warm_answers_as_the_thread(&fake, dir.path())).await;
}

#[tokio::test]
async fn a_warm_read_asks_for_the_issue_with_the_list_and_nothing_more() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = two_checkpoints(&fake, dir.path()).await;
    cached(&fake, dir.path())
        .save(cp("subtask_2_complete", json!({"n": 3})))
        .await
        .posted()
        .unwrap();
    for read in ["resume", "list"] {
        let before = fake.requests().await.len();
        let client = cached(&fake, dir.path());
        match read {
            "resume" => assert_eq!(
                phase(&client.resume(W, "s1").await.unwrap()),
                "subtask_2_complete"
            ),
            _ => assert_eq!(
                client
                    .list(&Filter::default(), None)
                    .await
                    .unwrap()
                    .entries
                    .len(),
                3
            ),
        }
        let asked: Vec<String> = fake.requests().await[before..]
            .iter()
            .map(|r| format!("{} {}", r.method, r.url.path()))
            .collect();
        let repo = format!("/api/v1/repos/{}/{}", fake_forge::OWNER, fake_forge::REPO);
        assert_eq!(
            asked.len(),
            2,
            "{read}: the list and the issue, nothing else: {asked:?}"
        );
        assert!(
            asked.contains(&format!("GET {repo}/issues/comments")),
            "{asked:?}"
        );
        assert!(
            asked.contains(&format!("GET {repo}/issues/{issue}")),
            "{asked:?}"
        );
    }
}

#[tokio::test]
async fn a_count_the_forge_will_not_give_is_said() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = two_checkpoints(&fake, dir.path()).await;
    fake.inject(&format!("GET /issues/{issue}"), Fault::Status(403));
    let resumed = cached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(phase(&resumed), "subtask_1_complete");
    let said = resumed.warnings.join("\n");
    assert!(
        said.contains(&format!("how many comments session issue #{issue} holds")),
        "{said}"
    );
    // The next read gets the count again, and says nothing.
    let resumed = cached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
}

#[tokio::test]
async fn a_count_out_of_step_with_the_comments_costs_one_resync_not_one_a_read() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let issue = two_checkpoints(&fake, dir.path()).await;
    // The forge's count says one comment fewer than it lists (as a database whose count
    // drifted does): the first warm read takes it for a deletion and resyncs...
    if let Some(row) = fake.state().issue_mut(issue) {
        row.comments -= 1;
    }
    let before = fake.requests().await.len();
    let resumed = Box::pin(resume(cached(&fake, dir.path()))).await;
    assert_eq!(phase(&resumed), "subtask_1_complete");
    assert!(
        comment_lists(&fake, before).await.contains(&false),
        "a full read"
    );
    // ...and the next ones stay warm, and still see a real deletion.
    for _ in 0..2 {
        let before = fake.requests().await.len();
        let resumed = Box::pin(resume(cached(&fake, dir.path()))).await;
        assert_eq!(phase(&resumed), "subtask_1_complete");
        assert_eq!(
            comment_lists(&fake, before).await,
            [true],
            "one `since` list"
        );
    }
    fake.delete_comment(fake.comments_on(issue).last().unwrap().id);
    let resumed = Box::pin(resume(cached(&fake, dir.path()))).await;
    assert_eq!(phase(&resumed), "clone_complete");
    Box::pin(warm_answers_as_the_thread(&fake, dir.path())).await;
}

/// Whether each comment list asked after the first `skip` requests was a `since` one.
async fn comment_lists(fake: &FakeForge, skip: usize) -> Vec<bool> {
    fake.requests().await[skip..]
        .iter()
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        .map(|r| r.url.query().is_some_and(|q| q.contains("since=")))
        .collect()
}
