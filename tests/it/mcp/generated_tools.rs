//! The MCP tools generated from the verb table, driven by rmcp's client over the real binary:
//! the handoff (next, blockers, context drift) round-trips through `checkpoint` → `resume`,
//! `history` and `fork` work, and the resume resource and prompt answer.

use crate::{common, mcp_client};
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{Map, Value, json};

use common::cli::{Bin, stderr};
use mcp_client::{call, connect, failed, ok, text};

#[tokio::test(flavor = "multi_thread")]
async fn the_handoff_round_trips_through_checkpoint_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("STATUS.md"), "# plan\n- step 1\n").unwrap();
    let bin = Bin::new(d);
    let (client, _stderr) = connect(&bin, "--store st").await;
    let status = d.join("STATUS.md");

    let saved = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": "s1", "phase": "clone_complete",
               "data": {"issue_number": 42}, "next": "write the tests",
               "blockers": ["CI is red", "waiting for review"], "context_file": status}),
    )
    .await;
    let saved = ok(&saved).clone();
    assert_eq!(saved["posted"], true);
    let hash = saved["record"]["context_hash"]
        .as_str()
        .expect("the context hash is recorded")
        .to_string();

    let resumed = call(
        &client,
        "resume",
        json!({"agent": "w", "session": "s1", "context_file": status}),
    )
    .await;
    let summary = text(&resumed).to_string();
    let back = ok(&resumed);
    assert_eq!(back["next"], "write the tests");
    assert_eq!(back["blockers"], json!(["CI is red", "waiting for review"]));
    assert_eq!(back["context_hash"], hash.as_str());
    assert_eq!(back["context_drift"], false);
    assert_eq!(back["checkpoint"]["id"], saved["id"]);
    assert!(
        summary.contains("\nnext:         write the tests"),
        "{summary}"
    );

    // The file changes: the same resume says it drifted. Without the file, nobody can say.
    std::fs::write(&status, "# plan\n- step 1\n- step 2\n").unwrap();
    let drifted = call(
        &client,
        "resume",
        json!({"agent": "w", "session": "s1", "context_file": status}),
    )
    .await;
    assert_eq!(ok(&drifted)["context_drift"], true);
    let unknown = call(&client, "resume", json!({"agent": "w", "session": "s1"})).await;
    assert_eq!(ok(&unknown)["context_drift"], Value::Null);

    // The CLI answers the same object (one answer type for every face).
    let cli = bin.line("resume --agent w --session s1 --store st --json");
    assert!(cli.status.success(), "{}", stderr(&cli));
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let mcp = ok(&unknown);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&cli), keys(mcp));
    assert_eq!(cli["next"], mcp["next"]);
    assert_eq!(cli["blockers"], mcp["blockers"]);

    // A context file that is a directory is refused, naming the argument, not a flag.
    let r = call(
        &client,
        "resume",
        json!({"agent": "w", "session": "s1", "context_file": d}),
    )
    .await;
    let error = failed(&r);
    assert_eq!(error["code"], 74);
    assert!(
        text(&r).starts_with("context_file ") && !text(&r).contains("--"),
        "{}",
        text(&r)
    );
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread")]
async fn history_and_fork_work_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _stderr) = connect(&Bin::new(dir.path()), "--store st").await;
    let mut ids = Vec::new();
    for (phase, n) in [("clone_complete", 1), ("subtask_1_complete", 2)] {
        let r = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "s1", "phase": phase, "data": {"done": n}}),
        )
        .await;
        ids.push(ok(&r)["id"].as_str().unwrap().to_string());
    }

    let h = call(&client, "history", json!({"session": "s1", "diff": true})).await;
    // The CLI's text: the session line, then a row per record (a diff line under the second).
    let rows: Vec<&str> = text(&h).lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(rows.len(), 3, "{}", text(&h));
    assert_eq!(rows[0], "session s1", "{}", text(&h));
    let h = ok(&h).clone();
    assert_eq!(h["session"], "s1");
    let steps = h["records"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{h}");
    assert_eq!(steps[1]["record_id"], ids[1].as_str(), "{h}");
    assert_eq!(h["forked_from"], Value::Null);

    // Fork the older checkpoint into a new session: the copy names its parent.
    let forked = call(
        &client,
        "fork",
        json!({"session": "s1", "at": ids[0], "new_session": "s1-retry"}),
    )
    .await;
    let forked = ok(&forked).clone();
    assert_eq!(forked["posted"], true);
    assert_eq!(forked["record"]["session"], "s1-retry");
    assert_eq!(forked["record"]["parent"], ids[0].as_str());
    assert_eq!(forked["record"]["data"], json!({"done": 1}));

    let resumed = call(
        &client,
        "resume",
        json!({"agent": "w", "session": "s1-retry"}),
    )
    .await;
    assert_eq!(ok(&resumed)["phase"], "clone_complete");
    let h = call(&client, "history", json!({"session": "s1-retry"})).await;
    let h = ok(&h).clone();
    assert_eq!(h["forked_from"]["session"], "s1", "{h}");

    // Forking a record that does not exist is the library's error, as a tool error.
    let missing = call(
        &client,
        "fork",
        json!({"session": "s1", "at": "no-such-id", "new_session": "s3"}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_resume_resource_and_prompt_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _stderr) = connect(&Bin::new(dir.path()), "--store st").await;
    let saved = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": "s1", "phase": "clone_complete", "next": "go on"}),
    )
    .await;
    ok(&saved);

    let templates = client
        .list_all_resource_templates()
        .await
        .expect("templates");
    assert_eq!(
        templates[0].uri_template,
        "forgestate://resume/{agent}/{session}"
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new("forgestate://resume/w/s1"))
        .await
        .expect("read");
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("text contents: {read:?}")
    };
    let answer: Value = serde_json::from_str(text).unwrap();
    assert_eq!(answer["phase"], "clone_complete");
    assert_eq!(answer["next"], "go on");
    let bad = client
        .read_resource(ReadResourceRequestParams::new("forgestate://resume/w"))
        .await;
    assert!(bad.is_err(), "{bad:?}");

    let prompts = client.list_all_prompts().await.expect("prompts");
    assert_eq!(prompts[0].name, "resume-my-work");
    let mut args = Map::new();
    args.insert("agent".into(), json!("w"));
    args.insert("session".into(), json!("s1"));
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("resume-my-work").with_arguments(args))
        .await
        .expect("prompt");
    let said = serde_json::to_string(&prompt.messages).unwrap();
    assert!(
        said.contains("`resume`") && said.contains("checkpoint"),
        "{said}"
    );
    client.cancel().await.expect("close");
}
