//! The warm path at the floor (issue #30): a `resume` that finds nothing new writes nothing on
//! this machine (no read cache file, no lineage file rewritten), so its cost is its requests.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::common::cli::{Bin, stderr};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};

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
    // The `since` list and the session issue (its comment count), nothing more.
    assert_eq!(fake.requests().await.len() - asked, 2, "two requests");
    assert_eq!(snapshot(home.path()), before, "nothing was written");
}
