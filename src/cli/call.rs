//! `forgestate call`: the verbs as JSON for programs (the Python package's `Client`), run by the
//! same `verbs::call` as the MCP server's tools, so a request is the verb's request and an
//! answer its answer, with no flags in between.
//!
//! - `forgestate call VERB`: the request is one JSON object on stdin (nothing: `{}`); the answer
//!   is printed as one JSON document, a failure as the error document every `--json` command
//!   prints, with its exit code.
//! - `forgestate call --lines`: a long-lived child. The store is opened once; each stdin line is
//!   `{"verb": NAME, "args": {...}, "id": ANY}` (`args` and `id` optional) and gets one line on
//!   stdout: `{"answer": {...}}` or `{"error": {code, category, message, reason}}`, with the
//!   request's `id` when it had one. A line that is not such a request is answered with an
//!   error and the loop goes on; blank lines are skipped; end of input exits 0.
//!
//! Every verb the library runs is callable (not only those of the Python face). `--strict` works
//! as on the CLI: a save that spooled is an error (75) whose line also carries the answer.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::io::BufReader;

use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::report::StatusPolicy;
use forgestate::verbs::{self, Context};

use super::args::{CallArgs, Cli};
use super::errors::{ErrorBody, print_doc};
use super::failure::Failure;
use super::output;
use crate::face::line::{Line, MAX_LINE, read_line};
use crate::face::{EX_DATAERR, EX_IOERR, EX_TEMPFAIL, EX_USAGE, did_you_mean};

/// The opened store and the configured policies, or why there are none.
type Opened = Result<(Client<AnyThread>, StatusPolicy), Failure>;

/// The outcome of one request.
enum Reply {
    Answer(Value),
    /// A failure, and the answer when there is one (a save `--strict` refused).
    Failed(ErrorBody, Option<Value>),
}

pub async fn call(cli: &Cli, a: &CallArgs) -> Result<u8, Failure> {
    match (&a.verb, a.lines) {
        (Some(verb), false) => one(cli, verb).await,
        _ => Ok(lines(cli).await),
    }
}

/// `forgestate call VERB`: one request on stdin, one document on stdout.
async fn one(cli: &Cli, verb: &str) -> Result<u8, Failure> {
    let args = stdin_request(verb);
    let reply = match args {
        // A verb that opens no store (`parse`) reads no configuration either, as on the CLI.
        Ok(args) => match verbs::cli::alone(verb, args.clone()) {
            Some(Ok(answer)) => Reply::Answer(answer),
            Some(Err(e)) => Reply::Failed(ErrorBody::of(&e), None),
            None => run(cli, &super::open::store(cli, false), verb, args).await,
        },
        Err(body) => Reply::Failed(body, None),
    };
    Ok(match reply {
        Reply::Answer(answer) => {
            output::json(&answer);
            0
        }
        Reply::Failed(body, answer) => {
            let code = body.code;
            output::error(&body.message);
            match answer {
                Some(Value::Object(mut answer)) => {
                    answer.insert(
                        "error".into(),
                        serde_json::to_value(&body).unwrap_or_default(),
                    );
                    output::json_whole(&answer);
                }
                _ => print_doc(body),
            }
            code
        }
    })
}

/// The one request on stdin (nothing: `{}`), read as `--lines` reads a line: at most
/// [`MAX_LINE`] bytes, as UTF-8 (bad bytes are bad data, as the CLI says of `--data -`), and
/// arguments nested too deep to read as values handed on as [`crate::face::deep`] says.
fn stdin_request(verb: &str) -> Result<Value, ErrorBody> {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin()
        .take(MAX_LINE as u64 + 1)
        .read_to_end(&mut bytes)
    {
        let message = format!("cannot read the request on stdin (one JSON object, UTF-8): {e}");
        return Err(ErrorBody::new(EX_IOERR, &message));
    }
    if bytes.len() > MAX_LINE {
        let message = format!(
            "the request on stdin is over {} MiB; nothing in it was run",
            MAX_LINE >> 20
        );
        return Err(ErrorBody::new(EX_DATAERR, &message));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let message = format!(
            "stdin is not valid UTF-8 (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        );
        ErrorBody::new(EX_DATAERR, &message)
    })?;
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let not_json = |e: serde_json::Error| {
        usage(&format!(
            "the request on stdin is not JSON ({e}); send the arguments of {verb} as one JSON \
             object, e.g. {{\"agent\": \"worker\", \"session\": \"s1\"}}"
        ))
    };
    let args = match serde_json::from_str::<Value>(&text) {
        Ok(args) => args,
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => raw_args(verb, &text)
            .ok_or_else(|| not_json(e))?
            .map_err(|message| usage(&message))?,
        Err(e) => return Err(not_json(e)),
    };
    match verbs::input::repeated_key(&text) {
        Some(r) => Err(usage(&r.describe("the request"))),
        None => Ok(args),
    }
}

/// `forgestate call --lines`: requests until the end of input; the exit code.
async fn lines(cli: &Cli) -> u8 {
    let opened = super::open::store(cli, true);
    if let Err(Failure { message, .. }) = &opened {
        // Said once here; every request is then answered with it (as `forgestate mcp` does).
        output::error(message);
    }
    let mut input = BufReader::new(tokio::io::stdin());
    loop {
        let line = match read_line(&mut input, MAX_LINE).await {
            Ok(Some(line)) => line,
            Ok(None) => return 0,
            Err(e) => {
                output::error(&format!("cannot read the requests on stdin: {e}"));
                return EX_IOERR;
            }
        };
        match line {
            Line::Oversized { .. } => {
                let message = format!(
                    "the request line is over {} MiB; nothing in it was run",
                    MAX_LINE >> 20
                );
                answer_line(
                    None,
                    Reply::Failed(ErrorBody::new(EX_DATAERR, &message), None),
                );
            }
            Line::Whole(line) if !line.iter().all(u8::is_ascii_whitespace) => {
                let (id, reply) = match request(&line) {
                    Ok((id, verb, args)) => (id, run(cli, &opened, &verb, args).await),
                    Err((id, body)) => (id, Reply::Failed(body, None)),
                };
                answer_line(id, reply);
            }
            Line::Whole(_) => {}
        }
        if output::write_failed().is_some() {
            return EX_IOERR;
        }
    }
}

/// Prints one answer line: `{"id", "answer"}` or `{"id", "error", "answer"}`.
fn answer_line(id: Option<Value>, reply: Reply) {
    let mut doc = Map::new();
    if let Some(id) = id {
        doc.insert("id".into(), id);
    }
    match reply {
        Reply::Answer(answer) => {
            doc.insert("answer".into(), answer);
        }
        Reply::Failed(body, answer) => {
            doc.insert(
                "error".into(),
                serde_json::to_value(&body).unwrap_or_default(),
            );
            if let Some(answer) = answer {
                doc.insert("answer".into(), answer);
            }
        }
    }
    output::json_line(&Value::Object(doc));
}

/// A request line read: its `id`, verb and arguments; or its `id` and why it is not a request.
#[allow(clippy::type_complexity)]
fn request(line: &[u8]) -> Result<(Option<Value>, String, Value), (Option<Value>, ErrorBody)> {
    const SHAPE: &str = "send one JSON object per line: {\"verb\": \"resume\", \"args\": \
                         {\"agent\": \"worker\", \"session\": \"s1\"}}";
    let not_json = |e: serde_json::Error| {
        let message = format!("the request line is not JSON ({e}); {SHAPE}");
        (salvaged_id(line), usage(&message))
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => deep(line)
            .ok_or_else(|| not_json(e))?
            .map_err(|message| (salvaged_id(line), usage(&message)))?,
        Err(e) => return Err(not_json(e)),
    };
    let Value::Object(mut map) = value else {
        return Err((
            None,
            usage(&format!("the request line is not an object; {SHAPE}")),
        ));
    };
    let id = map.remove("id");
    if let Some(r) = std::str::from_utf8(line)
        .ok()
        .and_then(verbs::input::repeated_key)
    {
        let body = usage(&r.describe("the request line"));
        return Err((id, body));
    }
    let fail = |message: String| Err((id.clone(), usage(&message)));
    if let Some(key) = map.keys().find(|k| !matches!(k.as_str(), "verb" | "args")) {
        return fail(format!(
            "the request line has an unknown key {key:?}; a request has \"verb\", \"args\" and \
             \"id\" only"
        ));
    }
    let verb = match map.remove("verb") {
        Some(Value::String(verb)) => verb,
        Some(_) => {
            return fail(format!(
                "\"verb\" must be a verb's name (a string); {SHAPE}"
            ));
        }
        None => return fail(format!("the request line names no \"verb\"; {SHAPE}")),
    };
    let args = match map.remove("args") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(_) => {
            return fail(format!(
                "the \"args\" of {verb} must be a JSON object of its request's fields \
                 (`forgestate schema` lists them)"
            ));
        }
    };
    Ok((id, verb, args))
}

/// The `id` of a line that is not JSON (bad bytes, cut short), when it is a plain value before
/// the damage, so the caller can still match the answer to its request (as MCP does).
fn salvaged_id(line: &[u8]) -> Option<Value> {
    Some(crate::face::top_level_id(line)).filter(|id| !id.is_null())
}

/// A request line nested past serde_json's 128 levels, read level by level: its arguments as
/// [`raw_args`] reads them; `Err` with the usage message of an argument no verb can take.
fn deep(line: &[u8]) -> Option<Result<Value, String>> {
    let fields = fields(std::str::from_utf8(line).ok()?)?;
    let verb = fields
        .get("verb")
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
        .unwrap_or_default();
    let mut map = Map::new();
    for (key, raw) in fields {
        let value = match (key.as_str(), serde_json::from_str::<Value>(raw.get())) {
            (_, Ok(value)) => value,
            ("args", Err(_)) => match raw_args(&verb, raw.get())? {
                Ok(args) => args,
                Err(message) => return Some(Err(message)),
            },
            (_, Err(_)) => return None,
        };
        map.insert(key, value);
    }
    Some(Ok(Value::Object(map)))
}

/// A request's arguments nested past serde_json's 128 levels: each argument too deep to read as
/// a value, or holding a key twice, is handed on as [`crate::face::deep::argument`] says (JSON
/// text to a field taking an object's text, which the verb parses as the CLI parses `--data`,
/// with that flag's limit and errors, as the MCP server hands on a tool's arguments).
fn raw_args(verb: &str, text: &str) -> Option<Result<Value, String>> {
    let mut map = Map::new();
    for (key, raw) in fields(text)? {
        let value = match serde_json::from_str(raw.get()) {
            Ok(value) if verbs::input::repeated_key(raw.get()).is_none() => value,
            _ => match crate::face::deep::argument(verb, &key, raw.get()) {
                Ok(value) => value,
                Err(message) => return Some(Err(message)),
            },
        };
        map.insert(key, value);
    }
    Some(Ok(Value::Object(map)))
}

fn fields(text: &str) -> Option<BTreeMap<String, &RawValue>> {
    serde_json::from_str(text).ok()
}

async fn run(cli: &Cli, opened: &Opened, verb: &str, args: Value) -> Reply {
    let Some(spec) = verbs::spec(verb) else {
        return Reply::Failed(unknown(verb), None);
    };
    if !args.is_object() {
        let message = format!("the arguments of {verb} must be a JSON object");
        return Reply::Failed(usage(&message), None);
    }
    let (client, policy) = match opened {
        Ok((client, policy)) => (client, policy),
        Err(f) => return Reply::Failed(ErrorBody::new(f.code, &f.message), None),
    };
    let ctx = Context { client, policy };
    match verbs::call(&ctx, spec.name, args).await {
        None => Reply::Failed(
            usage(&format!(
                "`forgestate call` cannot run {verb}: the library does not run it (yet); run \
                 `forgestate --json {verb}` instead"
            )),
            None,
        ),
        Some(Err(e)) => Reply::Failed(ErrorBody::of(&e), None),
        Some(Ok(answer)) => {
            // Scrubbed where it is printed (`output::json`, `output::json_line`).
            match spooled(&answer).filter(|_| cli.strict) {
                Some(message) => Reply::Failed(ErrorBody::new(EX_TEMPFAIL, &message), Some(answer)),
                None => Reply::Answer(answer),
            }
        }
    }
}

/// What `--strict` says of a save that waits in the outbox, if `answer` is one (as the CLI).
fn spooled(answer: &Value) -> Option<String> {
    let waits = answer.get("posted") == Some(&Value::Bool(false))
        && answer.get("spooled").is_some_and(|s| !s.is_null());
    let kind = answer["record"]["kind"].as_str().unwrap_or("record");
    waits.then(|| verbs::spooled_strict(kind, answer["id"].as_str()))
}

fn usage(message: &str) -> ErrorBody {
    ErrorBody::new(EX_USAGE, message)
}

/// No verb of that name: the closest names, as the CLI says of a mistyped verb.
fn unknown(verb: &str) -> ErrorBody {
    let table = verbs::table();
    let names: Vec<&str> = table.iter().map(|s| s.name).collect();
    let shown: String = verb.chars().take(40).collect();
    let hint = did_you_mean(
        verb,
        &names,
        |n| format!("{n:?}"),
        "`forgestate schema` lists the verbs",
    );
    usage(&format!("no verb named {shown:?}; {hint}"))
}
