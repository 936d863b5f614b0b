//! Every MCP client configuration that docs/mcp.md shows, run the way that client runs it: the
//! JSON block's command, arguments and environment (opencode's `{env:NAME}` filled from the
//! client's own environment), pointed at the fake forge, then `checkpoint` and `resume` over the
//! protocol. A configuration that the docs change, or that stops working, fails here.

use std::path::Path;
use std::process::Stdio;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value, json};

use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use crate::mcp_client::{call, ok};

/// One server entry of a client's configuration: what the client spawns.
#[derive(Debug)]
struct Server {
    /// Where the docs show it, for messages.
    name: String,
    argv: Vec<String>,
    env: Vec<(String, String)>,
}

/// The `json` code blocks of a Markdown text, and its inline code spans.
fn code(markdown: &str) -> (Vec<String>, Vec<String>) {
    let (mut blocks, mut spans) = (Vec::new(), Vec::new());
    let mut open: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) if &*lang == "json" => {
                open = Some(String::new());
            }
            Event::Text(t) => {
                if let Some(b) = open.as_mut() {
                    b.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(open.take()),
            Event::Code(c) => spans.push(c.to_string()),
            _ => {}
        }
    }
    (blocks, spans)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The servers docs/mcp.md configures: Claude Desktop's and Cursor's `mcpServers` (command,
/// args, env), opencode's `mcp` (command as one array, environment), and the local-store
/// variant given inline as a `"command": [...]` span.
fn documented_servers() -> Vec<Server> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/mcp.md");
    let text = std::fs::read_to_string(&path).expect("docs/mcp.md");
    let (blocks, spans) = code(&text);
    let mut servers = Vec::new();
    for block in &blocks {
        let doc: Value = serde_json::from_str(block)
            .unwrap_or_else(|e| panic!("a json block of docs/mcp.md does not parse: {e}\n{block}"));
        for (key, entry) in doc["mcpServers"].as_object().into_iter().flatten() {
            let mut argv = vec![entry["command"].as_str().unwrap_or_default().to_string()];
            argv.extend(strings(&entry["args"]));
            servers.push(Server {
                name: format!("mcpServers.{key}"),
                argv,
                env: pairs(entry.get("env")),
            });
        }
        for (key, entry) in doc["mcp"].as_object().into_iter().flatten() {
            servers.push(Server {
                name: format!("opencode mcp.{key}"),
                argv: strings(&entry["command"]),
                env: pairs(entry.get("environment")),
            });
        }
    }
    for span in spans.iter().filter(|s| s.starts_with("\"command\":")) {
        let doc: Value = serde_json::from_str(&format!("{{{span}}}"))
            .unwrap_or_else(|e| panic!("docs/mcp.md's {span} does not parse: {e}"));
        servers.push(Server {
            name: format!("inline {span}"),
            argv: strings(&doc["command"]),
            env: Vec::new(),
        });
    }
    servers
}

/// A documented value made real: the example forge becomes the fake, `acme`/`app` its owner
/// and repository, `...` the bot's token, and opencode's `{env:NAME}` the client's variable.
fn real(key: &str, value: &str, url: &str, client_env: &Map<String, Value>) -> String {
    if let Some(name) = value
        .strip_prefix("{env:")
        .and_then(|v| v.strip_suffix('}'))
    {
        return client_env[name].as_str().unwrap_or_default().to_string();
    }
    match (key, value) {
        ("FORGESTATE_URL", _) => url.to_string(),
        ("FORGESTATE_TOKEN", "...") => BOT_TOKEN.to_string(),
        (_, v) => v.replace("acme", OWNER).replace("app", REPO),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_documented_client_configuration_saves_and_resumes() {
    let servers = documented_servers();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert!(
        names.iter().any(|n| n.starts_with("mcpServers"))
            && names.iter().any(|n| n.starts_with("opencode"))
            && names.iter().any(|n| n.starts_with("inline")),
        "docs/mcp.md shows the three configurations: {names:?}"
    );
    let client_env: Map<String, Value> = [("FORGESTATE_TOKEN".into(), json!(BOT_TOKEN))]
        .into_iter()
        .collect();
    for (n, server) in servers.iter().enumerate() {
        let fake = FakeForge::start().await;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(server.argv[0], "forgestate", "{}", server.name);
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_forgestate"));
        cmd.args(&server.argv[1..])
            .current_dir(d)
            .env_clear()
            .env("HOME", d)
            .env("USER", "tester")
            .env("XDG_CACHE_HOME", d.join("cache"))
            .env("XDG_STATE_HOME", d.join("state"));
        for (k, v) in &server.env {
            cmd.env(k, real(k, v, &fake.uri(), &client_env));
        }
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn forgestate mcp");
        let client = ().serve(transport).await.expect("initialize");
        let session = format!("s{n}");
        let saved = call(
            &client,
            "checkpoint",
            json!({"agent": "implementation-worker", "session": session,
                   "phase": "subtask_3_complete", "data": {"issue_number": 42}}),
        )
        .await;
        ok(&saved);
        let resumed = call(
            &client,
            "resume",
            json!({"agent": "implementation-worker", "session": session}),
        )
        .await;
        let answer = ok(&resumed);
        assert_eq!(
            answer["resume_point"], "phase_2_continue",
            "{}",
            server.name
        );
        assert_eq!(answer["data"]["issue_number"], 42, "{}", server.name);
        let _ = client.cancel().await;
        let on_forge = fake
            .state()
            .comments
            .iter()
            .any(|c| c.body.contains(&format!("Session: {session}")));
        let local = d.join(".forgestate").join("thread.jsonl").is_file();
        if server.env.iter().any(|(k, _)| k == "FORGESTATE_URL") {
            assert!(
                on_forge && !local,
                "{}: the record is on the forge",
                server.name
            );
        } else {
            assert!(
                local && !on_forge,
                "{}: the record is in ./.forgestate",
                server.name
            );
        }
    }
}
