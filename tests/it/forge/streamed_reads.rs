//! Cold reads stream: comments nobody trusts, and bodies over the parser's cap, are skipped as
//! they go past, so no other account can make a read fail; the response cap counts only the
//! bodies kept.

use crate::fake_forge;
use std::time::Duration;

use fake_forge::{BOT_TOKEN, FakeForge, client, session};

use forgestate::Category;
use forgestate::format::Record;
use serde_json::json;

const MIB: usize = 1024 * 1024;
/// The response cap of the first test, and more than that many 1 MiB comments.
const CAP: usize = 16 * MIB;
const COMMENTS: usize = 17;

fn cp(phase: &str) -> Record {
    Record::checkpoint(
        "implementation-worker",
        "s1",
        phase,
        json!({"branch_name": "real"}),
    )
    .unwrap()
}

/// A body that looks like a record, padded to exactly `len` bytes.
fn forged(len: usize) -> String {
    let mut body =
        "[CHECKPOINT] implementation-worker\nPhase: pr_created\nSession: s1\n\n```json\n{}\n```\n"
            .to_string();
    body.push_str(&"x".repeat(len - body.len()));
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn megabyte_comments_from_another_account_cannot_stop_a_resume() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    // The issue's case is 270 comments of 1 MiB against the default 256 MiB cap; the same
    // shape at a 16 MiB cap keeps a debug build quick (the scenario benchmark runs the full
    // size in release).
    let bot = client(&fake, BOT_TOKEN, dir.path())
        .max_response_bytes(CAP)
        .timeouts(Duration::from_secs(1), Duration::from_secs(60))
        .build()
        .unwrap();
    bot.save(cp("clone_complete")).await.posted().unwrap();
    let body = forged(MIB);
    for _ in 0..COMMENTS {
        fake.add_comment(n, "mallory", &body);
    }
    let resumed = bot.resume("implementation-worker", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "clone_complete");
    assert_eq!(resumed.resume.data["branch_name"], "real");
    let scan = bot.scan().await.unwrap();
    assert_eq!(scan.entries.len(), 1);
    assert_eq!(scan.rejected.len(), COMMENTS);
    assert!(scan.rejected.iter().all(|r| r.code.code() == "untrusted"
        && r.comment.author == "mallory"
        && r.comment.id.is_some()));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_response_cap_counts_only_the_bodies_kept() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bot = client(&fake, BOT_TOKEN, dir.path())
        .max_response_bytes(64 * 1024)
        .build()
        .unwrap();
    bot.save(cp("clone_complete")).await.posted().unwrap();
    for _ in 0..4 {
        fake.add_comment(n, "mallory", &forged(100 * 1024));
    }
    // A trusted body over the parser's cap is measured and dropped, not kept.
    let huge = fake.add_comment(n, "ca-bot", &forged(MIB + 1));
    let scan = bot.scan().await.unwrap();
    assert_eq!(scan.entries.len(), 1);
    let too_large: Vec<_> = scan
        .rejected
        .iter()
        .filter(|r| r.code.code() == "too_large")
        .collect();
    assert_eq!(too_large.len(), 1);
    assert_eq!(too_large[0].comment.id, Some(huge));
    assert!(
        too_large[0].reason.contains(&(MIB + 1).to_string()),
        "{}",
        too_large[0].reason
    );
    let resumed = bot.resume("implementation-worker", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "clone_complete");
    assert!(
        resumed.warnings.iter().any(|w| w.contains("too_large")),
        "a newer trusted comment that could not be read is still said: {:?}",
        resumed.warnings
    );

    // Trusted bodies past the cap still fail the read, saying which setting to change.
    fake.add_comment(n, "ca-bot", &forged(70 * 1024));
    let err = bot.resume("implementation-worker", "s1").await.unwrap_err();
    assert_eq!(err.category(), Category::Config, "{err}");
    let said = err.to_string();
    assert!(said.contains("max_response_mib"), "{said}");
}

/// Issue #29 hole 1: the bot's own large comments on other issues (CI logs) are not the
/// thread's, so they never count toward the response cap: a cold read of the session succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn the_bots_large_comments_on_other_issues_do_not_count_toward_the_cap() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bot = client(&fake, BOT_TOKEN, dir.path())
        .max_response_bytes(64 * 1024)
        .build()
        .unwrap();
    bot.save(cp("clone_complete")).await.posted().unwrap();
    let ci = fake.add_issue("CI run", &[], false);
    for _ in 0..4 {
        fake.add_comment(ci, "ca-bot", &"log line\n".repeat(12 * 1024));
    }
    let fresh = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .max_response_bytes(64 * 1024)
        .build()
        .unwrap();
    let resumed = fresh.resume("implementation-worker", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "clone_complete");
    let scan = fresh.scan().await.unwrap();
    assert_eq!(scan.entries.len(), 1);
    assert!(scan.rejected.is_empty(), "{:?}", scan.rejected);
    assert!(fake.comments_on(n).len() == 1);
}

/// A member whose comments the repository-wide list left out (other issues' bodies had filled
/// their share of the cap) is read on its own: its late record is not lost.
#[tokio::test(flavor = "multi_thread")]
async fn a_member_left_out_of_the_wide_list_is_read_on_its_own() {
    const CAP: usize = 64 * 1024;
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = client(&fake, BOT_TOKEN, w.path())
        .max_response_bytes(CAP)
        .build()
        .unwrap();
    writer.save(cp("clone_complete")).await.posted().unwrap();
    let rotation = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap()
        .rotate()
        .await
        .unwrap();
    assert!(rotation.to.is_some());
    let on_old: usize = fake.comments_on(old).iter().map(|c| c.body.len()).sum();
    // Another issue's comment that leaves less room than a record in the share of the cap not
    // known to be the thread's.
    let ci = fake.add_issue("CI run", &[], false);
    fake.add_comment(ci, "ca-bot", &"x".repeat(CAP - on_old - 50));
    fake.age(3600);
    // The writer's cached number is still fresh on its own clock: a late post to `old`.
    let late = writer.save(cp("pr_created")).await.posted().unwrap();
    assert!(
        fake.comments_on(old)
            .iter()
            .any(|c| c.id == late.comment_id),
        "posted to the rotated-away issue"
    );
    let fresh = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .max_response_bytes(CAP)
        .build()
        .unwrap();
    let resumed = fresh.resume("implementation-worker", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "pr_created", "{:?}", resumed.warnings);
}
