//! A forge recreated at the same URL (issue #29 hole 11): the read cache of the old one is
//! dropped once the session issue shows a new repository id (or another creation time), so no
//! record that no longer exists is listed.

use crate::fake_forge;
use std::path::Path;
use std::time::Duration;

use fake_forge::{BOT_TOKEN, FakeForge, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::mirror::ReadCache;
use forgestate::scan::Filter;
use serde_json::json;

const W: &str = "implementation-worker";

/// The bot with the read cache on, rechecking the session issue on every read.
fn cached(fake: &FakeForge, dir: &Path) -> Client<AnyThread> {
    fake_forge::client(fake, BOT_TOKEN, dir)
        .read_cache(ReadCache {
            enabled: true,
            resync_after: Duration::from_secs(3600),
        })
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap()
}

fn cp(session: &str, phase: &str) -> Record {
    Record::checkpoint(W, session, phase, json!({})).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recreated_forge_drops_the_read_cache_of_the_old_one() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let reader = cached(&fake, dir.path());
    reader
        .save(cp("s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    reader
        .save(cp("s1", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let listed = reader.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 2);

    // The instance is wiped and set up again: the session issue has the same number (and URL),
    // comment ids start over (another issue's comments took the old records' ids), and its
    // thread holds more comments than the cache held, so no count shows a deletion.
    fake.recreate();
    assert_eq!(session(&fake), old);
    let ci = fake.add_issue("CI run", &[], false);
    for _ in 0..2 {
        fake.add_comment(ci, "mallory", "log");
    }
    let writer = cached(&fake, tempfile::tempdir().unwrap().path());
    for phase in ["clone_complete", "subtask_1_complete", "pr_created"] {
        writer.save(cp("s2", phase)).await.posted().unwrap();
    }

    let reader = cached(&fake, dir.path());
    let listed = reader.list(&Filter::default(), None).await.unwrap();
    let sessions: Vec<&str> = listed
        .entries
        .iter()
        .map(|e| e.record.session.as_str())
        .collect();
    assert_eq!(
        sessions,
        ["s2", "s2", "s2"],
        "only what the new forge holds"
    );
    let resumed = reader.resume(W, "s1").await.unwrap();
    assert!(
        resumed.resume.checkpoint.is_none(),
        "s1 is gone with the old forge"
    );
}
