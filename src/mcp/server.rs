//! The MCP tools: one method per tool over one long-lived [`Client`], so the configuration, the
//! forge connection and its caches (the session issue, the read cache) stay warm across calls.
//! Adding a tool is one `#[tool]` method here, its input type in `params.rs` and its result in
//! `reply.rs`.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::Value;

use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::report::{StatusPolicy, Thresholds};
use forgestate::resume::glob_matches;
use forgestate::scan::{Filter, Scan};
use forgestate::{Client, Error};

use super::params::{
    CheckpointParams, FilterParams, HealthParams, LatestParams, ListParams, ResumeParams,
    StatusParams,
};
use super::reply;
use crate::cli::args::DEFAULT_STATUS;
use crate::cli::input::{self, InputError};

/// What the server tells the model when it connects.
const INSTRUCTIONS: &str = "forgestate keeps an agent's progress as [CHECKPOINT] and [HEALTH] \
records in one session thread (a Forgejo/Gitea issue, or a local store), so work survives a \
crash, a restart or a handoff. At the start of a task call `resume` with your agent name and \
session id; after each step that would be costly to redo call `checkpoint`; long-running \
supervisors call `health` now and then. `latest` and `list` read what any agent recorded. A \
record the forge cannot take right now is kept in this machine's outbox and posted later: that \
is not an error.";

const CHECKPOINT: &str = "Save a checkpoint: the phase an agent just completed and the state it \
needs to resume (a JSON object of issue numbers, branch names, completed subtasks, paths). Call \
it after each step that would be costly to redo, e.g. phase \"clone_complete\" with \
{\"issue_number\": 42, \"branch_name\": \"fix-42\"}. Secrets in the data are redacted. Returns \
the record id and where it was stored; `posted: false` means it waits in this machine's outbox \
and will be posted later (not an error).";

const HEALTH: &str = "Post a health signal: the agent is alive, its status in a word (default \
\"Active\"), metrics as a JSON object, and when the next signal is due. Call it periodically \
from long-running loops so supervisors can tell a stalled agent from a busy one. Returns the \
record id and where it was stored.";

const RESUME: &str = "Find where an agent should pick up a session. Call it first when \
(re)starting work. Returns `resume_point` (the step to continue from), the last checkpoint's \
`phase` and its whole `data`, its `record_id`, and flags: `fresh_start` (no checkpoint yet: \
start from the beginning), `pending` (the checkpoint is still in this machine's outbox), \
`offline` (the forge could not be read, the answer comes from the outbox). Agent and session \
match exactly.";

const LATEST: &str = "Return the newest record matching the filters (agent and session globs \
such as \"implementation-*\", kind checkpoint or health, phase glob), in thread order. Use it to \
see what another agent did last. Returns `record` (null when none matches).";

const LIST: &str = "List records matching the filters (agent and session globs, kind, phase \
glob, since a time or an age such as \"24h\"), oldest first; `limit` keeps only the newest N. \
Use it to review a session's history. Returns `records`, and with `invalid: true` also the \
comments that are not valid, trusted records, with the reason.";

const STATUS: &str = "Who is alive and who has stalled: one row per (agent, session) with its \
verdict (alive, warning, stalled, paused, completed), the age of its newest record on the \
store's clock, its last phase and resume point, its last health status and metrics, its next \
step and blockers. Call it as a supervisor before deciding which agent to restart or unblock. \
`agent` and `session` are globs; `warn_after_secs`/`stalled_after_secs` override the configured \
thresholds (default 600 and 1800). Returns `rows` (stalled first), `stalled` (how many), \
`offline` and `warnings`.";

/// The MCP server: the tools over one client.
#[derive(Clone)]
pub struct Server {
    /// The store, or why it could not be opened (exit code and message).
    client: Arc<Result<Client<AnyThread>, (u8, String)>>,
    /// The configured `[status]` thresholds and final resume points.
    policy: Arc<StatusPolicy>,
    tool_router: ToolRouter<Server>,
}

#[tool_router]
impl Server {
    /// A server over `client`, kept for the whole session.
    pub fn new(client: Result<Client<AnyThread>, (u8, String)>, policy: StatusPolicy) -> Server {
        Server {
            client: Arc::new(client),
            policy: Arc::new(policy),
            tool_router: Self::tool_router(),
        }
    }

    /// The client, or the failure every call answers with when there is none.
    fn client(&self) -> Result<&Client<AnyThread>, CallToolResult> {
        self.client
            .as_ref()
            .as_ref()
            .map_err(|(code, message)| reply::failure(*code, message))
    }

    #[tool(description = CHECKPOINT)]
    async fn checkpoint(&self, Parameters(p): Parameters<CheckpointParams>) -> CallToolResult {
        settle(async {
            let client = self.client()?;
            let data = object("data", p.data)?;
            let record = Record::checkpoint(&p.agent, &p.session, &p.phase, data)
                .and_then(|r| r.with_handoff(p.next, p.blockers))
                .map_err(built)?;
            let outcome = client.save(record).await;
            let warnings = rotated(client).await;
            Ok(reply::saved(outcome, warnings))
        })
        .await
    }

    #[tool(description = HEALTH)]
    async fn health(&self, Parameters(p): Parameters<HealthParams>) -> CallToolResult {
        settle(async {
            let client = self.client()?;
            let metrics = object("metrics", p.metrics)?;
            let status = p.status.as_deref().unwrap_or(DEFAULT_STATUS);
            let record = Record::health(
                &p.agent,
                &p.session,
                status,
                metrics,
                p.next_check.as_deref(),
            )
            .map_err(built)?;
            let outcome = client.save(record).await;
            let warnings = rotated(client).await;
            Ok(reply::saved(outcome, warnings))
        })
        .await
    }

    #[tool(description = RESUME)]
    async fn resume(&self, Parameters(p): Parameters<ResumeParams>) -> CallToolResult {
        settle(async {
            let answer = self.client()?.resume(&p.agent, &p.session).await;
            let answer = answer.map_err(|e| reply::error(&e))?;
            Ok(reply::resumed(
                &answer.resume,
                &p.agent,
                &p.session,
                answer.warnings,
            ))
        })
        .await
    }

    #[tool(description = LATEST)]
    async fn latest(&self, Parameters(p): Parameters<LatestParams>) -> CallToolResult {
        settle(async {
            let client = self.client()?;
            let filter = filter(&p.filter, None)?;
            let answer = match &p.filter.phase {
                // A phase filter reads the list and takes its newest entry.
                Some(phase) => client
                    .list(&filter, None)
                    .await
                    .map(|scan| (by_phase(scan, phase).entries.pop(), Vec::new())),
                None => client.latest(&filter).await.map(|l| (l.entry, l.warnings)),
            };
            let (entry, warnings) = answer.map_err(|e| reply::error(&e))?;
            Ok(reply::latest(entry.as_ref(), warnings))
        })
        .await
    }

    #[tool(description = LIST)]
    async fn list(&self, Parameters(p): Parameters<ListParams>) -> CallToolResult {
        settle(async {
            let client = self.client()?;
            let since = p.since.as_deref().map(input::parse_since).transpose();
            let filter = filter(&p.filter, since.map_err(input_failure)?)?;
            // With a phase filter, the limit counts only the records that pass it.
            let limit = p.limit.filter(|_| p.filter.phase.is_none());
            let scan = client.list(&filter, limit).await;
            let mut scan = scan.map_err(|e| reply::error(&e))?;
            if let Some(phase) = &p.filter.phase {
                scan = by_phase(scan, phase);
            }
            if let Some(limit) = p.limit {
                let skip = scan.entries.len().saturating_sub(limit);
                scan.entries.drain(..skip);
            }
            Ok(reply::list(&scan, p.invalid))
        })
        .await
    }

    #[tool(description = STATUS)]
    async fn status(&self, Parameters(p): Parameters<StatusParams>) -> CallToolResult {
        settle(async {
            let client = self.client()?;
            for (name, value) in [("agent", &p.agent), ("session", &p.session)] {
                input::check_glob(name, value.as_deref()).map_err(input_failure)?;
            }
            let policy = self.policy.as_ref().clone().force(Thresholds {
                warn_after_secs: p.warn_after_secs,
                stalled_after_secs: p.stalled_after_secs,
            });
            let filter = Filter {
                agent: p.agent,
                session: p.session,
                ..Filter::default()
            };
            let answer = client.status(&filter, &policy).await;
            Ok(reply::status(&answer.map_err(|e| reply::error(&e))?))
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("forgestate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// A tool's answer, whichever way it went: the `Err` side is already a tool result (`isError`).
async fn settle(
    answer: impl Future<Output = Result<CallToolResult, CallToolResult>>,
) -> CallToolResult {
    answer.await.unwrap_or_else(|failure| failure)
}

/// After a save: rotate the session issue when it is over `rotate_after`, as the CLI does. The
/// record is already safe, so the rotation's outcome is only ever a warning.
async fn rotated(client: &Client<AnyThread>) -> Vec<String> {
    match client.rotate_if_due().await {
        Ok(Some(r)) => vec![format!(
            "the session issue was over its comment limit and was rotated ({} record(s) carried)",
            r.carried
        )],
        Ok(None) => Vec::new(),
        Err(e) => vec![format!(
            "the session issue is over its comment limit and rotating it failed: {e}; a later \
             record tries again, or run `forgestate rotate`"
        )],
    }
}

/// A record that could not be built, as a tool failure.
fn built(e: forgestate::format::BuildError) -> CallToolResult {
    reply::error(&Error::from(e))
}

/// The library's filter from the tool's, with the CLI's glob check.
fn filter(
    f: &FilterParams,
    since: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<Filter, CallToolResult> {
    for (name, value) in [
        ("agent", &f.agent),
        ("session", &f.session),
        ("phase", &f.phase),
    ] {
        input::check_glob(name, value.as_deref()).map_err(input_failure)?;
    }
    Ok(Filter {
        agent: f.agent.clone(),
        session: f.session.clone(),
        kind: f.kind.map(Into::into),
        since,
    })
}

/// Keeps the records whose phase matches `phase` (a glob); health records have none.
fn by_phase(mut scan: Scan, phase: &str) -> Scan {
    scan.entries
        .retain(|e| e.record.phase().is_some_and(|p| glob_matches(phase, p)));
    scan
}

/// A JSON object argument, or the CLI's message for one that is not. Some clients send nested
/// objects as JSON text: a string is parsed as the CLI parses `--data`.
fn object(what: &str, value: Value) -> Result<Value, CallToolResult> {
    match value {
        Value::String(text) => input::json_object(what, Some(text)),
        value => input::object(what, value),
    }
    .map(Value::Object)
    .map_err(input_failure)
}

/// An argument the caller must fix, with the CLI's exit code for it as the error's code.
fn input_failure(e: InputError) -> CallToolResult {
    let (code, message) = match e {
        InputError::Usage(m) => (64, m),
        InputError::Data(m) => (65, m),
        InputError::Io(m) => (74, m),
    };
    reply::failure(code, &message)
}
