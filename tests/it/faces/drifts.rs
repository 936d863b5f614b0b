//! Each drift issue #40 found between the faces, checked on every face that exposes the verb:
//! the CLI (`--json` and its human text), MCP (`tools/call`, its first text included) and
//! `call` (what the Python package talks to).

use serde_json::{Value, json};

use crate::common::cli::{Bin, parse_ok, stderr, stdout, words};
use crate::mcp_client::{call as mcp_call, connect, ok, text};

/// `forgestate --store st call VERB` with `request` on stdin: the answer, which must be one.
fn call(bin: &Bin, verb: &str, request: Value) -> Value {
    let args = words(&format!("--store st call {verb}"));
    parse_ok(&args, &bin.clone().stdin(request.to_string()).run(&args))
}

/// `forgestate --store st LINE --json`: the answer, which must be one.
fn cli(bin: &Bin, line: &str) -> Value {
    let args = words(&format!("--store st {line} --json"));
    parse_ok(&args, &bin.run(&args))
}

/// Drift 1: MCP's text of a forked session's history named the origin's record as `?` (it
/// read `id`; the field is `record_id`). Every face names the record.
#[tokio::test(flavor = "multi_thread")]
async fn a_forked_sessions_history_names_the_record_it_was_forked_from_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let saved = cli(
        &bin,
        "checkpoint --agent w --session s1 --phase clone_complete",
    );
    let id = saved["id"].as_str().expect("a record id").to_string();
    cli(&bin, "fork --session s1 --new-session s2");
    let said = format!("forked from session s1 at record {id}");

    let human = bin.run(&words("--store st history --session s2"));
    assert!(human.status.success(), "{}", stderr(&human));
    assert!(stdout(&human).contains(&said), "CLI: {}", stdout(&human));
    assert_eq!(
        cli(&bin, "history --session s2")["forked_from"]["record_id"],
        id.as_str()
    );
    let answer = call(&bin, "history", json!({"session": "s2"}));
    assert_eq!(answer["forked_from"]["record_id"], id.as_str(), "call");

    let (client, _stderr) = connect(&bin, "--store st").await;
    let result = mcp_call(&client, "history", json!({"session": "s2"})).await;
    assert_eq!(ok(&result)["forked_from"]["record_id"], id.as_str());
    assert!(text(&result).contains(&said), "MCP: {}", text(&result));
    client.cancel().await.ok();
}

/// Drift 2 (and 5, for `keep`): `prune`'s `keep` defaults to 10 through `call` as on the CLI
/// (it was required there, exit 64).
#[test]
fn prune_keeps_ten_by_default_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    cli(&bin, "checkpoint --agent w --session s1 --phase p");
    assert_eq!(cli(&bin, "prune")["keep"], 10);
    assert_eq!(call(&bin, "prune", json!({}))["keep"], 10);
    assert_eq!(call(&bin, "prune", json!({"keep": 3}))["keep"], 3);
}

/// Drift 3: a number sent as text (`"seq": "5"`) is read as the number by `render -` as by
/// `call render`: one lenient reading on every path.
#[test]
fn render_reads_a_number_sent_as_text_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let request = json!({"agent": "w", "session": "s1", "phase": "p", "seq": "5"});
    let args = words("--store st render - --json");
    let out = bin.clone().stdin(request.to_string()).run(&args);
    assert_eq!(parse_ok(&args, &out)["record"]["seq"], 5);
    assert_eq!(call(&bin, "render", request)["record"]["seq"], 5);
}

/// Drift 5: each default a request leaves out is the same on every face (`health`'s status,
/// `resume-map`'s agent; `prune`'s keep is above).
#[tokio::test(flavor = "multi_thread")]
async fn a_default_is_the_same_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let health = cli(&bin, "health --agent w --session s1");
    assert_eq!(health["record"]["status"], "Active");
    let health = call(&bin, "health", json!({"agent": "w", "session": "s1"}));
    assert_eq!(health["record"]["status"], "Active");
    let (client, _stderr) = connect(&bin, "--store st").await;
    let result = mcp_call(&client, "health", json!({"agent": "w", "session": "s1"})).await;
    assert_eq!(ok(&result)["record"]["status"], "Active");
    client.cancel().await.ok();

    assert_eq!(cli(&bin, "resume-map")["agent"], "implementation-worker");
    assert_eq!(
        call(&bin, "resume-map", json!({}))["agent"],
        "implementation-worker"
    );
}

/// A zero threshold (`status --stalled-after 0`: every session is stalled at once) answers the
/// same on every face: the CLI's flag refused it (exit 64) while `call` and MCP took it.
#[tokio::test(flavor = "multi_thread")]
async fn a_zero_threshold_answers_alike_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    cli(&bin, "checkpoint --agent w --session s1 --phase p");
    let flags = cli(&bin, "status --stalled-after 0 --warn-after 0s");
    assert_eq!(flags["stalled"], 1, "CLI: {flags}");
    for zero in [json!(0), json!("0"), json!("0s")] {
        let request = json!({"stalled_after_secs": zero, "warn_after_secs": zero});
        let answer = call(&bin, "status", request.clone());
        assert_eq!(answer["stalled"], 1, "call {request}: {answer}");
        assert_eq!(
            answer["rows"][0]["verdict"], "stalled",
            "call {request}: {answer}"
        );
    }
    let (client, _stderr) = connect(&bin, "--store st").await;
    let result = mcp_call(
        &client,
        "status",
        json!({"stalled_after_secs": 0, "warn_after_secs": 0}),
    )
    .await;
    assert_eq!(ok(&result)["stalled"], 1, "MCP: {}", text(&result));
    client.cancel().await.ok();
    // A fraction of a second is still no threshold the report can keep.
    let out = bin.run(&words("--store st status --stalled-after 500ms"));
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
}
