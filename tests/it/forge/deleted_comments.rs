//! Deleted comments do not linger (issue #18, class 8): `since` cannot see a deletion, but the
//! head's comment count can. Every warm read learns it (the session issue, asked with the
//! list, or the recheck's own read of it when that is due), and a read cache holding more of
//! the head's comments than the count resyncs: a deleted comment goes at the next read, with a
//! fresh cached head or a recheck alike. The cache tests (`tests/it/cache/deleted.rs`) check
//! every answer and the request count.

use crate::fake_forge;
use std::path::Path;
use std::time::Duration;

use fake_forge::{BOT_TOKEN, FakeForge};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::mirror::ReadCache;
use serde_json::json;

const W: &str = "implementation-worker";

fn forge(fake: &FakeForge, dir: &Path, recheck: Duration) -> Client<AnyThread> {
    fake_forge::client(fake, BOT_TOKEN, dir)
        .read_cache(ReadCache {
            enabled: true,
            resync_after: Duration::from_secs(3600),
        })
        .recheck_after(recheck)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_deleted_comment_goes_at_the_next_read_with_or_without_a_recheck() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path(), Duration::from_secs(300));
    for phase in ["clone_complete", "subtask_1_complete"] {
        let record = Record::checkpoint(W, "s1", phase, json!({})).unwrap();
        client.save(record).await.posted().unwrap();
    }
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    // Someone deletes the newest record in the web UI (the issue's count drops with it).
    fake.delete_comment(fake.comments_on(issue)[1].id);
    // The cached head is fresh (no recheck): the issue is asked with the list all the same.
    let fresh = forge(&fake, dir.path(), Duration::from_secs(300));
    assert_eq!(
        fresh.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
    // Then one more, which a recheck finds through its own read of the issue.
    fake.delete_comment(fake.comments_on(issue)[0].id);
    let rechecked = forge(&fake, dir.path(), Duration::ZERO);
    assert_eq!(
        rechecked.resume(W, "s1").await.unwrap().resume.phase,
        "fresh_start"
    );
    // And the mirror was rebuilt: a fresh client now answers the same.
    let after = forge(&fake, dir.path(), Duration::from_secs(300));
    assert_eq!(
        after.resume(W, "s1").await.unwrap().resume.phase,
        "fresh_start"
    );
}

#[tokio::test]
async fn a_new_comment_since_the_count_does_not_force_a_resync() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path(), Duration::ZERO);
    for phase in ["one", "two"] {
        let record = Record::checkpoint(W, "s1", phase, json!({})).unwrap();
        client.save(record).await.posted().unwrap();
    }
    client.resume(W, "s1").await.unwrap();
    let before = fake.requests().await.len();
    let warm = forge(&fake, dir.path(), Duration::ZERO);
    assert_eq!(warm.resume(W, "s1").await.unwrap().resume.phase, "two");
    let full_reads = fake.requests().await[before..]
        .iter()
        .filter(|r| {
            r.url.path().ends_with(&format!("/issues/{issue}/comments"))
                && !r.url.query().unwrap_or("").contains("since=")
        })
        .count();
    assert_eq!(
        full_reads, 0,
        "the count matched: the warm read stayed warm"
    );
}
