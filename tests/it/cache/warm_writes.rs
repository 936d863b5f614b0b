//! The warm path at the floor (issue #30): a `resume` that finds nothing new writes nothing on
//! this machine (no read cache file, no lineage file rewritten), so its cost is the one request.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::common::cli::{Bin, stderr};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::store::Thread;

/// Every file under `dir` with its inode, length and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, u64, i64, i64)> {
    crate::common::files_under(dir)
        .into_iter()
        .filter_map(|p| {
            let m = std::fs::metadata(&p).ok()?;
            Some((p, (m.ino(), m.len(), m.mtime(), m.mtime_nsec())))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resume_that_finds_nothing_new_writes_no_file() {
    let fake = FakeForge::start().await;
    session(&fake);
    let home = tempfile::tempdir().unwrap();
    let bin = Bin::new(home.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let run = |line: &str| {
        let out = bin.line(line);
        assert!(out.status.success(), "{line}: {}", stderr(&out));
    };
    run("checkpoint --agent w --session s --phase clone_complete");
    run("resume --agent w --session s");
    let before = snapshot(home.path());
    assert!(
        before
            .keys()
            .any(|p| p.to_string_lossy().contains("lineage")),
        "the machine remembers the session's last record: {before:?}"
    );
    let asked = fake.requests().await.len();
    run("resume --agent w --session s");
    assert_eq!(fake.requests().await.len() - asked, 1, "one request");
    assert_eq!(snapshot(home.path()), before, "nothing was written");
}

/// A long-lived client that saves and then lists (a LangGraph saver's `put` then a read, an MCP
/// server's checkpoint then list) keeps its reads at one request: a comment posted in the same
/// second as the head's comment count was taken (the forge's times are whole seconds) is not
/// held against that count as a sign of a deletion, which sent every other read to the whole
/// thread.
#[tokio::test(flavor = "multi_thread")]
async fn lists_after_this_clients_own_posts_stay_one_request() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = crate::fake_forge::client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap();
    let save = |phase: &str| {
        forgestate::format::Record::checkpoint("w", "s", phase, serde_json::json!({})).unwrap()
    };
    let all = forgestate::scan::Filter::default();
    c.save(save("p0")).await.posted().unwrap();
    c.list(&all, None).await.unwrap();
    let mut per_read = Vec::new();
    for i in 1..7 {
        c.save(save(&format!("p{i}"))).await.posted().unwrap();
        let asked = fake.requests().await.len();
        let listed = c.list(&all, None).await.unwrap();
        assert_eq!(listed.entries.len(), i + 1);
        per_read.push(fake.requests().await.len() - asked);
    }
    assert_eq!(per_read, [1; 6], "requests per list after a save");
    // A deletion is still found: the list no longer holds the deleted record.
    let comments = fake.comments_on(n);
    c.thread_raw().delete(&[comments[0].id]).await.unwrap();
    c.forget_read_cache().unwrap();
    assert_eq!(c.list(&all, None).await.unwrap().entries.len(), 6);
}
