//! Judging one line for the line gate (`lines.rs`): hand it to rmcp, rewrite it (tool
//! arguments too deep for rmcp's parser become JSON text), or answer it here. Pure.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::face::top_level_id;

/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
pub(super) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's invalid params: the method exists, its params do not fit it.
const INVALID_PARAMS: i64 = -32602;
/// The deepest an argument may nest and still be handed to rmcp as JSON: the message, `params`
/// and `arguments` are three more levels, and serde_json stops at 128.
const ARGUMENT_DEPTH: usize = 124;

/// What to do with one line.
pub(super) enum Verdict {
    Skip,
    Forward(Vec<u8>),
    Answer(Value),
}

pub(super) fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub(super) fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Answer(error(
            top_level_id(line),
            PARSE_ERROR,
            "Parse error: the line is not UTF-8",
        ));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(message) => shape(message, text),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => deep(text),
        Err(e) => Verdict::Answer(error(
            top_level_id(line),
            PARSE_ERROR,
            &format!("Parse error: {e}"),
        )),
    }
}

/// A JSON message: is it a JSON-RPC 2.0 request, notification or response?
fn shape(message: Value, text: &str) -> Verdict {
    let Value::Object(map) = &message else {
        let why = match message.is_array() {
            true => "a batch (a JSON array); send one message per line",
            false => "not a JSON object",
        };
        return Verdict::Answer(error(
            Value::Null,
            INVALID_REQUEST,
            &format!("Invalid Request: {why}"),
        ));
    };
    let id = map.get("id").cloned();
    let id_ok = matches!(
        id,
        None | Some(Value::Null | Value::String(_) | Value::Number(_))
    );
    let shown_id = id.clone().filter(|_| id_ok).unwrap_or(Value::Null);
    let invalid = |why: &str| {
        Verdict::Answer(error(
            shown_id.clone(),
            INVALID_REQUEST,
            &format!("Invalid Request: {why}"),
        ))
    };
    if !id_ok {
        return invalid("`id` must be a string, a number or null");
    }
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    match map.get("method") {
        // rmcp answers these without the request's `id`, so the client never learns which
        // request failed: answer here, with the id.
        Some(Value::String(_)) if !matches!(map.get("params"), None | Some(Value::Object(_))) => {
            invalid("`params` must be an object")
        }
        Some(Value::String(_)) if id == Some(Value::Null) => {
            invalid("`id` must be a string or a number in a request (MCP)")
        }
        Some(Value::String(method)) if id.is_some() => {
            match bad_arguments(method, &message, text) {
                Some(why) => Verdict::Answer(error(shown_id, INVALID_PARAMS, &why)),
                None => Verdict::Forward(text.as_bytes().to_vec()),
            }
        }
        Some(Value::String(_)) => Verdict::Forward(text.as_bytes().to_vec()),
        Some(_) => invalid("`method` must be a string"),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => {
            Verdict::Forward(text.as_bytes().to_vec())
        }
        None => invalid("no `method` (nor a `result` or `error` answering a request)"),
    }
}

/// Why a `tools/call` or `prompts/get` request's `arguments` cannot be taken, if they cannot:
/// not an object (rmcp would answer -32601, "method not found", for a method that exists), or
/// a key given twice in one object inside them (serde_json would keep one value, silently).
fn bad_arguments(method: &str, message: &Value, text: &str) -> Option<String> {
    if !matches!(method, "tools/call" | "prompts/get") {
        return None;
    }
    let arguments = message.get("params").and_then(|p| p.get("arguments"));
    if let Some(other) = arguments.filter(|a| !a.is_object() && !a.is_null()) {
        let kind = match other {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            _ => "a boolean",
        };
        return Some(format!(
            "Invalid params: `arguments` must be an object, each argument by its name \
             ({{\"agent\": \"w\", ...}}), not {kind}"
        ));
    }
    let repeated = forgestate::verbs::input::repeated_key(text)?;
    let place = repeated
        .at
        .strip_prefix("params.arguments")
        .filter(|rest| rest.is_empty() || rest.starts_with('.'))?;
    let inside = forgestate::verbs::input::Repeated {
        key: repeated.key,
        at: place.trim_start_matches('.').to_string(),
    };
    Some(format!("Invalid params: {}", inside.describe("arguments")))
}

/// A message nested past what serde_json parses whole.
fn deep(text: &str) -> Verdict {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Call<'a> {
        name: String,
        #[serde(borrow, default)]
        arguments: BTreeMap<String, &'a RawValue>,
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    let Ok(head) = serde_json::from_str::<Head>(text) else {
        return Verdict::Answer(error(
            top_level_id(text.as_bytes()),
            INVALID_REQUEST,
            "Invalid Request: nested too deeply to read",
        ));
    };
    let id = head
        .id
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .unwrap_or(Value::Null);
    let call = match (head.method.as_deref(), head.params) {
        (Some("tools/call"), Some(params)) => serde_json::from_str::<Call>(params.get()).ok(),
        _ => None,
    };
    let Some(call) = call else {
        return Verdict::Answer(error(
            id,
            INVALID_REQUEST,
            "Invalid Request: nested deeper than 127 levels; only a tool's arguments may nest \
             that deep",
        ));
    };
    let mut arguments = serde_json::Map::new();
    for (key, raw) in call.arguments {
        if let Some(repeated) = forgestate::verbs::input::repeated_key(raw.get()) {
            let inside = forgestate::verbs::input::Repeated {
                at: match repeated.at.is_empty() || repeated.at.starts_with('[') {
                    true => format!("{key}{}", repeated.at),
                    false => format!("{key}.{}", repeated.at),
                },
                ..repeated
            };
            let why = format!("Invalid params: {}", inside.describe("arguments"));
            return Verdict::Answer(error(id, INVALID_PARAMS, &why));
        }
        let parsed = match depth(raw.get().as_bytes()) > ARGUMENT_DEPTH {
            true => None,
            false => serde_json::from_str(raw.get()).ok(),
        };
        // Too deep for rmcp: JSON text to a field taking an object's text (the verb parses it
        // as the CLI parses `--data`, with the same limit), refused for any other.
        let value = match parsed {
            Some(value) => value,
            None => match crate::face::deep::argument(&call.name, &key, raw.get()) {
                Ok(value) => value,
                Err(why) => {
                    return Verdict::Answer(error(
                        id,
                        INVALID_PARAMS,
                        &format!("Invalid params: {why}"),
                    ));
                }
            },
        };
        arguments.insert(key, value);
    }
    let mut params = json!({"name": call.name, "arguments": arguments});
    if let Some(meta) = call
        .meta
        .and_then(|m| serde_json::from_str::<Value>(m.get()).ok())
    {
        params["_meta"] = meta;
    }
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    Verdict::Forward(message.to_string().into_bytes())
}

/// The deepest nesting of arrays and objects in JSON text (strings skipped).
fn depth(text: &[u8]) -> usize {
    let (mut now, mut most, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                now += 1;
                most = most.max(now);
            }
            b']' | b'}' => now = now.saturating_sub(1),
            _ => {}
        }
    }
    most
}
