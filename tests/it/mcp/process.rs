//! `forgestate mcp` as a process: against the fake forge while it is down and back up (one
//! server posts what it spooled), what its stdout carries, and its exit when stdin closes.

use crate::{common, fake_forge, mcp_client};
use std::path::Path;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use common::cli::{Bin, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use mcp_client::{HANG, call, connect, ok, text};

#[tokio::test(flavor = "multi_thread")]
async fn a_forge_that_is_down_spools_the_record_without_an_error_and_one_server_posts_it_later() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nrequest_timeout_secs = 3\ndrain_max_backoff_secs = 0\n",
    )
    .unwrap();
    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let (client, stderr) = connect(&bin, "").await;
    let mut said = Vec::new();

    fake.state().down = true;
    let first = call(
        &client,
        "checkpoint",
        json!({"agent": "implementation-worker", "session": "s1", "phase": "clone_complete", "data": {"issue_number": 7}}),
    )
    .await;
    let doc = ok(&first).clone();
    said.push(serde_json::to_string(&first).unwrap());
    assert_eq!(doc["posted"], false);
    assert_eq!(doc["comment_id"], Value::Null);
    let spooled = doc["spooled"].as_str().expect("outbox entry");
    assert!(Path::new(spooled).is_file(), "{spooled}");
    assert!(
        text(&first).starts_with(&format!(
            "warning: checkpoint {} spooled to ",
            doc["id"].as_str().unwrap()
        )) && text(&first).contains("record(s) wait in the outbox"),
        "{}",
        text(&first)
    );
    let id = doc["id"].as_str().unwrap().to_string();

    let offline = call(
        &client,
        "resume",
        json!({"agent": "implementation-worker", "session": "s1"}),
    )
    .await;
    said.push(serde_json::to_string(&offline).unwrap());
    let offline = ok(&offline);
    assert_eq!(offline["offline"], true);
    assert_eq!(offline["pending"], true);
    assert_eq!(offline["record_id"], id.as_str());
    assert_eq!(offline["resume_point"], "phase_2_subtasks");

    // The forge is back: the next call drains the outbox first, in order.
    fake.state().down = false;
    let second = call(
        &client,
        "checkpoint",
        json!({"agent": "implementation-worker", "session": "s1", "phase": "subtask_1_complete"}),
    )
    .await;
    said.push(serde_json::to_string(&second).unwrap());
    assert_eq!(ok(&second)["posted"], true);
    let list = call(&client, "list", json!({"session": "s1"})).await;
    said.push(serde_json::to_string(&list).unwrap());
    let records = ok(&list)["records"].as_array().unwrap().clone();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0]["id"], id.as_str());
    assert!(
        records.iter().all(|r| r["comment"]["pending"] == false),
        "{records:?}"
    );
    assert!(
        !Path::new(spooled).exists(),
        "the outbox entry was posted and removed"
    );

    // The token in use is redacted from data and never echoed by an error.
    let leaky = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": "s2", "phase": "p", "data": {"note": BOT_TOKEN}}),
    )
    .await;
    said.push(serde_json::to_string(&leaky).unwrap());
    assert_eq!(ok(&leaky)["record"]["data"]["note"], "[REDACTED]");
    let named = call(
        &client,
        "resume",
        json!({"agent": "w", "session": BOT_TOKEN}),
    )
    .await;
    said.push(serde_json::to_string(&named).unwrap());
    let refused = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": BOT_TOKEN, "phase": "p"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    said.push(serde_json::to_string(&refused).unwrap());

    client.cancel().await.expect("close");
    said.push(
        tokio::time::timeout(HANG, stderr)
            .await
            .expect("exits")
            .unwrap(),
    );
    for text in said {
        assert!(!text.contains(BOT_TOKEN), "the token never leaves: {text}");
    }
}

/// One line of JSON-RPC on the server's stdin.
async fn send(stdin: &mut tokio::process::ChildStdin, message: Value) {
    let line = format!("{message}\n");
    stdin.write_all(line.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_carries_only_protocol_and_the_server_exits_0_when_stdin_closes() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).stdin(Vec::new());
    // -vv: debug logging on, which must all go to stderr.
    let mut child = tokio::process::Command::from(bin.command(&words("mcp -vv --store st")))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = child.stderr.take().unwrap();
    let err = tokio::spawn(async move {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text).await;
        text
    });

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    send(&mut stdin, init).await;
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "checkpoint", "arguments": {"agent": "w", "session": "s1", "phase": "p"}}}),
    )
    .await;

    let mut lines = Vec::new();
    while !lines.iter().any(|l: &Value| l["id"] == 2) {
        let line = tokio::time::timeout(HANG, out.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .expect("stdout open");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        lines.push(message);
    }
    assert_eq!(
        lines.last().unwrap()["result"]["isError"],
        false,
        "{lines:?}"
    );

    drop(stdin);
    let status = tokio::time::timeout(HANG, child.wait())
        .await
        .expect("exits after stdin closes")
        .unwrap();
    let rest = tokio::time::timeout(HANG, out.next_line())
        .await
        .expect("eof")
        .unwrap();
    assert_eq!(rest, None, "nothing more on stdout");
    let said = tokio::time::timeout(HANG, err)
        .await
        .expect("stderr closes")
        .unwrap();
    assert_eq!(status.code(), Some(0), "{said}");
    assert!(
        said.contains("forgestate: debug: "),
        "debug logs go to stderr: {said}"
    );
}

/// A save that spools warns in the same words on every face: the CLI's `warning:` lines on
/// stderr are the MCP answer's `warnings`, which say where the record waits and how many wait.
#[tokio::test(flavor = "multi_thread")]
async fn a_spooled_save_warns_the_same_on_the_cli_and_over_mcp() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nrequest_timeout_secs = 3\ndrain_max_backoff_secs = 0\n",
    )
    .unwrap();
    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    fake.state().down = true;
    let out = bin.run(&words(
        "checkpoint --agent w --session s1 --phase p1 --json",
    ));
    assert_eq!(out.status.code(), Some(0));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let lines: Vec<String> = err
        .lines()
        .filter_map(|l| l.strip_prefix("forgestate: warning: "))
        .map(String::from)
        .collect();
    assert_eq!(
        serde_json::to_value(&lines).unwrap(),
        cli["warnings"],
        "the CLI prints its answer's warnings: {err}"
    );
    let (client, _stderr) = connect(&bin, "").await;
    let over_mcp = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": "s1", "phase": "p2"}),
    )
    .await;
    let mcp = ok(&over_mcp).clone();
    assert_eq!(mcp["posted"], false);
    let mask = |doc: &Value| -> Vec<String> {
        let (id, path) = (
            doc["id"].as_str().unwrap(),
            doc["spooled"].as_str().unwrap(),
        );
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().replace(id, "ID").replace(path, "PATH"))
            .collect()
    };
    let cli_words = mask(&cli);
    assert_eq!(cli_words.len(), 1, "{cli_words:?}");
    assert!(
        cli_words[0].starts_with("checkpoint ID spooled to PATH (")
            && cli_words[0].contains("1 record(s) wait in the outbox"),
        "{cli_words:?}"
    );
    assert_eq!(
        mask(&mcp),
        [cli_words[0].replace("1 record(s)", "2 record(s)")],
        "the same warning over MCP, one more record waiting"
    );
}
