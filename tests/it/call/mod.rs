//! `forgestate call`: a verb's JSON request on stdin, its answer on stdout, one shot or one line
//! each (`--lines`, what the Python package's `Client` keeps open); the same answers as the
//! CLI's `--json` and the MCP server's tools, since all run the same `verbs::call`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::cli::{Bin, parse_ok, stderr, stdout, words};
use crate::mcp_client::{call as mcp_call, connect, ok};

mod schema_fit;
mod stdin_request;

const W: &str = "implementation-worker";

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `forgestate --store st call VERB` with `request` on stdin: exit code and document.
fn one(bin: &Bin, verb: &str, request: &str) -> (Option<i32>, Value) {
    let out = bin
        .clone()
        .stdin(request)
        .run(&words(&format!("--store st call {verb}")));
    (out.status.code(), json_of(&stdout(&out)))
}

/// Runs `forgestate --store st call --lines` over `lines`: the answer lines and the exit code.
fn serve(bin: &Bin, lines: &[&str]) -> (Vec<Value>, Option<i32>) {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = bin
        .clone()
        .stdin(input)
        .run(&words("--store st call --lines"));
    let answers = stdout(&out).lines().map(json_of).collect();
    (answers, out.status.code())
}

#[test]
fn one_shot_answers_what_the_cli_answers_and_fails_with_its_error_document() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let request = json!({"agent": W, "session": "s1", "phase": "clone_complete",
                         "data": {"issue": 42}, "next": "--dry-run first", "blockers": ["-x"]});
    let (code, saved) = one(&bin, "checkpoint", &request.to_string());
    assert_eq!(code, Some(0), "{saved}");
    assert_eq!(saved["posted"], true);
    assert_eq!(
        saved["record"]["next"], "--dry-run first",
        "a value, never a flag"
    );
    assert_eq!(saved["record"]["blockers"], json!(["-x"]));

    let (code, resumed) = one(
        &bin,
        "resume",
        &json!({"agent": W, "session": "s1"}).to_string(),
    );
    assert_eq!(code, Some(0));
    let args = words(&format!(
        "--store st resume --agent {W} --session s1 --json"
    ));
    let cli = parse_ok(&args, &bin.run(&args));
    assert_eq!(
        resumed, cli,
        "call resume answers exactly what resume --json prints"
    );
    assert_eq!(resumed["record_id"], saved["id"]);

    // A request that does not fit: the CLI's error document and exit code.
    let (code, doc) = one(&bin, "resume", "{}");
    assert_eq!(code, Some(64));
    assert_eq!(doc["error"]["category"], "usage");
    assert!(
        doc["error"]["message"].as_str().unwrap().contains("agent"),
        "{doc}"
    );
    let (code, doc) = one(&bin, "resume", "not json");
    assert_eq!(
        (code, &doc["error"]["code"]),
        (Some(64), &json!(64)),
        "{doc}"
    );
    let (code, doc) = one(&bin, "parse", &json!({"body": "hello"}).to_string());
    assert_eq!(code, Some(65));
    assert_eq!(doc["error"]["reason"], "no_marker", "{doc}");
    let (code, doc) = one(&bin, "resme", "{}");
    assert_eq!(code, Some(64));
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"resume\"?"),
        "{doc}"
    );
}

#[test]
fn lines_answer_each_request_on_one_line_and_a_bad_line_does_not_stop_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let checkpoint = json!({"verb": "checkpoint", "id": 1, "args": {"agent": W, "session": "s1",
                            "phase": "clone_complete", "data": {"n": 1}}});
    let end = json!({"verb": "end", "id": "e", "args": {"agent": W, "session": "s1",
                     "reason": "completed", "note": "--dry-run failed"}});
    let resume = json!({"verb": "resume", "id": [3], "args": {"agent": W, "session": "s1"}});
    let status = json!({"verb": "status", "args": {"warn_after_secs": "10m"}});
    let lines = [
        checkpoint.to_string(),
        "this is not JSON".to_string(),
        String::new(),
        json!({"verb": "chekpoint", "id": 2}).to_string(),
        json!({"verb": "list", "args": [1]}).to_string(),
        json!({"verb": "list", "args": {"limit": "many"}}).to_string(),
        json!({"verb": "flush", "args": {}}).to_string(),
        json!({"verb": "list", "limit": 1}).to_string(),
        "[1, 2]".to_string(),
        "\u{feff}{\"verb\"".to_string(),
        end.to_string(),
        resume.to_string(),
        status.to_string(),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (answers, code) = serve(&bin, &refs);
    assert_eq!(code, Some(0), "end of input exits 0");
    assert_eq!(
        answers.len(),
        lines.len() - 1,
        "one line per request, blank lines skipped"
    );

    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["answer"]["posted"], true, "{}", answers[0]);
    assert!(
        answers[0]["answer"]["warnings"].is_array(),
        "warnings stay in the answer"
    );
    let errors: Vec<&Value> = answers[1..9].iter().map(|a| &a["error"]).collect();
    for (i, error) in errors.iter().enumerate() {
        assert_eq!(error["code"], 64, "line {}: {}", i + 1, answers[i + 1]);
        assert_eq!(error["category"], "usage");
        assert!(answers[i + 1].get("answer").is_none());
    }
    assert!(errors[0]["message"].as_str().unwrap().contains("not JSON"));
    assert_eq!(answers[2]["id"], 2, "an error line echoes the id");
    assert!(
        errors[1]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"checkpoint\"?"),
        "{}",
        errors[1]
    );
    assert!(
        errors[2]["message"]
            .as_str()
            .unwrap()
            .contains("JSON object")
    );
    assert!(
        errors[3]["message"]
            .as_str()
            .unwrap()
            .contains("do not fit its schema")
    );
    assert!(
        errors[4]["message"]
            .as_str()
            .unwrap()
            .contains("run `forgestate --json flush` instead"),
        "{}",
        errors[4]
    );
    assert!(
        errors[5]["message"]
            .as_str()
            .unwrap()
            .contains("unknown key \"limit\"")
    );

    let ended = &answers[9];
    assert_eq!(ended["id"], "e");
    assert_eq!(
        ended["answer"]["record"]["note"], "--dry-run failed",
        "{ended}"
    );
    let resumed = &answers[10]["answer"];
    assert_eq!(answers[10]["id"], json!([3]));
    assert_eq!(resumed["phase"], "clone_complete");
    assert_eq!(resumed["ended"]["reason"], "completed", "{resumed}");
    assert_eq!(answers[11]["answer"]["rows"][0]["verdict"], "completed");
}

#[test]
fn bytes_that_are_not_utf8_and_a_store_that_cannot_open_are_answered_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = b"\xff\xfe{\"verb\": \"list\"}\n".to_vec();
    input.extend_from_slice(b"{\"verb\": \"list\", \"id\": 2}\n");
    let out = Bin::new(dir.path())
        .stdin(input.clone())
        .run(&words("--store st call --lines"));
    let answers: Vec<Value> = stdout(&out).lines().map(json_of).collect();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(answers[0]["error"]["code"], 64, "{}", answers[0]);
    assert_eq!(answers[1]["id"], 2);
    // Bad bytes after the id: the answer still carries it, so the caller can match it.
    let out = Bin::new(dir.path())
        .stdin(b"{\"id\": \"q7\", \"verb\": \"list\", \"args\": {\"agent\": \"\xff\"}}\n".to_vec())
        .run(&words("--store st call --lines"));
    let answer = json_of(stdout(&out).trim());
    assert_eq!(answer["id"], "q7", "{answer}");
    assert_eq!(answer["error"]["code"], 64, "{answer}");
    assert_eq!(answers[1]["answer"]["records"], json!([]));
    // A config that cannot be used: said once on stderr, then each request answers it.
    std::fs::write(dir.path().join("bad.toml"), "[locall]\n").unwrap();
    let out = Bin::new(dir.path())
        .stdin(input)
        .run(&words("--config bad.toml call --lines"));
    let answers: Vec<Value> = stdout(&out).lines().map(json_of).collect();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(answers[1]["error"]["code"], 78, "{}", answers[1]);
    assert!(stderr(&out).contains("locall"), "{}", stderr(&out));
}

#[test]
fn a_long_lived_child_answers_as_it_goes_and_exits_0_when_stdin_closes() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let mut child = bin
        .command(&words("--store st call --lines"))
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn forgestate call --lines");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ask = |request: Value| {
        writeln!(input, "{request}").expect("write a request");
        input.flush().expect("flush");
        let mut line = String::new();
        output.read_line(&mut line).expect("read an answer");
        json_of(&line)
    };
    for n in 1..=3 {
        let saved = ask(
            json!({"verb": "checkpoint", "args": {"agent": W, "session": "s1",
                                "phase": format!("subtask_{n}_complete")}}),
        );
        assert_eq!(saved["answer"]["comment_id"], n, "{saved}");
        let resumed = ask(json!({"verb": "resume", "args": {"agent": W, "session": "s1"}}));
        assert_eq!(
            resumed["answer"]["phase"],
            format!("subtask_{n}_complete"),
            "each answer sees the writes before it"
        );
    }
    drop(input);
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn call_answers_what_the_mcp_tool_and_the_cli_answer() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let (client, _stderr) = connect(&bin, "--store st").await;
    let args = json!({"agent": W, "session": "s1", "phase": "pr_created",
                      "data": {"pr": 7}, "blockers": ["review"]});
    let over_mcp = ok(&mcp_call(&client, "checkpoint", args.clone()).await).clone();
    let (answers, _) = serve(
        &bin,
        &[&json!({"verb": "checkpoint", "args": args}).to_string()],
    );
    let over_call = &answers[0]["answer"];
    let keys = |v: &Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(
        keys(over_call),
        keys(&over_mcp),
        "the same answer, field for field"
    );
    assert_eq!(keys(&over_call["record"]), keys(&over_mcp["record"]));
    assert_eq!(over_call["record"]["data"], over_mcp["record"]["data"]);

    let who = json!({"agent": W, "session": "s1"});
    let mcp_resume = ok(&mcp_call(&client, "resume", who.clone()).await).clone();
    let (answers, _) = serve(&bin, &[&json!({"verb": "resume", "args": who}).to_string()]);
    let line = words(&format!(
        "--store st resume --agent {W} --session s1 --json"
    ));
    let cli_resume = parse_ok(&line, &bin.run(&line));
    assert_eq!(
        answers[0]["answer"], mcp_resume,
        "call --lines = the MCP tool"
    );
    assert_eq!(
        answers[0]["answer"], cli_resume,
        "call --lines = resume --json"
    );
    assert_eq!(mcp_resume["record_id"], over_call["id"]);
    client.cancel().await.expect("close the MCP session");
}

/// `{"a": {"a": ... 1 ...}}`, `levels` objects deep.
fn nested(levels: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
}

#[test]
fn data_as_deep_as_the_cli_takes_it_is_saved_over_lines_and_deeper_is_a_data_error() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    // The CLI's `--data` takes an object 126 levels deep; the request line wraps it in three
    // more, past serde_json's 128, which must not make the line "not JSON".
    let mut args = words(&format!(
        "--store st checkpoint --agent {W} --session s0 --phase p --data"
    ));
    args.push(nested(126));
    let cli = bin.run(&args);
    assert_eq!(cli.status.code(), Some(0), "{}", stderr(&cli));
    let line = |id: u32, session: &str, levels: usize| {
        format!(
            r#"{{"id":{id},"verb":"checkpoint","args":{{"agent":"{W}","session":"{session}","phase":"p","data":{}}}}}"#,
            nested(levels)
        )
    };
    let deep = line(1, "s1", 126);
    let deeper = line(2, "s2", 400);
    let twice = format!(
        r#"{{"id":3,"verb":"checkpoint","args":{{"agent":"{W}","session":"s3","phase":"p","data":{{"d":{},"k":1,"k":2}}}}}}"#,
        nested(124)
    );
    let resume = json!({"verb": "resume", "id": 4, "args": {"agent": W, "session": "s1"}});
    let input = format!("{deep}\n{deeper}\n{twice}\n{resume}\n");
    let out = bin.stdin(input).run(&words("--store st call --lines"));
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    // The answers nest as deep as the data: too deep for serde_json to read whole here.
    assert!(lines[0].ends_with(r#","id":1}"#), "{}", lines[0]);
    assert!(lines[0].contains(r#""posted":true"#), "{}", lines[0]);
    let answers: Vec<Value> = lines[1..3].iter().map(|l| json_of(l)).collect();
    assert_eq!(answers[0]["id"], 2, "the id is read from a deep line");
    assert_eq!(answers[0]["error"]["code"], 65, "{}", answers[0]);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("data") && message.contains("recursion limit"),
        "{message}"
    );
    assert_eq!(answers[1]["id"], 3);
    assert_eq!(answers[1]["error"]["code"], 64, "{}", answers[1]);
    assert!(
        answers[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"k\" twice"),
        "a repeated key in a deep line is still refused: {}",
        answers[1]
    );
    assert!(lines[3].contains(r#""phase":"p""#), "{}", lines[3]);
    assert!(
        lines[3].contains(&format!(r#""data":{}"#, nested(126))),
        "the whole depth is kept: {}",
        lines[3]
    );
}

#[test]
fn a_child_for_the_pure_verbs_warns_of_nothing_about_a_store_it_never_opens() {
    // Python's pure functions (`create_checkpoint`, `parse_checkpoint_comment`) run their
    // child with its store inside the null device: nothing is kept there, so nothing to warn.
    let dir = tempfile::tempdir().unwrap();
    let parse = json!({"verb": "parse", "args": {"body": "hello"}});
    let out = Bin::new(dir.path())
        .stdin(format!("{parse}\n{parse}\n"))
        .run(&words("--store /dev/null/none call --lines"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answers: Vec<Value> = stdout(&out).lines().map(json_of).collect();
    assert_eq!(answers.len(), 2, "{}", stdout(&out));
    assert!(
        answers.iter().all(|a| a["error"]["code"] == 65),
        "{answers:?}"
    );
    assert_eq!(
        stderr(&out),
        "",
        "a child that keeps its own writer keeps none on disk"
    );
}

#[test]
fn data_too_deep_is_called_too_deep_not_invalid_json() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let mut args = words(&format!(
        "--store st checkpoint --agent {W} --session s0 --phase p --data"
    ));
    args.push(nested(200));
    let cli = bin.run(&args);
    let err = stderr(&cli);
    assert_eq!(cli.status.code(), Some(65), "{err}");
    assert!(
        err.contains("--data nests too deeply") && err.contains("flatter"),
        "{err}"
    );
    assert!(
        !err.contains("not valid JSON"),
        "valid JSON, only deep: {err}"
    );
}

/// Issue #42's attack: a request over 64 MiB is bad data (exit 65), as the CLI says of data over
/// its 64 MiB cap (`--data-file`), not a usage error; the Python package sends every request
/// this way (`call --lines`).
#[test]
fn a_request_over_64_mib_is_bad_data_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let over = "x".repeat(64 * 1024 * 1024 + 1);
    let line = format!("{{\"verb\": \"parse\", \"args\": {{\"body\": \"{over}\"}}}}\n");
    let (answers, _) = serve(
        &bin,
        &[
            line.trim_end(),
            &json!({"verb": "parse", "args": {"body": "hello"}}).to_string(),
        ],
    );
    assert_eq!(answers[0]["error"]["code"], 65, "{}", answers[0]["error"]);
    assert_eq!(answers[0]["error"]["category"], "data");
    assert_eq!(
        answers[1]["error"]["reason"], "no_marker",
        "the next line still runs"
    );
    let file = dir.path().join("big.json");
    std::fs::write(&file, &over).unwrap();
    let out = bin.run(&words(&format!(
        "--store st checkpoint --agent {W} --session s1 --phase clone_complete --data-file {}",
        file.display()
    )));
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
}
