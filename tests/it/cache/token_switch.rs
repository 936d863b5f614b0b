//! A machine that switches to another account's token (this session's attack, hole 5): the
//! session issue number it cached was checked under the first account, whose issue the second
//! does not trust. The cached number is checked again under the new token, so a warm read answers
//! as a cold one does, rather than reading an untrusted issue and answering "fresh start".

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, MALLORY_TOKEN, session};
use forgestate::format::Record;
use serde_json::json;

const W: &str = "implementation-worker";

#[tokio::test(flavor = "multi_thread")]
async fn another_accounts_token_checks_the_cached_issue_again() {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let url = fake.uri();
    let bot = fake_forge::client_trusting(&url, BOT_TOKEN, dir.path())
        .build()
        .unwrap();
    let record = Record::checkpoint(W, "s1", "deep_in_work", json!({"step": 41})).unwrap();
    bot.save(record).await.posted().unwrap();
    assert_eq!(
        bot.resume(W, "s1").await.unwrap().resume.phase,
        "deep_in_work"
    );
    // A second machine that has read the thread too.
    let writer = tempfile::tempdir().unwrap();
    let warmed = fake_forge::client_trusting(&url, BOT_TOKEN, writer.path())
        .build()
        .unwrap();
    let phase = warmed.resume(W, "s1").await.unwrap().resume.phase;
    assert_eq!(phase, "deep_in_work");
    drop((bot, warmed));

    // The same machine (its caches), now with another account's token, trusting only itself.
    let warm = fake_forge::client_trusting(&url, MALLORY_TOKEN, dir.path())
        .build()
        .unwrap()
        .resume(W, "s1")
        .await;
    let fresh = tempfile::tempdir().unwrap();
    let cold = fake_forge::client_trusting(&url, MALLORY_TOKEN, fresh.path())
        .build()
        .unwrap()
        .resume(W, "s1")
        .await;
    let cold = cold.expect_err("a cold read finds no issue this account trusts");
    let warm = warm.map(|r| r.resume.phase).expect_err(&format!(
        "the warm read trusted issue {issue}, which another account opened"
    ));
    assert_eq!(warm.to_string(), cold.to_string());

    // Nor does the other account write there: its own readers would never find the record.
    let record = Record::checkpoint(W, "s1", "next_step", json!({})).unwrap();
    let _ = fake_forge::client_trusting(&url, MALLORY_TOKEN, writer.path())
        .build()
        .unwrap()
        .save(record)
        .await;
    assert_eq!(
        fake.comments_on(issue).len(),
        1,
        "the other account's record went to issue {issue}, which it does not trust"
    );
}
