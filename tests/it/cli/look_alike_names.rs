//! Look-alike names (issue #29, hole 7): a name's NFC and NFD spellings are one name, and a new
//! name that mixes look-alike scripts (a Cyrillic `а` among Latin letters) or stacks combining
//! marks is refused with a message naming the character, on both stores and over MCP. ASCII
//! names, all seed 003's Python agents write, pass as before.

use crate::{common, fake_forge, mcp_client};

use common::cli::{Bin, args, stderr};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::{Value, json};

const NFC: &str = "caf\u{e9}-worker";
const NFD: &str = "cafe\u{301}-worker";
const CYRILLIC_A: &str = "\u{430}gent";
const STACKED: &str = "worke\u{301}\u{301}r";

fn checkpoint(bin: &Bin, agent: &str, session: &str) -> std::process::Output {
    bin.run(&args(&[
        "checkpoint",
        "--agent",
        agent,
        "--session",
        session,
        "--phase",
        "p",
        "--json",
    ]))
}

fn json_ok(bin: &Bin, argv: &[&str]) -> Value {
    let out = bin.run(&args(argv));
    assert_eq!(out.status.code(), Some(0), "{argv:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Both spellings write one name, resume finds it either way; look-alikes are refused (exit 65,
/// the character named) and nothing of them is saved.
fn one_name_and_no_look_alikes(bin: &Bin) {
    for agent in [NFD, NFC] {
        let out = checkpoint(bin, agent, "s");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let list = json_ok(bin, &["list", "--json"]);
    let agents: Vec<&str> = list["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, [NFC, NFC], "kept in NFC: {list}");
    for agent in [NFD, NFC] {
        let resume = json_ok(
            bin,
            &["resume", "--agent", agent, "--session", "s", "--json"],
        );
        assert_eq!(resume["fresh_start"], false, "{agent:?}: {resume}");
    }
    let refusals = [
        (
            CYRILLIC_A,
            "s",
            "agent mixes scripts: U+0430 at character 1 is a Cyrillic letter among Latin ones",
        ),
        (
            "w",
            "sess-\u{3b1}-one",
            "session mixes scripts: U+03B1 at character 6 is a Greek letter among Latin ones",
        ),
        (
            STACKED,
            "s",
            "agent stacks combining marks: U+0301 at character 6 is the same mark twice",
        ),
        (
            "a\u{300}\u{316}\u{35c}",
            "s",
            "U+035C at character 3 is a mark past the second",
        ),
    ];
    for (agent, session, said) in refusals {
        let out = checkpoint(bin, agent, session);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(65), "{agent:?}/{session:?}: {err}");
        assert!(err.contains(said), "{agent:?}/{session:?}: {err}");
    }
    let list = json_ok(bin, &["list", "--json"]);
    assert_eq!(list["records"].as_array().unwrap().len(), 2, "{list}");
    let ascii = checkpoint(bin, "implementation-worker", "demo-1");
    assert_eq!(ascii.status.code(), Some(0), "{}", stderr(&ascii));
}

#[test]
fn look_alike_names_on_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let bin = Bin::new(dir.path()).env("XDG_STATE_HOME", state);
    one_name_and_no_look_alikes(&bin);
}

#[tokio::test(flavor = "multi_thread")]
async fn look_alike_names_on_the_forge() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path())
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .env(
            "XDG_CACHE_HOME",
            dir.path().join("cache").display().to_string(),
        );
    let init = bin.run(&args(&["init"]));
    assert_eq!(init.status.code(), Some(0), "{}", stderr(&init));
    one_name_and_no_look_alikes(&bin);
}

#[tokio::test(flavor = "multi_thread")]
async fn look_alike_names_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let (client, _stderr) = mcp_client::connect(&bin, "--store st").await;
    let refused = mcp_client::call(
        &client,
        "checkpoint",
        json!({"agent": CYRILLIC_A, "session": "s", "phase": "p"}),
    )
    .await;
    let error = mcp_client::failed(&refused);
    assert_eq!(error["code"], 65, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("U+0430"),
        "{error}"
    );
    let saved = mcp_client::call(
        &client,
        "checkpoint",
        json!({"agent": NFD, "session": "s", "phase": "p"}),
    )
    .await;
    assert_eq!(mcp_client::ok(&saved)["record"]["agent"], NFC);
}
