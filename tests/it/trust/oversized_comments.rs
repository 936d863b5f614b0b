//! A comment over the parser's 1 MiB cap (issue #29 hole 10): the store keeps the beginning of
//! its body, so when that is plainly not a record, no `resume` warns that its answer may be
//! stale; when its marker line names an agent, only that agent's answers warn. On both stores,
//! with the read cache and without.

use crate::fake_forge;

use fake_forge::{FakeForge, bot, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::store::Thread;
use serde_json::json;

const W: &str = "implementation-worker";
const MIB: usize = 1024 * 1024;

fn cp(agent: &str, phase: &str) -> Record {
    Record::checkpoint(agent, "s1", phase, json!({})).unwrap()
}

/// A CI log over the cap: not a record.
fn log() -> String {
    format!("CI run 1234 failed\n```\n{}\n```\n", "x".repeat(MIB))
}

/// A checkpoint of `agent` padded over the cap.
fn huge_record(agent: &str) -> String {
    format!(
        "[CHECKPOINT] {agent}\nPhase: pr_created\nSession: s1\n\n```json\n{{\"pad\": \"{}\"}}\n```\n",
        "x".repeat(MIB)
    )
}

fn stale(warnings: &[String]) -> usize {
    warnings
        .iter()
        .filter(|w| w.contains("may be stale"))
        .count()
}

async fn check(c: &Client<AnyThread>, what: &str) {
    let r = c.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "clone_complete", "{what}");
    assert_eq!(stale(&r.warnings), 0, "{what}: {:?}", r.warnings);
    let other = c.resume("review-worker", "s1").await.unwrap();
    assert_eq!(stale(&other.warnings), 1, "{what}: {:?}", other.warnings);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_comment_warns_only_the_agent_it_may_belong_to_on_the_forge() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp(W, "clone_complete")).await.posted().unwrap();
    fake.add_comment(n, "ca-bot", &log());
    fake.add_comment(n, "ca-bot", &huge_record("review-worker"));
    check(&c, "with the read cache").await;
    let uncached = bot(&fake, tempfile::tempdir().unwrap().path()).without_read_cache();
    check(&uncached, "without it").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_comment_warns_only_the_agent_it_may_belong_to_on_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local_as(dir.path(), "me").unwrap();
    c.save(cp(W, "clone_complete")).await.posted().unwrap();
    c.thread_raw().append(&log()).await.unwrap();
    c.thread_raw()
        .append(&huge_record("review-worker"))
        .await
        .unwrap();
    check(&c, "with the read cache").await;
    let uncached = Client::local_as(dir.path(), "me")
        .unwrap()
        .without_read_cache();
    check(&uncached, "without it").await;
}
