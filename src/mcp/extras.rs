//! What the MCP server offers beside its tools, both run through the same verbs: the resource
//! `forgestate://resume/{agent}/{session}` (the `resume` answer as JSON, for clients that attach
//! context rather than call tools) and the `resume-my-work` prompt (tells the model to resume,
//! work, and checkpoint).

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, Prompt, PromptArgument, PromptMessage, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ResourceTemplate, Role,
};
use serde_json::{Map, Value};

use super::server::Server;

const SCHEME: &str = "forgestate://resume/";
const PROMPT: &str = "resume-my-work";

/// The one resource template.
pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{SCHEME}{{agent}}/{{session}}"), "resume")
            .with_title("Where an agent resumes a session")
            .with_description(
                "The `resume` answer for this agent and session as JSON: resume point, last \
                 phase and data, the handoff (next, blockers) and the flags.",
            )
            .with_mime_type("application/json"),
    ])
}

/// Reads `forgestate://resume/{agent}/{session}`.
pub async fn read(server: &Server, uri: &str) -> Result<ReadResourceResponse, ErrorData> {
    let not_found = || {
        ErrorData::resource_not_found(
            format!("no resource {uri:?}; write it as {SCHEME}AGENT/SESSION"),
            None,
        )
    };
    let (agent, session) = uri
        .strip_prefix(SCHEME)
        .and_then(|rest| rest.split_once('/'))
        .filter(|(a, s)| !a.is_empty() && !s.is_empty() && !s.contains('/'))
        .and_then(|(a, s)| Some((decoded(a)?, decoded(s)?)))
        .ok_or_else(not_found)?;
    let mut args = Map::new();
    args.insert("agent".into(), Value::String(agent));
    args.insert("session".into(), Value::String(session));
    let text = match server.run("resume", args).await.ok_or_else(not_found)? {
        Ok(result) => result.structured_content.unwrap_or_default().to_string(),
        Err((code, message)) => {
            // The caller's mistake (a name no record can carry) is invalid params, as the tool
            // call says it with exit 64 or 65; anything else is the server's.
            let message = crate::face::ErrorBody::new(code, &message).message;
            return Err(match code {
                crate::face::EX_USAGE | crate::face::EX_DATAERR => {
                    ErrorData::invalid_params(message, None)
                }
                _ => ErrorData::internal_error(message, None),
            });
        }
    };
    let contents = ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some("application/json".into()),
        text,
        meta: None,
    };
    Ok(ReadResourceResult::new(vec![contents]).into())
}

/// One segment of the resource's path, percent-decoded (RFC 3986), as a client expands the
/// template (RFC 6570): `my%20session` is the session `my session`, `s%C3%A9` is `sé`. `None`
/// when an escape is malformed or the bytes are not UTF-8.
fn decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'%' {
            let hex = bytes.get(at + 1..at + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            at += 3;
        } else {
            out.push(byte);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The one prompt.
pub fn prompts() -> ListPromptsResult {
    let arg = |name: &str, what: &str| {
        let mut a = PromptArgument::new(name);
        a.description = Some(what.to_string());
        a.required = Some(true);
        a
    };
    ListPromptsResult::with_all_items(vec![Prompt::new(
        PROMPT,
        Some("Resume my work: find where this agent left the session, then continue from there"),
        Some(vec![
            arg("agent", "Your agent name, as you post checkpoints"),
            arg("session", "The session to resume"),
        ]),
    )])
}

/// `resume-my-work` with its arguments.
pub fn prompt(request: &GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    if request.name != PROMPT {
        return Err(ErrorData::invalid_params(
            format!("no prompt named {:?}; the prompt is {PROMPT}", request.name),
            None,
        ));
    }
    let get = |key: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("{PROMPT} needs the argument {key}"), None)
            })
    };
    let (agent, session) = (get("agent")?, get("session")?);
    let text = format!(
        "You are agent {agent:?} working on session {session:?}. First call the `resume` tool \
         with agent {agent:?} and session {session:?}. If `fresh_start` is true, start the task \
         from the beginning; otherwise continue from `resume_point` using `data`, and read \
         `next` and `blockers` (the handoff left by whoever worked before). After each step \
         that would be costly to redo, call `checkpoint` with the phase just completed, the \
         state needed to resume, and `next`/`blockers` for whoever picks the work up."
    );
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(format!("Resume {agent} in {session}"))
            .into(),
    )
}
