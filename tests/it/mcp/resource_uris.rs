//! The resource `forgestate://resume/{agent}/{session}` names the agent and session as a client
//! expands the template (RFC 6570, percent-encoded): a session with a space or a name outside
//! ASCII resumes where its records are, never at a fresh start that was not one.

use crate::{common, mcp_client};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use common::cli::Bin;
use mcp_client::{call, connect, ok};

#[tokio::test(flavor = "multi_thread")]
async fn a_percent_encoded_name_reads_the_session_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _stderr) = connect(&Bin::new(dir.path()), "--store st").await;
    for (agent, session, phase) in [
        ("w", "my session", "spaced"),
        ("é", "sé", "accented"),
        ("w", "50%", "percent"),
    ] {
        let saved = call(
            &client,
            "checkpoint",
            json!({"agent": agent, "session": session, "phase": phase}),
        )
        .await;
        ok(&saved);
    }
    let read = |uri: &'static str| {
        let client = &client;
        async move {
            let read = client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap_or_else(|e| panic!("read {uri}: {e:?}"));
            let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
                panic!("text contents: {read:?}")
            };
            serde_json::from_str::<Value>(text).unwrap()
        }
    };
    for (uri, phase) in [
        ("forgestate://resume/w/my%20session", "spaced"),
        ("forgestate://resume/%C3%A9/s%C3%A9", "accented"),
        ("forgestate://resume/w/50%25", "percent"),
        // An unencoded name still reads as it did.
        ("forgestate://resume/é/sé", "accented"),
    ] {
        let answer = read(uri).await;
        assert_eq!(answer["fresh_start"], false, "{uri}: {answer}");
        assert_eq!(answer["phase"], phase, "{uri}: {answer}");
    }
    for bad in [
        "forgestate://resume/w/50%",
        "forgestate://resume/w/%zz",
        "forgestate://resume/w/%ff",
    ] {
        let answer = client
            .read_resource(ReadResourceRequestParams::new(bad))
            .await;
        assert!(answer.is_err(), "{bad}: {answer:?}");
    }
    // A name no record can carry is the caller's mistake, said as invalid params (-32602), as a
    // tool call says it with exit 65, never an internal error (-32603).
    for bad in ["forgestate://resume/w/s%2A", "forgestate://resume/w/a%3Fb"] {
        let answer = client
            .read_resource(ReadResourceRequestParams::new(bad))
            .await;
        let Err(rmcp::ServiceError::McpError(e)) = &answer else {
            panic!("{bad}: {answer:?}")
        };
        assert_eq!(
            e.code,
            rmcp::model::ErrorCode::INVALID_PARAMS,
            "{bad}: {e:?}"
        );
        assert!(e.message.contains("session"), "{bad}: {e:?}");
    }
    client.cancel().await.expect("close");
}
