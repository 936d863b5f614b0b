//! The verb table and its faces agree: `forgestate schema` prints the table in its documented
//! shape, every verb in it is reachable from the CLI (`--help` lists it and it runs), and every
//! agent-facing verb is an MCP tool. The Python side of parity is the Python package's tests.

use crate::{common, mcp_client};
use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use common::cli::{Bin, stderr, stdout, words};

/// The table as `forgestate schema` prints it.
fn schema(bin: &Bin) -> Vec<Value> {
    let out = bin.line("schema");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["verbs"]);
    doc["verbs"].as_array().unwrap().clone()
}

#[test]
fn schema_prints_the_table_in_its_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let verbs = schema(&Bin::new(dir.path()));
    let names: Vec<&str> = verbs.iter().map(|v| v["name"].as_str().unwrap()).collect();
    let table: Vec<&str> = forgestate::verbs::table()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, table, "schema prints the table, in its order");
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    for v in &verbs {
        let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            BTreeSet::from([
                "name",
                "title",
                "description",
                "read_only",
                "destructive",
                "idempotent",
                "open_world",
                "faces",
                "runs",
                "flags",
                "positional",
                "request",
                "answer"
            ]),
            "{}",
            v["name"]
        );
        for flag in ["read_only", "destructive", "idempotent", "open_world"] {
            assert!(v[flag].is_boolean(), "{}.{flag}", v["name"]);
        }
        let faces = v["faces"].as_array().unwrap();
        assert!(faces.contains(&Value::from("cli")), "{}", v["name"]);
        for side in ["request", "answer"] {
            assert_eq!(v[side]["type"], "object", "{}.{side}", v["name"]);
            assert!(
                v[side]["$schema"]
                    .as_str()
                    .is_some_and(|s| s.contains("2020-12")),
                "{}.{side}",
                v["name"]
            );
        }
        assert!(!v["description"].as_str().unwrap().contains('\n'));
    }
    let by_name = |name: &str| verbs.iter().find(|v| v["name"] == name).unwrap();
    let resume = by_name("resume");
    assert_eq!(resume["read_only"], true);
    assert_eq!(resume["faces"], serde_json::json!(["cli", "mcp", "python"]));
    let answer = resume["answer"]["properties"].as_object().unwrap();
    for field in [
        "resume_point",
        "next",
        "blockers",
        "context_drift",
        "warnings",
    ] {
        assert!(answer.contains_key(field), "resume answers {field}");
    }
    assert_eq!(by_name("prune")["destructive"], true);
    assert_eq!(by_name("checkpoint")["read_only"], false);
    assert_eq!(by_name("parse")["open_world"], false);
}

#[test]
fn every_verb_in_the_table_is_listed_by_help_and_runs_on_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let help = stdout(&bin.line("--help"));
    // The verbs are listed by group (`Agents:`, `Supervisors:`, ...) between the usage and the
    // options.
    let listed: BTreeSet<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Usage:"))
        .skip(1)
        .take_while(|l| !l.starts_with("Options:"))
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for v in schema(&bin) {
        let name = v["name"].as_str().unwrap();
        assert!(listed.contains(name), "--help lists {name}: {listed:?}");
        let spec = forgestate::verbs::spec(name).expect("the library's table");
        let (mut args, stdin) = crate::common::examples::cli_args(spec);
        args.extend(words("--store st --json"));
        if name == "watch" {
            // It streams until stopped: it must still be running, not refused.
            let mut child = bin.command(&args).spawn().expect("spawn watch");
            std::thread::sleep(Duration::from_millis(700));
            let exited = child.try_wait().expect("watch");
            assert!(exited.is_none(), "watch exited: {exited:?}");
            child.kill().expect("stop watch");
            let _ = child.wait();
            continue;
        }
        let out = match stdin {
            Some(text) => bin.clone().stdin(text).run(&args),
            None => bin.run(&args),
        };
        let code = out.status.code();
        assert!(
            !matches!(code, Some(2 | 64)),
            "{name} was refused as typed: {}",
            stderr(&out)
        );
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: one JSON document: {e}: {}", stdout(&out)));
        assert!(doc.is_object(), "{name} answers an object: {doc}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_agent_facing_verb_is_an_mcp_tool() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let mcp: BTreeSet<String> = schema(&bin)
        .iter()
        .filter(|v| v["faces"].as_array().unwrap().contains(&Value::from("mcp")))
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    assert!(mcp.contains("resume") && mcp.contains("fork"), "{mcp:?}");
    let (client, _stderr) = mcp_client::connect(&bin, "--store st").await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let served: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(served, mcp);
    // And each tool is the table's entry: the same title and schemas as `forgestate schema`.
    let table = schema(&bin);
    for tool in &tools {
        let v = table
            .iter()
            .find(|v| v["name"] == tool.name.as_ref())
            .unwrap();
        assert_eq!(tool.title.as_deref(), v["title"].as_str());
        assert_eq!(Value::Object((*tool.input_schema).clone()), v["request"]);
        let output = tool.output_schema.as_ref().expect("output schema");
        assert_eq!(Value::Object((**output).clone()), v["answer"]);
        let hints = tool.annotations.as_ref().unwrap();
        assert_eq!(hints.read_only_hint, v["read_only"].as_bool());
        assert_eq!(hints.destructive_hint, v["destructive"].as_bool());
        assert_eq!(hints.idempotent_hint, v["idempotent"].as_bool());
        assert_eq!(hints.open_world_hint, v["open_world"].as_bool());
    }
    client.cancel().await.expect("close");
}

/// What both faces need lives where both use it: the MCP server imports no CLI internals.
#[test]
fn the_mcp_server_imports_nothing_from_the_cli() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src/mcp"));
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => dirs.push(path),
                false => files.push(path),
            }
        }
    }
    assert!(files.len() > 3, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for banned in ["crate::cli", "super::super::cli"] {
            assert!(
                !text.contains(banned),
                "{} imports {banned}",
                path.display()
            );
        }
    }
}
