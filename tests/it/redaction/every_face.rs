//! One scrub at the answer's boundary (issue #42, serious 4): a trusted writer that redacts
//! nothing (the seed's own client) posts records with the forge token and each secret shape of
//! docs/redaction.md in every field that can carry text: agent and session names, phases, data
//! values and keys, the handoff lines, and warnings that quote a name ("did you mean session
//! …?"). No face answers any of them: the CLI's `--json` and human output, `forgestate call`
//! (one shot and `--lines`, what the Python package runs) and MCP; on the forge and on the
//! local store. And a session whose name holds a secret still resumes (low 10).

use serde_json::{Value, json};

use crate::common::GHP;
use crate::common::cli::{Bin, stderr, stdout};
use crate::common::seed_line;
use crate::fake_forge::{self, BOT_TOKEN, FakeForge, OWNER, REPO};

/// The secret session: the forge token inside its name.
fn secret_session() -> String {
    format!("job-{BOT_TOKEN}")
}

/// A session one letter off the secret one, so `resume` says "did you mean session …?".
fn near_miss() -> String {
    format!("job-{}x", &BOT_TOKEN[..BOT_TOKEN.len() - 1])
}

/// The agent whose name holds a GitLab token, the phase that holds a Slack one.
const AGENT: &str = "w-glpat-abcdefghij0123456789";
const PHASE: &str = "clone_complete-xoxb-123456789012-abcdefghij";
/// Low 9: an AWS key id after a `-`, as a session name.
const BUILD: &str = "build-AKIAIOSFODNN7EXAMPLE";

/// Each secret part planted, which must never come out.
fn secrets() -> Vec<String> {
    [
        BOT_TOKEN,
        // The token with a zero-width character inside: its tail must not come out either.
        &BOT_TOKEN[12..],
        GHP,
        "glpat-abcdefghij0123456789",
        "xoxb-123456789012-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "pw-HUNTER2x",
        "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
        "qs-SECRET-1",
        "flag-SECRET-2",
        "colon-SECRET-3",
        "yaml-SECRET-4",
        "spaced-SECRET-5",
        "MIIEpemSECRET6",
        "keyed-SECRET-7",
        "blk-SECRET-8",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "AIzaSyA-0123456789abcdefghijklmnopqrstu",
        "sk-proj-abcdefghij0123456789XYZ",
        "sk_live_0123456789abcdefXYZ",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0",
        "hf_abcdefghijklmnopqrstuvwxyz0123",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "bearer0123456789abcdef",
        "dXNlcjpwYXNzd29yZDEyMzQ1Ng",
    ]
    .into_iter()
    .map(str::to_string)
    .collect()
}

/// Every shape of docs/redaction.md's table, as data values and one as a key.
fn data() -> Value {
    let zw = format!("{}\u{200B}{}", &BOT_TOKEN[..12], &BOT_TOKEN[12..]);
    json!({
        "token_in_use": format!("cloned with token {BOT_TOKEN}"),
        "zero_width": zw,
        "url_password": "https://u:pw-HUNTER2x@host/x",
        "url_user": format!("https://{GHP}@github.com/a"),
        "assignment": "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
        "query": "https://h/x?user=a&password=qs-SECRET-1&n=1",
        "flag": "deploy --api-key=\"flag-SECRET-2\" --verbose",
        "colon": "{\"db_password\": \"colon-SECRET-3\"}",
        "yaml": "AWS_SECRET_ACCESS_KEY: yaml-SECRET-4",
        "spaced": "mysql --password spaced-SECRET-5",
        "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpemSECRET6\n-----END RSA PRIVATE KEY-----",
        "api_token": "keyed-SECRET-7",
        "formats": [
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "sk-proj-abcdefghij0123456789XYZ",
            "sk_live_0123456789abcdefXYZ",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0",
            "hf_abcdefghijklmnopqrstuvwxyz0123",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "Authorization: Bearer bearer0123456789abcdef",
            "Authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ1Ng",
        ],
        (GHP): "a secret as a key",
    })
}

/// A seed-format checkpoint, unredacted, with a `Next:` and a `Blocker:` line.
fn body(agent: &str, session: &str, phase: &str, id: &str) -> String {
    format!(
        "[CHECKPOINT] {agent}\nVersion: 2.0\nPhase: {phase}\nSession: {session}\n\
         Time: 2026-12-01T19:00:00.000000Z\nId: {id}\nNext: push with {GHP}\n\
         Blocker: needs mysql --password blk-SECRET-8\n\n\
         State Data:\n```json\n{}\n```\n\n---\n\nAutomated by CleverAgents Bot Agent: {agent}",
        serde_json::to_string_pretty(&data()).unwrap()
    )
}

/// The three records: `w` in the secret session, the secret agent, and `w` in `build-AKIA…`.
fn bodies() -> Vec<String> {
    vec![
        body(
            "w",
            &secret_session(),
            "clone_complete",
            "01a2359a-0000-7000-8000-000000000001",
        ),
        body(AGENT, "s2", PHASE, "01a2359a-0000-7000-8000-000000000002"),
        body(
            "w",
            BUILD,
            "clone_complete",
            "01a2359a-0000-7000-8000-000000000003",
        ),
    ]
}

fn leaks(text: &str) -> Vec<String> {
    secrets().into_iter().filter(|s| text.contains(s)).collect()
}

/// The verbs as command lines (names with secrets hold no space, so each is one argument).
fn lines() -> Vec<Vec<String>> {
    let v = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let secret = secret_session();
    let near = near_miss();
    let mut all = Vec::new();
    for json in [true, false] {
        for mut line in [
            v(&["resume", "--agent", "w", "--session", &secret]),
            v(&["resume", "--agent", "w", "--session", &near]),
            v(&[
                "resume",
                "--agent",
                "w",
                "--session",
                "build-AKIAIOSFODNN7EXAMPLF",
            ]),
            v(&["resume", "--agent", AGENT, "--session", "s2"]),
            v(&["latest", "--agent", "w"]),
            v(&["list"]),
            v(&["list", "--all"]),
            v(&["history", "--session", "s2"]),
            v(&["history", "--session", &secret]),
            v(&["status"]),
        ] {
            if json {
                line.push("--json".into());
            }
            all.push(line);
        }
    }
    all
}

/// The requests `call` and MCP send, as (verb, args).
fn requests() -> Vec<(&'static str, Value)> {
    vec![
        ("resume", json!({"agent": "w", "session": secret_session()})),
        ("resume", json!({"agent": "w", "session": near_miss()})),
        ("resume", json!({"agent": AGENT, "session": "s2"})),
        ("latest", json!({"agent": "w"})),
        ("list", json!({})),
        ("history", json!({"session": "s2"})),
        ("history", json!({"session": secret_session()})),
        ("status", json!({})),
    ]
}

/// Runs every face over `bin` and asserts nothing planted comes out.
async fn no_face_answers_a_secret(bin: &Bin, store: &[&str]) {
    let with_store = |line: &[String]| {
        let mut args: Vec<String> = store.iter().map(|s| s.to_string()).collect();
        args.extend(line.iter().cloned());
        args
    };
    for line in lines() {
        let out = bin.run(&with_store(&line));
        assert_eq!(out.status.code(), Some(0), "{line:?}: {}", stderr(&out));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(leaks(&said), Vec::<String>::new(), "{line:?}: {said}");
    }

    // The secret session resumes (low 10), its name scrubbed; a near miss says "did you mean".
    let resume = |session: &str| {
        let line = ["resume", "--agent", "w", "--session", session, "--json"].map(String::from);
        let out = bin.run(&with_store(&line));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()
    };
    let found = resume(&secret_session());
    assert_eq!(found["fresh_start"], false, "{found}");
    assert_eq!(found["phase"], "clone_complete", "{found}");
    assert!(
        found["data"]["token_in_use"]
            .as_str()
            .unwrap()
            .contains("[REDACTED]"),
        "{found}"
    );
    let history = {
        let line = ["history", "--session", &secret_session(), "--json"].map(String::from);
        serde_json::from_str::<Value>(&stdout(&bin.run(&with_store(&line)))).unwrap()
    };
    assert_eq!(
        history["records"].as_array().map(Vec::len),
        Some(1),
        "{history}"
    );
    assert_eq!(history["session"], "job-[REDACTED]", "{history}");
    let near = resume(&near_miss());
    assert_eq!(near["fresh_start"], true, "{near}");
    let warned = near["warnings"].to_string();
    assert!(
        warned.contains("did you mean session") && warned.contains("job-[REDACTED]"),
        "{warned}"
    );

    // `forgestate call`, one shot and `--lines` (the Python package's child).
    let mut input = String::new();
    for (verb, args) in requests() {
        let out = bin
            .clone()
            .stdin(args.to_string())
            .run(&with_store(&["call".to_string(), verb.to_string()]));
        assert_eq!(out.status.code(), Some(0), "call {verb}: {}", stderr(&out));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(leaks(&said), Vec::<String>::new(), "call {verb}: {said}");
        input.push_str(&format!("{}\n", json!({"verb": verb, "args": args})));
    }
    let out = bin
        .clone()
        .stdin(input)
        .run(&with_store(&["call".to_string(), "--lines".to_string()]));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out).lines().count(), requests().len(), "{said}");
    assert!(said.contains("job-[REDACTED]"), "{said}");
    assert_eq!(leaks(&said), Vec::<String>::new(), "call --lines: {said}");

    // MCP: the structured answer and both texts.
    let (mcp, _err) = crate::mcp_client::connect(bin, &store.join(" ")).await;
    for (tool, args) in requests() {
        let got = crate::mcp_client::call(&mcp, tool, args).await;
        assert_eq!(got.is_error, Some(false), "{tool}: {got:?}");
        let text = serde_json::to_string(&got).unwrap();
        assert_eq!(leaks(&text), Vec::<String>::new(), "{tool}: {text}");
    }
    mcp.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn no_face_answers_a_planted_secret_from_the_forge() {
    let fake = FakeForge::start().await;
    let n = fake_forge::session(&fake);
    for b in bodies() {
        fake.add_comment(n, "ca-bot", &b);
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    no_face_answers_a_secret(&bin, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_face_answers_a_planted_secret_from_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("st");
    std::fs::create_dir_all(&st).unwrap();
    let thread: String = bodies()
        .iter()
        .enumerate()
        .map(|(i, b)| seed_line(i as u64 + 1, b) + "\n")
        .collect();
    std::fs::write(st.join("thread.jsonl"), thread).unwrap();
    // The token in use is known to the binary's scrubber even over the local store.
    let bin = Bin::new(dir.path()).env("FORGESTATE_TOKEN", BOT_TOKEN);
    no_face_answers_a_secret(&bin, &["--store", "st"]).await;
}
