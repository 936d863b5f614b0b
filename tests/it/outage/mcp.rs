//! The MCP server is one long-lived process: each tool call is a command with its own wait
//! budget. In an outage a checkpoint spools within the bound, the next call answers offline
//! after one attempt, and the first call after the forge is back posts the backlog.

use std::time::Instant;

use serde_json::json;

use super::GENEROUS;
use crate::common::cli::Bin;
use crate::fake_forge::outage::Mode;
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use crate::mcp_client::{call, connect, ok};

#[tokio::test(flavor = "multi_thread")]
async fn each_tool_call_gets_its_own_budget_and_none_blocks() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let front = fake.front().await;
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&front.uri(), OWNER, REPO, BOT_TOKEN);
    let (client, _stderr) = connect(&bin, "").await;
    let args = |phase: &str| json!({"agent": "w", "session": "s", "phase": phase});
    let first = call(&client, "checkpoint", args("planned")).await;
    assert_eq!(ok(&first)["posted"], true, "{first:?}");

    front.set(Mode::Silent);
    let started = Instant::now();
    let saved = call(&client, "checkpoint", args("built")).await;
    assert!(started.elapsed() < GENEROUS, "{:?}", started.elapsed());
    assert!(ok(&saved)["spooled"].is_string(), "{saved:?}");

    // The forge accepts connections, so the next call's one attempt gets its own budget
    // (a forge back but slow would be heard), not what is left of the last call's.
    let started = Instant::now();
    let resume = call(&client, "resume", json!({"agent": "w", "session": "s"})).await;
    assert!(
        started.elapsed() < GENEROUS,
        "the next call has its own budget: {:?}",
        started.elapsed()
    );
    let resume = ok(&resume);
    assert_eq!(resume["offline"], true, "{resume}");
    assert_eq!(resume["phase"], "built", "{resume}");

    front.set(Mode::Up);
    let resume = call(&client, "resume", json!({"agent": "w", "session": "s"})).await;
    let resume = ok(&resume);
    assert_eq!(resume["offline"], false, "{resume}");
    assert_eq!(resume["pending"], false, "posted by this call: {resume}");
    assert_eq!(fake.comments_on(n).len(), 2);
    client.cancel().await.ok();
}
