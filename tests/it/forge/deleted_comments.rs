//! Deleted comments linger less (issue #18, class 8): `since` cannot see a deletion, but the
//! head's comment count, which the issue read of a recheck already returns, can. A read whose
//! forge read the issue (the cached head older than `recheck_secs`) and found fewer comments
//! than the read cache holds resyncs, so a deleted comment lingers up to `recheck_secs` (5 min by
//! default), not `resync_secs` (1 h). Without a recheck it still lingers: no request is added.

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
async fn a_deleted_comment_goes_at_the_next_recheck_not_the_next_resync() {
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
    let gone = fake.comments_on(issue)[1].id;
    {
        let mut s = fake.state();
        s.comments.retain(|c| c.id != gone);
        if let Some(i) = s.issue_mut(issue) {
            i.comments -= 1;
        }
    }
    // The cached head is fresh: no issue read, no count, the mirror answers as before.
    let fresh = forge(&fake, dir.path(), Duration::from_secs(300));
    assert_eq!(
        fresh.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    // The recheck reads the issue anyway; its count shows the deletion.
    let rechecked = forge(&fake, dir.path(), Duration::ZERO);
    assert_eq!(
        rechecked.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
    // And the mirror was rebuilt: a fresh client now answers the same.
    let after = forge(&fake, dir.path(), Duration::from_secs(300));
    assert_eq!(
        after.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
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
