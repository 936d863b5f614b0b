//! What the official SDKs' clients need of `forgestate mcp` (the MCP Inspector, on the
//! TypeScript SDK, refused it): request schemas without "or null" types on optional properties
//! and without Rust's integer formats, an integer argument sent as a numeric string read as the
//! number, error results with `isError` and the message as text but no structured content (which
//! the SDK checks against the tool's output schema), and a "did you mean" for a mistyped tool.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::common::cli::Bin;
use crate::mcp_client::{self, call, failed, ok};

/// Every `format` anywhere in `v` that names a Rust integer width, with where it is.
fn rust_formats(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "format"
                    && v.as_str()
                        .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"))
                {
                    out.push(format!("{at}: {v}"));
                }
                rust_formats(v, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| rust_formats(i, at, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_sdks_accept_every_schema_and_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st");
    let bin = Bin::new(dir.path());
    let (client, _err) = mcp_client::connect(&bin, &format!("--store {}", store.display())).await;

    let tools = client.list_all_tools().await.unwrap();
    let mut odd = Vec::new();
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        rust_formats(&schema, &tool.name, &mut odd);
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
            if required.contains(&name.as_str()) {
                continue;
            }
            let nullable = prop["type"]
                .as_array()
                .is_some_and(|t| t.contains(&json!("null")))
                || prop["anyOf"]
                    .as_array()
                    .is_some_and(|b| b.iter().any(|b| b["type"] == "null"));
            if nullable {
                odd.push(format!("{}.{name} is typed with null: {prop}", tool.name));
            }
        }
    }
    assert!(odd.is_empty(), "{odd:#?}");

    for phase in ["p1", "p2"] {
        let saved = call(
            &client,
            "checkpoint",
            json!({"agent": "w", "session": "s", "phase": phase}),
        )
        .await;
        ok(&saved);
    }
    // The Inspector sends what was typed in a form: the integer as a string.
    let listed = call(&client, "list", json!({"limit": "1"})).await;
    let doc = ok(&listed);
    assert_eq!(doc["records"].as_array().unwrap().len(), 1, "{doc:#}");
    assert_eq!(doc["records"][0]["phase"], "p2");

    // An error is an error result: the message as text, no structured content.
    let bad = call(&client, "resume", json!({"agent": "w"})).await;
    let error = failed(&bad);
    assert_eq!(error["code"], 64, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("session"),
        "{error}"
    );

    // A mistyped tool name gets a "did you mean".
    let Value::Object(args) = json!({"agent": "w", "session": "s"}) else {
        unreachable!()
    };
    let typo = client
        .call_tool(CallToolRequestParams::new("resum").with_arguments(args))
        .await
        .unwrap_err()
        .to_string();
    assert!(typo.contains("did you mean \"resume\""), "{typo}");
    client.cancel().await.unwrap();
}
