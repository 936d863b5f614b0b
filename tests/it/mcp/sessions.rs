//! Sessions through the MCP tools, on both stores: `end` with each reason (and a bad one), an
//! intent across a server that exits between the intent and its confirmation, compare-and-set
//! refused and accepted, and two servers (two writers) continuing from one resume.

use crate::{common, fake_forge, mcp_client};
use serde_json::{Value, json};

use common::cli::{Bin, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use mcp_client::{call, connect, failed, ok, text};

/// The binary and the arguments of `mcp` for each store: the local one, then the fake forge.
async fn stores(dir: &std::path::Path) -> (Vec<(Bin, &'static str)>, FakeForge) {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let local = Bin::new(&dir.join("local"));
    std::fs::create_dir_all(dir.join("local")).unwrap();
    std::fs::create_dir_all(dir.join("forge")).unwrap();
    let forge = Bin::new(&dir.join("forge")).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    (vec![(local, "--store st"), (forge, "")], fake)
}

#[tokio::test(flavor = "multi_thread")]
async fn end_intents_and_compare_and_set_through_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let (stores, _fake) = stores(dir.path()).await;
    for (bin, args) in &stores {
        let (client, _stderr) = connect(bin, args).await;
        for reason in ["completed", "interrupted", "error", "user_stop"] {
            let s = format!("s-{reason}");
            let cp = call(
                &client,
                "checkpoint",
                json!({"agent": "w", "session": s, "phase": "a", "data": {"k": 1}}),
            )
            .await;
            ok(&cp);
            let end = call(
                &client,
                "end",
                json!({"agent": "w", "session": s, "reason": reason, "note": "n"}),
            )
            .await;
            assert_eq!(ok(&end)["record"]["kind"], "end");
            assert_eq!(
                ok(&end)["record"]["parent"],
                ok(&cp)["id"],
                "lineage kept in memory"
            );
            let resumed = call(&client, "resume", json!({"agent": "w", "session": s})).await;
            assert_eq!(ok(&resumed)["ended"]["reason"], reason);
            assert_eq!(ok(&resumed)["data"], json!({"k": 1}));
            // The CLI's text of the answer.
            let said = format!("\nended:        {reason} at ");
            assert!(text(&resumed).contains(&said), "{}", text(&resumed));
        }
        let bad = call(
            &client,
            "end",
            json!({"agent": "w", "session": "s", "reason": "nope"}),
        )
        .await;
        let error = failed(&bad);
        assert_eq!(error["category"], "usage");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("completed, interrupted, error, user_stop")
        );

        // The intent, then the server exits before confirming it.
        let intent = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "pr",
            "phase": "pr_creating", "intent": "create_pr", "intent_data": {"branch": "b"}}),
        )
        .await;
        let intent_id = ok(&intent)["id"].clone();
        drop(client);
        let (client, _stderr) = connect(bin, args).await;
        let resumed = call(&client, "resume", json!({"agent": "w", "session": "pr"})).await;
        let pending = &ok(&resumed)["pending_intent"];
        assert_eq!(pending["name"], "create_pr");
        assert_eq!(pending["data"], json!({"branch": "b"}));
        assert_eq!(pending["id"], intent_id);
        assert!(
            text(&resumed).contains("\nintent:       PENDING create_pr (since "),
            "{}",
            text(&resumed)
        );

        // Compare-and-set: refused on a stale id (nothing posted), accepted on the latest.
        let stale = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "pr",
            "phase": "pr_created", "if_latest": "0192f000-0000-7000-8000-000000000000"}),
        )
        .await;
        let error = failed(&stale);
        assert_eq!(error["category"], "conflict");
        assert_eq!(error["code"], 73);
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains(intent_id.as_str().unwrap())
        );
        let done = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "pr",
            "phase": "pr_created", "if_latest": intent_id, "merge": true,
            "data": {"pr_number": 7}}),
        )
        .await;
        assert_eq!(ok(&done)["record"]["parent"], intent_id);
        let resumed = call(&client, "resume", json!({"agent": "w", "session": "pr"})).await;
        assert_eq!(ok(&resumed)["pending_intent"], Value::Null);

        // Two servers resume the same record and both write: each names the other's record.
        let (other, _e) = connect(bin, args).await;
        let r = call(&other, "resume", json!({"agent": "w", "session": "pr"})).await;
        assert_eq!(ok(&r)["latest_id"], ok(&done)["id"]);
        let a = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "pr", "phase": "x"}),
        )
        .await;
        let b = call(
            &other,
            "checkpoint",
            json!({"agent": "w", "session": "pr", "phase": "y"}),
        )
        .await;
        let r = call(&client, "resume", json!({"agent": "w", "session": "pr"})).await;
        let warnings = ok(&r)["warnings"].to_string();
        for id in [
            ok(&a)["id"].as_str().unwrap(),
            ok(&b)["id"].as_str().unwrap(),
        ] {
            assert!(warnings.contains(id), "{warnings}");
        }
        let status = call(&client, "status", json!({"session": "pr"})).await;
        assert_eq!(ok(&status)["rows"][0]["verdict"], "conflicted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parent_that_is_not_a_record_id_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (stores, _fake) = stores(dir.path()).await;
    for (bin, args) in &stores {
        let (client, _stderr) = connect(bin, args).await;
        let root = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "p", "phase": "a"}),
        )
        .await;
        let root_id = ok(&root)["id"].clone();
        let bad_ids = ["HEAD", "x\nPhase: evil", "01a232d2-6f5a-743e-b1a3"];
        // Issue #42 low 12: `if_latest` too is refused as usage (64), not as a conflict.
        for (field, bad) in ["parent", "if_latest"]
            .into_iter()
            .flat_map(|f| bad_ids.map(|b| (f, b)))
        {
            let refused = call(
                &client,
                "checkpoint",
                json!({"agent": "w", "session": "p", "phase": "b", field: bad}),
            )
            .await;
            let error = failed(&refused);
            assert_eq!(error["category"], "usage", "{bad:?}: {error}");
            assert_eq!(error["code"], 64);
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains("not a record id")
            );
        }
        let resumed = call(&client, "resume", json!({"agent": "w", "session": "p"})).await;
        assert_eq!(ok(&resumed)["latest_id"], root_id, "nothing was posted");
        let named = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "p", "phase": "b", "parent": root_id}),
        )
        .await;
        assert_eq!(ok(&named)["record"]["parent"], root_id);
    }
}

/// Hole 5: a client that sends several checkpoints of one session without waiting for the
/// answers has them posted in the order they arrived, each continuing the one before, so it is
/// never taken for two writers; a call for another session is answered too. The lines are
/// written to the server's stdin in one go (rmcp's own client may put concurrent requests on
/// the wire in any order, so it cannot say what "arrived first" means).
#[tokio::test(flavor = "multi_thread")]
async fn parallel_checkpoints_of_one_session_are_posted_in_arrival_order() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let (stores, _fake) = stores(dir.path()).await;
    for (bin, args) in &stores {
        let mut lines = vec![
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        ];
        let call_line = |id: u32, tool: &str, args: Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})
            .to_string()
        };
        for n in 0..8u32 {
            lines.push(call_line(
                n + 1,
                "checkpoint",
                json!({"agent": "w", "session": "par", "phase": format!("p{n}"), "data": {"n": n}}),
            ));
        }
        lines.push(call_line(
            9,
            "checkpoint",
            json!({"agent": "w", "session": "elsewhere", "phase": "a"}),
        ));
        // Behind the eight in the session's queue: it sees all of them.
        lines.push(call_line(
            10,
            "list",
            json!({"agent": "w", "session": "par"}),
        ));
        lines.push(call_line(
            11,
            "resume",
            json!({"agent": "w", "session": "par"}),
        ));
        let mut cmd = tokio::process::Command::from(bin.command(&words(&format!("mcp {args}"))));
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("spawn forgestate mcp");
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(format!("{}\n", lines.join("\n")).as_bytes())
            .await
            .unwrap();
        // Stdin stays open until every call is answered, as a client's would.
        let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut answers: Vec<Value> = Vec::new();
        while answers
            .iter()
            .filter(|a| a["id"].as_u64().is_some_and(|i| i > 0))
            .count()
            < 11
        {
            let line = tokio::time::timeout(mcp_client::HANG, stdout.next_line())
                .await
                .unwrap_or_else(|_| panic!("{args}: the server answers every call: {answers:#?}"))
                .unwrap()
                .unwrap_or_else(|| panic!("{args}: the server ended early: {answers:#?}"));
            answers.push(serde_json::from_str(&line).unwrap());
        }
        drop(stdin);
        let _ = tokio::time::timeout(mcp_client::HANG, child.wait()).await;
        let result = |id: u32| -> &Value {
            let answer = answers
                .iter()
                .find(|a| a["id"] == id)
                .unwrap_or_else(|| panic!("{args}: no answer for {id}: {answers:#?}"));
            assert_eq!(answer["result"]["isError"], false, "{args}: {answer}");
            &answer["result"]["structuredContent"]
        };
        let mut parent = Value::Null;
        for n in 0..8u32 {
            let answer = result(n + 1);
            assert_eq!(answer["record"]["phase"], format!("p{n}"), "{args}");
            assert_eq!(
                answer["record"]["parent"], parent,
                "{args}: p{n} continues the one before"
            );
            parent = answer["id"].clone();
        }
        assert_eq!(result(9)["record"]["session"], "elsewhere");
        let phases: Vec<&str> = result(10)["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["phase"].as_str())
            .collect();
        assert_eq!(
            phases,
            (0..8).map(|n| format!("p{n}")).collect::<Vec<_>>(),
            "{args}: posted in arrival order"
        );
        assert_eq!(result(11)["conflicts"], json!([]), "{args}: one writer");
        assert_eq!(result(11)["phase"], "p7", "{args}");
    }
}

/// Issue #43: two servers are two writers. One takes the session over (`take_over`); the
/// other keeps saving (posted, fenced), its next read answers error code 73 naming the
/// takeover, and with `check_owner` its save posts nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_lost_its_session_gets_code_73() {
    let dir = tempfile::tempdir().unwrap();
    let (stores, _fake) = stores(dir.path()).await;
    for (bin, args) in &stores {
        let (old, _e1) = connect(bin, args).await;
        let (new, _e2) = connect(bin, args).await;
        let s = json!({"agent": "w", "session": "own"});
        let first = call(
            &old,
            "checkpoint",
            json!({"agent": "w", "session": "own", "phase": "a", "data": {"n": 1}}),
        )
        .await;
        let first_id = ok(&first)["id"].clone();
        let taken = call(
            &new,
            "resume",
            json!({"agent": "w", "session": "own", "take_over": true}),
        )
        .await;
        let takeover = ok(&taken)["takeover_id"].clone();
        assert!(takeover.is_string(), "{taken:?}");
        assert_eq!(ok(&taken)["owner"]["from_record"], first_id);
        let stale = call(
            &old,
            "checkpoint",
            json!({"agent": "w", "session": "own", "phase": "b", "data": {"n": 99}}),
        )
        .await;
        assert_eq!(ok(&stale)["posted"], true, "a plain save still posts");
        let resumed = call(&new, "resume", s.clone()).await;
        assert_eq!(
            ok(&resumed)["data"],
            json!({"n": 1}),
            "never the fenced save"
        );
        assert_eq!(ok(&resumed)["fenced"], 1);
        for (tool, request) in [
            ("resume", s.clone()),
            ("latest", s.clone()),
            (
                "checkpoint",
                json!({"agent": "w", "session": "own", "phase": "c", "check_owner": true}),
            ),
        ] {
            let answer = call(&old, tool, request).await;
            let error = failed(&answer);
            assert_eq!(error["code"], 73, "{tool}: {error}");
            assert_eq!(error["category"], "conflict");
            let message = error["message"].as_str().unwrap();
            assert!(message.starts_with("fenced:"), "{message}");
            assert!(message.contains(takeover.as_str().unwrap()), "{message}");
        }
        let after = call(&new, "resume", s.clone()).await;
        assert_eq!(ok(&after)["fenced"], 1, "check_owner posted nothing");

        // The new owner's line: it saves, the old server saves once more (posted, fenced), and
        // every reader, warm (the new server) or fresh (a server started now), resumes from the
        // new owner's record.
        let owned = call(
            &new,
            "checkpoint",
            json!({"agent": "w", "session": "own", "phase": "c", "data": {"n": 2}}),
        )
        .await;
        let owned_id = ok(&owned)["id"].clone();
        let stale = call(
            &old,
            "checkpoint",
            json!({"agent": "w", "session": "own", "phase": "d", "data": {"n": 98}}),
        )
        .await;
        assert_eq!(ok(&stale)["posted"], true);
        let (fresh, _e3) = connect(bin, args).await;
        for reader in [&new, &fresh] {
            let r = call(reader, "resume", s.clone()).await;
            assert_eq!(ok(&r)["record_id"], owned_id, "{args}: {r:?}");
            assert_eq!(ok(&r)["data"], json!({"n": 2}));
            assert_eq!(ok(&r)["fenced"], 2);
        }

        // `[session] check_owner = true` in the configuration alone: a server whose session was
        // taken over answers its plain save with code 73 and posts nothing.
        let config = dir.path().join("check-owner.toml");
        std::fs::write(&config, "[session]\ncheck_owner = true\n").unwrap();
        let checking = bin
            .clone()
            .env("FORGESTATE_CONFIG", config.display().to_string());
        let (cfg, _e4) = connect(&checking, args).await;
        let c = json!({"agent": "w", "session": "cfg"});
        let mine = call(
            &cfg,
            "checkpoint",
            json!({"agent": "w", "session": "cfg", "phase": "a", "data": {"n": 1}}),
        )
        .await;
        let mine_id = ok(&mine)["id"].clone();
        let taken = call(
            &new,
            "resume",
            json!({"agent": "w", "session": "cfg", "take_over": true}),
        )
        .await;
        assert!(ok(&taken)["takeover_id"].is_string(), "{taken:?}");
        let refused = call(
            &cfg,
            "checkpoint",
            json!({"agent": "w", "session": "cfg", "phase": "b", "data": {"n": 99}}),
        )
        .await;
        assert_eq!(failed(&refused)["code"], 73, "{args}: {refused:?}");
        let r = call(&fresh, "resume", c).await;
        assert_eq!(
            ok(&r)["record_id"],
            mine_id,
            "{args}: nothing posted: {r:?}"
        );
        assert_eq!(ok(&r)["fenced"], 0);
    }
}
