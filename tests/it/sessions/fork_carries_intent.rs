//! The documented retry flow, forking a stuck session, keeps the side effect the session was
//! about to perform: the fork's first checkpoint carries the source's pending intent, so the
//! worker resuming the new session checks the world before it opens a second pull request. On
//! both stores through the binary, and through MCP.

use crate::common::world::World;
use crate::mcp_client::{self, call};
use serde_json::{Value, json};

fn pending(doc: &Value) -> &Value {
    &doc["pending_intent"]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_carries_the_pending_intent_of_the_record_it_forks_from() {
    for w in World::both().await {
        w.ok("checkpoint --agent w --session issue-41 --phase tests_pass --intent create_pr --intent-data {\"branch\":\"fix-41\"}");
        let forked = w.ok("fork --session issue-41 --new-session issue-41-retry");
        assert_eq!(forked["posted"], true, "{}: {forked:#}", w.name());
        let resumed = w.ok("resume --agent w --session issue-41-retry");
        assert_eq!(resumed["phase"], "tests_pass", "{}: {resumed:#}", w.name());
        let intent = pending(&resumed);
        assert_eq!(intent["name"], "create_pr", "{}: {resumed:#}", w.name());
        assert_eq!(intent["data"], json!({"branch": "fix-41"}), "{}", w.name());

        // A confirmed intent is not carried: the fork of a checkpoint that confirmed it starts
        // clean.
        w.ok("checkpoint --agent w --session issue-41 --phase pr_created --done create_pr");
        w.ok("fork --session issue-41 --new-session issue-41-again");
        let resumed = w.ok("resume --agent w --session issue-41-again");
        assert!(pending(&resumed).is_null(), "{}: {resumed:#}", w.name());
    }

    // The MCP face runs the same verb.
    let w = World::local();
    w.ok("checkpoint --agent w --session s --phase tests_pass --intent create_pr");
    let bin = crate::common::cli::Bin::new(w.d());
    let store = format!("--store {}", w.store().display());
    let (client, _err) = mcp_client::connect(&bin, &store).await;
    let forked = call(
        &client,
        "fork",
        json!({"session": "s", "new_session": "s-retry"}),
    )
    .await;
    mcp_client::ok(&forked);
    let resumed = call(
        &client,
        "resume",
        json!({"agent": "w", "session": "s-retry"}),
    )
    .await;
    let doc = mcp_client::ok(&resumed);
    assert_eq!(doc["pending_intent"]["name"], "create_pr", "{doc:#}");
    client.cancel().await.unwrap();
}
