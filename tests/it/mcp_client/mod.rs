//! Driving `forgestate mcp` from tests: spawn the real binary (through `common::cli::Bin`) and
//! connect rmcp's client, then call tools and read their results.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::common::cli::{Bin, stderr, words};

pub type Client = RunningService<RoleClient, ()>;

/// A hang guard for waits on the child, never a speed assertion.
pub const HANG: Duration = Duration::from_secs(60);

/// Spawns `forgestate mcp` as `bin` with `args` and connects rmcp's client to it. The server's
/// stderr is collected by the returned task (ends when the server exits).
pub async fn connect(bin: &Bin, args: &str) -> (Client, tokio::task::JoinHandle<String>) {
    let cmd = tokio::process::Command::from(bin.command(&words(&format!("mcp {args}"))));
    let (transport, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn forgestate mcp");
    let mut err = err.expect("stderr piped");
    let stderr = tokio::spawn(async move {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text).await;
        text
    });
    let client = ().serve(transport).await.expect("initialize");
    (client, stderr)
}

pub async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The structured content of a result that must not be an error.
pub fn ok(result: &CallToolResult) -> &Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    result.structured_content.as_ref().expect("structured")
}

/// The `error` object of a result that must be an error (`isError: true`, no structured
/// content, which a client would check against the tool's output schema): the message is the
/// first text, the error document the second.
pub fn failed(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        result.structured_content.is_none(),
        "an error carries no structured content: {result:?}"
    );
    let document = result
        .content
        .get(1)
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .expect("the error document as a second text");
    let doc: Value = serde_json::from_str(document).expect("the error document is JSON");
    let error = doc["error"].clone();
    assert_eq!(text(result), error["message"].as_str().expect("message"));
    error
}

/// The first text content of a result.
pub fn text(result: &CallToolResult) -> &str {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .expect("a first text")
}

/// The CLI's `forgestate: error:` message for `args`, which must fail with `code`.
pub fn cli_error(bin: &Bin, args: &[&str], code: i32) -> String {
    let out = bin.run(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    let err = stderr(&out);
    err.lines()
        .find_map(|l| l.strip_prefix("forgestate: error: "))
        .unwrap_or_else(|| panic!("an error line: {err}"))
        .to_string()
}
