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
