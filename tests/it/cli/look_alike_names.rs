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
        // Issue #42 low 8: what NFKC changes, and names that pass for ASCII (UTS #39).
        (
            "\u{ff57}orker",
            "s",
            "agent has a look-alike character: U+FF57 at character 1 is a styled, combined or \
             width form of \"w\"",
        ),
        ("\u{1d430}orker", "s", "U+1D430 at character 1"),
        (
            "w",
            "\u{fb01}le",
            "session has a look-alike character: U+FB01",
        ),
        ("\u{2160}mpl", "s", "form of \"I\""),
        (
            "\u{251}gent",
            "s",
            "agent could pass for an ASCII name: U+0251 at character 1 looks like \"a\"",
        ),
        (
            "w",
            "\u{430}\u{440}\u{435}",
            "session could pass for an ASCII name: U+0430",
        ),
        (
            "agent\u{2010}x",
            "s",
            "U+2010 at character 6 looks like \"-\"",
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

/// Reads stay lenient: a record another client wrote under a look-alike name still resumes.
#[test]
fn a_look_alike_name_written_elsewhere_still_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("st");
    std::fs::create_dir_all(&st).unwrap();
    let mut thread = String::new();
    for (n, agent) in ["\u{251}gent", "\u{ff57}orker"].into_iter().enumerate() {
        let body = format!(
            "[CHECKPOINT] {agent}\nVersion: 1.0\nPhase: clone_complete\nSession: s\n\
             Time: 2026-12-01T19:00:00.000000Z\n\nState Data:\n```json\n{{}}\n```\n"
        );
        thread.push_str(&(common::seed_line(n as u64 + 1, &body) + "\n"));
    }
    std::fs::write(st.join("thread.jsonl"), thread).unwrap();
    let bin = Bin::new(dir.path());
    for agent in ["\u{251}gent", "\u{ff57}orker"] {
        let resume = json_ok(
            &bin,
            &[
                "--store",
                "st",
                "resume",
                "--agent",
                agent,
                "--session",
                "s",
                "--json",
            ],
        );
        assert_eq!(resume["phase"], "clone_complete", "{agent}: {resume}");
    }
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
    for (agent, code) in [
        ("\u{ff57}orker", "U+FF57"),
        ("\u{251}gent", "U+0251"),
        ("\u{fb01}le", "U+FB01"),
    ] {
        let refused = mcp_client::call(
            &client,
            "checkpoint",
            json!({"agent": agent, "session": "s", "phase": "p"}),
        )
        .await;
        let error = mcp_client::failed(&refused);
        assert_eq!(error["code"], 65, "{error}");
        assert!(error["message"].as_str().unwrap().contains(code), "{error}");
    }
    let saved = mcp_client::call(
        &client,
        "checkpoint",
        json!({"agent": NFD, "session": "s", "phase": "p"}),
    )
    .await;
    assert_eq!(mcp_client::ok(&saved)["record"]["agent"], NFC);
}
