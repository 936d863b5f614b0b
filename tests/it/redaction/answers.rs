//! One redaction pass over every answer: a record another client posted without redaction (the
//! seed's own client redacts nothing) comes back with the token in use, a `ghp_` token and a
//! secret-looking key replaced, in `resume`/`list`/`latest`/`history`/`status --json` and in MCP
//! answers, so a model never gets the token in its context.

use crate::common::GHP;
use crate::common::cli::{Bin, stderr, words};
use crate::fake_forge::{self, BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::json;

/// A seed-format checkpoint by `w` whose data holds three secrets, as the seed's client posts it.
fn unredacted_body() -> String {
    let data = json!({
        "note": format!("cloned with token {BOT_TOKEN}"),
        "api_token": "s3cr3t-value-xyz",
        "pasted": format!("export GH={GHP}"),
        "glued": format!("x-{GHP}"),
    });
    format!(
        "[CHECKPOINT] w\nVersion: 2.0\nPhase: clone_complete\nSession: s\n\
         Time: 2026-12-01T19:00:00.000000Z\nId: 01a2359a-0000-7000-8000-000000000001\n\n\
         State Data:\n```json\n{}\n```\n\n---\n\nAutomated by CleverAgents Bot Agent: w",
        serde_json::to_string_pretty(&data).unwrap()
    )
}

fn leaks(text: &str) -> Vec<&'static str> {
    [BOT_TOKEN, GHP, "s3cr3t-value-xyz"]
        .into_iter()
        .filter(|s| text.contains(s))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_nobody_redacted_is_redacted_in_every_answer() {
    let fake = FakeForge::start().await;
    let n = fake_forge::session(&fake);
    fake.add_comment(n, "ca-bot", &unredacted_body());

    let dir = tempfile::tempdir().unwrap();
    let bin = || Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    for line in [
        "resume --agent w --session s --json",
        "latest --agent w --json",
        "list --json",
        "history --session s --json",
        "status --json",
        "resume --agent w --session s",
        "list",
    ] {
        let out = bin().run(&words(line));
        assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
        let said = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(said.contains("clone_complete"), "{line}: {said}");
        assert_eq!(leaks(&said), Vec::<&str>::new(), "{line}: {said}");
    }

    let lib = fake_forge::bot(&fake, tempfile::tempdir().unwrap().path());
    let resumed = lib.resume("w", "s").await.unwrap();
    let text = serde_json::to_string(&resumed.resume.data).unwrap();
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    assert!(text.contains("[REDACTED]"), "{text}");

    let (mcp, _err) = crate::mcp_client::connect(&bin(), "").await;
    for (tool, args) in [
        ("resume", json!({"agent": "w", "session": "s"})),
        ("list", json!({})),
        ("history", json!({"session": "s"})),
    ] {
        let got = crate::mcp_client::call(&mcp, tool, args).await;
        let text = format!("{got:?}");
        assert!(text.contains("clone_complete"), "{tool}: {text}");
        assert_eq!(leaks(&text), Vec::<&str>::new(), "{tool}: {text}");
    }
    mcp.cancel().await.unwrap();
}
