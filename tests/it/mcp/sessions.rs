//! Sessions through the MCP tools, on both stores: `end` with each reason (and a bad one), an
//! intent across a server that exits between the intent and its confirmation, compare-and-set
//! refused and accepted, and two servers (two writers) continuing from one resume.

use crate::{common, fake_forge, mcp_client};
use serde_json::{Value, json};

use common::cli::Bin;
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
            assert!(text(&resumed).contains(&format!("ended ({reason})")));
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
        assert!(text(&resumed).contains("intent create_pr is pending"));

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
        for bad in ["HEAD", "x\nPhase: evil", "01a232d2-6f5a-743e-b1a3"] {
            let refused = call(
                &client,
                "checkpoint",
                json!({"agent": "w", "session": "p", "phase": "b", "parent": bad}),
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
/// answers has them posted in the order it sent them, each continuing the one before, so it
/// is never taken for two writers. A call for another session does not wait behind them.
#[tokio::test(flavor = "multi_thread")]
async fn parallel_checkpoints_of_one_session_are_posted_in_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let (stores, _fake) = stores(dir.path()).await;
    for (bin, args) in &stores {
        let (client, _stderr) = connect(bin, args).await;
        let cp = |n: u32| {
            call(
                &client,
                "checkpoint",
                json!({"agent": "w", "session": "par", "phase": format!("p{n}"), "data": {"n": n}}),
            )
        };
        let other = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "elsewhere", "phase": "a"}),
        );
        let (a0, a1, a2, a3, a4, a5, a6, a7, other) = tokio::join!(
            cp(0),
            cp(1),
            cp(2),
            cp(3),
            cp(4),
            cp(5),
            cp(6),
            cp(7),
            other
        );
        let answers = [a0, a1, a2, a3, a4, a5, a6, a7];
        ok(&other);
        let mut parent = Value::Null;
        for (n, answer) in answers.iter().enumerate() {
            let record = &ok(answer)["record"];
            assert_eq!(record["phase"], format!("p{n}"), "{args}");
            assert_eq!(
                record["parent"], parent,
                "{args}: p{n} continues the one before"
            );
            parent = ok(answer)["id"].clone();
        }
        let list = call(&client, "list", json!({"session": "par"})).await;
        let phases: Vec<&str> = ok(&list)["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["phase"].as_str())
            .collect();
        assert_eq!(
            phases,
            (0..8).map(|n| format!("p{n}")).collect::<Vec<_>>(),
            "{args}"
        );
        let resumed = call(&client, "resume", json!({"agent": "w", "session": "par"})).await;
        assert_eq!(ok(&resumed)["conflicts"], json!([]), "{args}: one writer");
        assert_eq!(ok(&resumed)["phase"], "p7", "{args}");
    }
}
