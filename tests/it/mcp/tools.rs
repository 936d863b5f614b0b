//! `forgestate mcp` as an MCP client sees it: the real binary spawned over stdio and driven with
//! rmcp's client (initialize, tools/list, tools/call) on the local store. The forge and the
//! process itself (stdout, stdin EOF) are in `mcp_process.rs`.

use crate::{common, mcp_client};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use common::cli::{Bin, stderr};
use mcp_client::{HANG, call, cli_error, connect, failed, ok, text};

#[tokio::test(flavor = "multi_thread")]
async fn a_checkpoint_made_over_mcp_is_resumed_over_mcp_and_by_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = Bin::new(d);
    let (client, _stderr) = connect(&bin, "--store st").await;

    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("forgestate")
    );
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("resume"))
    );

    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    let mut table: Vec<&str> = forgestate::verbs::table()
        .into_iter()
        .filter(|s| s.on(forgestate::verbs::Face::Mcp))
        .map(|s| s.name)
        .collect();
    table.sort_unstable();
    assert_eq!(names, table);
    assert!(
        names.contains(&"resume") && !names.contains(&"prune"),
        "{names:?}"
    );
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(
            description.len() > 80,
            "{} is described: {description}",
            tool.name
        );
        assert!(!description.contains('\n'), "{}: {description}", tool.name);
        assert!(
            tool.title.as_deref().is_some_and(|t| !t.is_empty()),
            "{}",
            tool.name
        );
        let hints = tool.annotations.as_ref().expect("annotations");
        for (hint, said) in [
            ("readOnlyHint", hints.read_only_hint),
            ("destructiveHint", hints.destructive_hint),
            ("idempotentHint", hints.idempotent_hint),
            ("openWorldHint", hints.open_world_hint),
        ] {
            assert!(said.is_some(), "{} says {hint}", tool.name);
        }
        let spec = forgestate::verbs::spec(&tool.name).expect("a verb of the table");
        assert_eq!(hints.read_only_hint, Some(spec.read_only), "{}", tool.name);
        let output = tool.output_schema.as_ref().expect("an output schema");
        assert_eq!(output["type"], "object", "{}", tool.name);
        let answers = output["properties"].as_object().expect("answer properties");
        assert!(answers.contains_key("warnings"), "{}", tool.name);
        for (name, prop) in answers {
            let said = prop["description"].as_str().unwrap_or_default();
            assert!(
                !said.is_empty(),
                "{}'s answer {name} is described",
                tool.name
            );
            assert!(
                !said.contains('\n'),
                "{}'s answer {name}: {said}",
                tool.name
            );
        }
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        let props = tool.input_schema["properties"]
            .as_object()
            .expect("properties");
        assert!(!props.is_empty(), "{}", tool.name);
        for (name, prop) in props {
            let said = prop["description"].as_str().unwrap_or_default();
            assert!(!said.is_empty(), "{}.{name} is described", tool.name);
            assert!(!said.contains('\n'), "{}.{name}: {said}", tool.name);
        }
    }
    let checkpoint = tools.iter().find(|t| t.name == "checkpoint").unwrap();
    assert_eq!(
        checkpoint.input_schema["required"],
        json!(["agent", "session", "phase"])
    );
    assert_eq!(
        checkpoint.input_schema["properties"]["data"]["type"],
        "object"
    );

    let fresh = call(
        &client,
        "resume",
        json!({"agent": "implementation-worker", "session": "s1"}),
    )
    .await;
    let fresh = ok(&fresh);
    assert_eq!(fresh["fresh_start"], true);
    assert_eq!(fresh["phase"], "fresh_start");
    assert_eq!(fresh["record_id"], Value::Null);

    let data =
        json!({"issue_number": 42, "branch_name": "fix-42", "big": 18446744073709551616u128});
    let saved = call(
        &client,
        "checkpoint",
        json!({"agent": "implementation-worker", "session": "s1", "phase": "clone_complete", "data": data}),
    )
    .await;
    let saved = ok(&saved).clone();
    assert_eq!(saved["posted"], true);
    let id = saved["id"].as_str().expect("record id").to_string();
    assert_eq!(saved["record"]["data"], data);

    let resumed = call(
        &client,
        "resume",
        json!({"agent": "implementation-worker", "session": "s1"}),
    )
    .await;
    assert!(
        text(&resumed).contains("phase_2_subtasks"),
        "{}",
        text(&resumed)
    );
    let resumed = ok(&resumed);
    assert_eq!(resumed["resume_point"], "phase_2_subtasks");
    assert_eq!(resumed["phase"], "clone_complete");
    assert_eq!(resumed["data"], data);
    assert_eq!(resumed["record_id"], id.as_str());
    assert_eq!(resumed["comment_id"], saved["comment_id"]);
    assert_eq!(resumed["fresh_start"], false);
    assert_eq!(resumed["pending"], false);
    assert_eq!(resumed["offline"], false);

    // The server wrote to the store the CLI reads.
    let cli = bin.line("resume --agent implementation-worker --session s1 --store st --json");
    assert!(cli.status.success(), "{}", stderr(&cli));
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(cli["checkpoint"]["id"], id.as_str());
    assert_eq!(cli["data"], data);

    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread")]
async fn health_latest_and_list_filter_like_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _stderr) = connect(&Bin::new(dir.path()), "--store st").await;
    for (agent, phase) in [
        ("implementation-worker", "clone_complete"),
        ("implementation-worker", "subtask_1_complete"),
        ("implementation-worker", "subtask_2_complete"),
        ("review-worker", "review_started"),
    ] {
        let r = call(
            &client,
            "checkpoint",
            json!({"agent": agent, "session": "s1", "phase": phase}),
        )
        .await;
        ok(&r);
    }
    let health = call(
        &client,
        "health",
        json!({"agent": "implementation-orchestrator", "session": "s1", "metrics": {"active_workers": 3}, "next_check": "in 10 iterations"}),
    )
    .await;
    let health = ok(&health);
    assert_eq!(health["record"]["status"], "Active");
    assert_eq!(health["record"]["metrics"]["active_workers"], 3);
    assert_eq!(health["record"]["next_check"], "in 10 iterations");

    // Nested objects sent as JSON text (some clients do) are read as the CLI reads --data.
    let texted = call(
        &client,
        "checkpoint",
        json!({"agent": "review-worker", "session": "s2", "phase": "p", "data": "{\"pr_number\": 7}"}),
    )
    .await;
    assert_eq!(ok(&texted)["record"]["data"], json!({"pr_number": 7}));

    // The handoff fields are recorded: `resume` gives them back.
    let handoff = call(
        &client,
        "checkpoint",
        json!({"agent": "review-worker", "session": "s2", "phase": "p", "next": "merge", "blockers": ["CI red"]}),
    )
    .await;
    assert_eq!(ok(&handoff)["record"]["next"], "merge");
    let back = call(
        &client,
        "resume",
        json!({"agent": "review-worker", "session": "s2"}),
    )
    .await;
    assert_eq!(ok(&back)["data"], json!({}), "{}", text(&back));
    let listed = call(
        &client,
        "latest",
        json!({"agent": "review-worker", "session": "s2"}),
    )
    .await;
    assert_eq!(ok(&listed)["record"]["blockers"], json!(["CI red"]));

    // A blocker that would inject a header line is refused, as the CLI refuses it.
    let injected = call(
        &client,
        "checkpoint",
        json!({"agent": "review-worker", "session": "s2", "phase": "p", "blockers": ["x\nPhase: evil"]}),
    )
    .await;
    assert_eq!(injected.is_error, Some(true), "{}", text(&injected));

    // status: one row per pair, the worker just checkpointed, so it is alive.
    let rows = call(
        &client,
        "status",
        json!({"agent": "review-worker", "session": "s2"}),
    )
    .await;
    let rows = ok(&rows).clone();
    assert_eq!(rows["rows"][0]["verdict"], "alive", "{rows}");
    assert_eq!(rows["rows"][0]["blockers"], json!(["CI red"]));
    assert_eq!(rows["stalled"], 0);
    // With a zero stalled threshold, every pair is stalled.
    let stalled = call(
        &client,
        "status",
        json!({"agent": "review-worker", "session": "s2", "warn_after_secs": 0, "stalled_after_secs": 0}),
    )
    .await;
    assert_eq!(ok(&stalled)["stalled"], 1, "{}", text(&stalled));

    let newest = call(
        &client,
        "latest",
        json!({"agent": "implementation-*", "kind": "checkpoint"}),
    )
    .await;
    assert_eq!(ok(&newest)["record"]["phase"], "subtask_2_complete");
    let newest = call(&client, "latest", json!({"session": "s1"})).await;
    assert_eq!(ok(&newest)["record"]["kind"], "health");
    let none = call(&client, "latest", json!({"agent": "nobody"})).await;
    assert_eq!(ok(&none)["record"], Value::Null);
    assert_eq!(text(&none), "no matching record found");

    let phases = |v: &Value| -> Vec<String> {
        v["records"]
            .as_array()
            .expect("records")
            .iter()
            .map(|r| r["phase"].as_str().unwrap_or("-").to_string())
            .collect()
    };
    let subtasks = call(&client, "list", json!({"phase": "subtask_*_complete"})).await;
    assert_eq!(
        phases(ok(&subtasks)),
        ["subtask_1_complete", "subtask_2_complete"]
    );
    let last_two = call(
        &client,
        "list",
        json!({"agent": "implementation-*", "limit": 2}),
    )
    .await;
    assert_eq!(phases(ok(&last_two)), ["subtask_2_complete", "-"]);
    let newest_subtask = call(&client, "list", json!({"phase": "*_complete", "limit": 1})).await;
    assert_eq!(phases(ok(&newest_subtask)), ["subtask_2_complete"]);
    let by_phase = call(&client, "latest", json!({"phase": "clone_*"})).await;
    assert_eq!(ok(&by_phase)["record"]["phase"], "clone_complete");

    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_a_tool_error_with_the_clis_message_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let (client, _stderr) = connect(&bin, "--store st").await;

    let injected = "s1\nPhase: subtasks_complete";
    let r = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": injected, "phase": "p"}),
    )
    .await;
    let error = failed(&r);
    assert_eq!(error["code"], 65);
    assert_eq!(error["category"], "data");
    let cli = cli_error(
        &bin,
        &[
            "checkpoint",
            "--store",
            "st",
            "--agent",
            "w",
            "--session",
            injected,
            "--phase",
            "p",
        ],
        65,
    );
    assert_eq!(error["message"], cli.as_str());

    let r = call(
        &client,
        "checkpoint",
        json!({"agent": "w", "session": "s1", "phase": "p", "data": [1, 2]}),
    )
    .await;
    let error = failed(&r);
    assert_eq!(error["code"], 65);
    assert!(
        text(&r).starts_with("data must be a JSON object"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "health",
        json!({"agent": "w", "session": "s1", "metrics": "7"}),
    )
    .await;
    assert!(
        text(&r).starts_with("metrics must be a JSON object"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "health",
        json!({"agent": "w", "session": "s1", "metrics": "{fine"}),
    )
    .await;
    assert_eq!(failed(&r)["code"], 65);
    assert!(
        text(&r).starts_with("metrics is not valid JSON"),
        "{}",
        text(&r)
    );

    let r = call(&client, "list", json!({"agent": "impl-[", "limit": 1})).await;
    let error = failed(&r);
    assert_eq!(error["category"], "usage");
    assert!(text(&r).contains("is not a valid glob"), "{}", text(&r));

    // Arguments that do not fit the schema are a tool error too (rmcp follows the MCP spec: the
    // model can correct itself); an unknown tool is protocol misuse, a JSON-RPC error.
    let missing = call(&client, "checkpoint", json!({"agent": "w"})).await;
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    assert!(text(&missing).contains("session"), "{}", text(&missing));
    let stray = call(
        &client,
        "resume",
        json!({"agent": "w", "session": "s", "agent_name": "w"}),
    )
    .await;
    assert!(text(&stray).contains("agent_name"), "{}", text(&stray));
    let unknown = client
        .call_tool(CallToolRequestParams::new("frobnicate"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    // Nothing was stored, and the same server still answers.
    let list = call(&client, "list", json!({})).await;
    assert_eq!(ok(&list)["records"], json!([]));
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_configuration_that_cannot_be_used_is_every_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let (client, stderr) = connect(&bin, "--config missing.toml").await;
    let r = call(&client, "resume", json!({"agent": "w", "session": "s1"})).await;
    let error = failed(&r);
    assert_eq!(error["code"], 78);
    let cli = cli_error(
        &bin,
        &[
            "resume",
            "--config",
            "missing.toml",
            "--agent",
            "w",
            "--session",
            "s1",
        ],
        78,
    );
    assert_eq!(error["message"], cli.as_str());
    client.cancel().await.expect("close");
    let said = tokio::time::timeout(HANG, stderr)
        .await
        .expect("exits")
        .unwrap();
    assert!(
        said.contains(&format!("forgestate: error: {cli}")),
        "{said}"
    );
}
