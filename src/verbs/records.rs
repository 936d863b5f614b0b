//! The verbs that write a record: `checkpoint`, `health` and `fork`, all answered by
//! [`SaveAnswer`] (posted, or safe in the outbox, and any automatic rotation).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Context, Run, Spec, Verb, answer_schema, input, request_schema};
use crate::error::Result;
use crate::format::Record;
use crate::{ForkQuery, Outcome, Rotation, Write};

use super::session::with_intent;

/// The status a health signal reports when none is given.
pub const DEFAULT_STATUS: &str = "Active";

/// `checkpoint`: where an agent got to, and the state it needs to resume.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct CheckpointRequest {
    /// The agent posting the checkpoint, e.g. "implementation-worker". Use the same name every
    /// time: `resume` finds checkpoints by it.
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// The session (one run of work, e.g. "sess-42") the checkpoint belongs to.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// The phase just completed, e.g. "clone_complete" or "subtask_3_complete". The resume map
    /// turns it into a resume point.
    #[cfg_attr(feature = "cli", arg(long))]
    pub phase: String,
    /// The state needed to resume, as a JSON object (issue numbers, branch names, completed
    /// subtasks, file paths; never file contents or secrets, which are redacted). JSON text of an
    /// object is accepted too.
    #[serde(default = "empty")]
    #[schemars(with = "Map<String, Value>")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub data: Value,
    /// What should happen next, in one line, for whoever picks the work up.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub next: Option<String>,
    /// What blocks progress, one line each.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "blocker", value_name = "TEXT"))]
    pub blockers: Vec<String>,
    /// The status document the agent works from (e.g. STATUS.md): its hash is recorded, so a later
    /// `resume` with the same file says whether it changed since.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub context_file: Option<PathBuf>,
    /// The record's id, instead of a fresh one: a UUID another system already gave this step
    /// (a LangGraph checkpoint id, say), so the two name it alike. It must be new to the thread:
    /// readers keep the first record of an id and skip later ones.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "UUID"))]
    pub id: Option<String>,
    /// A write-ahead intent: the side effect about to happen (e.g. "create_pr"), recorded
    /// before doing it. `resume` reports it as `pending_intent` until a later checkpoint.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub intent: Option<String>,
    /// What the intent needs to check the world later (e.g. {"branch": "fix-42"}): any JSON.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "JSON", requires = "intent", value_parser = input::json_flag))]
    pub intent_data: Option<Value>,
    /// Confirms this intent explicitly (any later checkpoint confirms an earlier intent).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub done: Option<String>,
    /// Compare-and-set: post only if the newest record of this agent and session is this record
    /// id (e.g. resume's `latest_id`); otherwise nothing is posted and the call fails with a
    /// conflict naming the newer record.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    pub if_latest: Option<String>,
    /// Start from the session's newest checkpoint data and lay `data` on top (top-level keys
    /// replace); without it the checkpoint is a complete snapshot.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub merge: bool,
    /// The record this one continues from (its `Parent:`). Default: the newest record of this
    /// agent and session the writer knows (its last write, or what `resume` returned).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    pub parent: Option<String>,
    /// Write as this writer (its `Writer:` line) instead of this client's own: the one a
    /// supervisor took the session over for (`resume` with `take_over` and `writer`).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub writer: Option<String>,
    /// Read the session first (one request) and post nothing when another writer took it
    /// over: the call fails with exit 73, naming the takeover. Without it a fenced writer's
    /// checkpoint is still posted, and every reader ignores it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub check_owner: bool,
}

/// `forgestate checkpoint`'s flags: the request's, and the command line's ways to give `data`
/// (inline or `-` for stdin, a file, and keys laid on top), which the CLI reads into it.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, clap::Args)]
pub struct CheckpointFlags {
    /// The request (its `data` is read from the flags below).
    #[command(flatten)]
    pub request: CheckpointRequest,
    /// State data as a JSON object, or - to read it from stdin
    #[arg(long, value_name = "JSON", conflicts_with = "data_file")]
    pub data: Option<String>,
    /// Read the state data from a JSON file
    #[arg(long, value_name = "FILE")]
    pub data_file: Option<PathBuf>,
    /// Set one key of the data; VALUE is parsed as JSON when it can be, else taken as a string
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// `health`: a liveness signal with metrics.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct HealthRequest {
    /// The agent signalling, e.g. "implementation-orchestrator".
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// The session the signal belongs to.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// The agent's status in one word or a short phrase.
    #[serde(default = "default_status")]
    #[cfg_attr(feature = "cli", arg(long, default_value = DEFAULT_STATUS))]
    pub status: Option<String>,
    /// Metrics as a JSON object, e.g. {"active_workers": 3}. JSON text of an object is accepted
    /// too.
    #[serde(default = "empty")]
    #[schemars(with = "Map<String, Value>")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub metrics: Value,
    /// When the next signal is due, in words, e.g. "in 10 iterations".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub next_check: Option<String>,
}

/// `forgestate health`'s flags: the request's, and `--metrics` as typed (inline, or `-` for
/// stdin), which the CLI reads into the request.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, clap::Args)]
pub struct HealthFlags {
    /// The request (its `metrics` is read from `--metrics`).
    #[command(flatten)]
    pub request: HealthRequest,
    /// Metrics as a JSON object, or - to read them from stdin
    #[arg(long, value_name = "JSON")]
    pub metrics: Option<String>,
}

/// `status` when the request leaves it out (the schema publishes it; the CLI's flag defaults to
/// it).
fn default_status() -> Option<String> {
    Some(DEFAULT_STATUS.to_string())
}

/// `fork`: a new session started from a checkpoint of another one.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    /// The session to fork, exactly.
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// The record id of the checkpoint whose state to fork. Default: the session's newest
    /// checkpoint.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "RECORD_ID"))]
    pub at: Option<String>,
    /// The new session's name.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SESSION"))]
    pub new_session: String,
    /// Fork this agent's checkpoint (needed when several agents checkpoint the session).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: Option<String>,
    /// Fork into `new_session` even though it already has records (refused otherwise): its agent
    /// then resumes from the forked state, and the new record's `next` names the record it
    /// replaced.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub force: bool,
}

/// What `checkpoint`, `health` and `fork` answer: posted, or safe in this machine's outbox (not an
/// error).
#[derive(Debug, Serialize, JsonSchema)]
pub struct SaveAnswer {
    /// In the thread now (false: waiting in this machine's outbox, posted by a later call or
    /// `forgestate flush`).
    pub posted: bool,
    /// The record's id.
    pub id: Option<String>,
    /// The store's comment id, once posted.
    pub comment_id: Option<u64>,
    /// The comment's web address, where the store has one.
    pub url: Option<String>,
    /// The store the record went to.
    pub store: Option<String>,
    /// The outbox entry holding the record, when it was spooled.
    pub spooled: Option<PathBuf>,
    /// Why it was spooled.
    pub cause: Option<String>,
    /// Retrying cannot post it: the cause must be fixed first (then `forgestate flush`).
    pub permanent: bool,
    /// The record as stored (after redaction).
    pub record: Record,
    /// The automatic rotation this save triggered: the session issue was over its comment limit and
    /// was replaced by a new one carrying each session's newest records.
    pub rotation: Option<Rotation>,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

impl SaveAnswer {
    /// The answer of a save through `client`: [`SaveAnswer::new`], and for a spooled record a
    /// warning saying where it waits and how many records wait with it, so an agent that stops
    /// now leaves no silent backlog (every face shows the same warning).
    pub fn saved<T: crate::store::Thread>(
        client: &crate::Client<T>,
        outcome: Outcome,
    ) -> Result<SaveAnswer> {
        let mut answer = SaveAnswer::new(outcome)?;
        if let (Some(path), Some(cause)) = (&answer.spooled, &answer.cause) {
            let waiting = client.outbox().map_or(1, |o| o.len().max(1));
            let redacted = answer
                .record
                .redacted
                .map(|n| format!(" ({n} secret value(s) redacted)"))
                .unwrap_or_default();
            answer.warnings.push(format!(
                "{} {} spooled to {} ({cause}){redacted}; {waiting} record(s) wait in the \
                 outbox: run `forgestate flush` to post them (the next forgestate command also \
                 tries)",
                answer.record.kind().name(),
                answer.id.as_deref().unwrap_or("(no id)"),
                path.display(),
            ));
        }
        Ok(answer)
    }

    /// The answer for `outcome`, or the error of a record stored nowhere.
    pub fn new(outcome: Outcome) -> Result<SaveAnswer> {
        match outcome {
            Outcome::Posted(p) => {
                let mut warnings = Vec::new();
                if let Some(e) = &p.rotation_failed {
                    warnings.push(format!(
                        "the session issue is over its comment limit and rotating it failed: \
                         {e}; a later record tries again, or run `forgestate rotate`"
                    ));
                }
                if let Some(e) = &p.dashboard_failed {
                    warnings.push(format!(
                        "refreshing the status table in the session issue's body failed: {e}; \
                         the record is posted (run `forgestate status --publish`)"
                    ));
                }
                if let Some(r) = &p.rotation {
                    warnings.extend(r.skipped.iter().map(|why| {
                        format!(
                            "not carried ({why}); it stays readable through the link to session \
                             issue #{}",
                            r.from
                        )
                    }));
                }
                Ok(SaveAnswer {
                    posted: true,
                    id: p.id,
                    comment_id: Some(p.comment_id),
                    url: p.url,
                    store: Some(p.store),
                    spooled: None,
                    cause: None,
                    permanent: false,
                    record: p.record,
                    rotation: p.rotation,
                    warnings,
                })
            }
            Outcome::Spooled {
                record,
                path,
                cause,
            } => {
                let permanent = !cause.retry_may_fix();
                let warnings = match permanent {
                    true => vec![format!(
                        "{cause}; fix this, then run `forgestate flush`: flushing cannot succeed \
                         until it is fixed"
                    )],
                    false => Vec::new(),
                };
                Ok(SaveAnswer {
                    posted: false,
                    id: record.id.clone(),
                    comment_id: None,
                    url: None,
                    store: None,
                    spooled: Some(path),
                    cause: Some(cause.to_string()),
                    permanent,
                    record,
                    rotation: None,
                    warnings,
                })
            }
            Outcome::Failed(e) => Err(e),
        }
    }
}

fn empty() -> Value {
    Value::Object(Map::new())
}

/// Checkpoint.
pub struct Checkpoint;

impl Verb for Checkpoint {
    type Request = CheckpointRequest;
    type Answer = SaveAnswer;
    const SPEC: Spec = Spec {
        name: "checkpoint",
        title: "Save a checkpoint",
        description: "Save a checkpoint: the phase an agent just completed and the state it needs \
            to resume (a JSON object of issue numbers, branch names, completed subtasks, paths), \
            with optional handoff lines (`next`, `blockers`) for whoever picks the work up. Call \
            it after each step that would be costly to redo, e.g. phase \"clone_complete\" with \
            {\"issue_number\": 42, \"branch_name\": \"fix-42\"}. Before a side effect that \
            must not happen twice (creating a pull request), checkpoint with `intent` (and \
            `intent_data`): `resume` reports it as `pending_intent` until a later checkpoint \
            confirms it, so check whether it happened before redoing it. `if_latest` refuses \
            the write (a conflict, nothing posted) when someone else continued the session \
            first; `merge` keeps the keys of the previous checkpoint that `data` does not set. \
            Secrets in the data are redacted. Returns the record id and where it was stored; \
            `posted: false` means it waits in this machine's outbox and will be posted later \
            (not an error).",
        flags: &[("blockers", "blocker")],
        example: r#"{"agent": "w", "session": "s1", "phase": "clone_complete", "data": {"issue": 42}, "next": "open the PR", "blockers": ["CI is red"]}"#,
        summary: super::summary::saved,
        about: "Post a [CHECKPOINT] record: where an agent got to, and the state it needs to resume",
        examples: "  forgestate checkpoint --agent worker --session s1 --phase clone_complete --set issue_number=42
  forgestate checkpoint --agent worker --session s1 --phase pr_created --merge --set pr=7
  forgestate checkpoint --agent worker --session s1 --phase tests_pass --intent create_pr",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_WRITE
    };
}

impl Run for Checkpoint {
    async fn run(ctx: &Context<'_>, r: CheckpointRequest) -> Result<SaveAnswer> {
        let data = input::object_or_text("data", r.data)?;
        let context = r
            .context_file
            .as_deref()
            .map(|p| input::context_file("context_file", p))
            .transpose()?;
        let mut record = Record::checkpoint(&r.agent, &r.session, &r.phase, Value::Object(data))
            .and_then(|rec| rec.with_handoff(r.next, r.blockers))?;
        if let Some(id) = r.id {
            record.id = Some(input::record_id("id", id)?);
        }
        if let Some(bytes) = &context {
            record = record.with_context(bytes);
        }
        let record = with_intent(record, r.intent, r.intent_data, r.done, "intent_data")?
            .with_writer(r.writer);
        let write = Write {
            if_latest: r.if_latest,
            merge: r.merge,
            parent: r.parent,
            check_owner: r.check_owner || ctx.client.checks_owner(),
        };
        SaveAnswer::saved(ctx.client, ctx.client.save_as(record, write).await)
    }
}

/// Health.
pub struct Health;

impl Verb for Health {
    type Request = HealthRequest;
    type Answer = SaveAnswer;
    const SPEC: Spec = Spec {
        name: "health",
        title: "Post a health signal",
        description: "Post a health signal: the agent is alive, its status in a word (default \
            \"Active\"), metrics as a JSON object, and when the next signal is due. Call it \
            periodically from long-running loops so supervisors can tell a stalled agent from a \
            busy one. Returns the record id and where it was stored; `posted: false` means it \
            waits in this machine's outbox (not an error).",
        example: r#"{"agent": "w", "session": "s1", "status": "Busy", "metrics": {"workers": 3}}"#,
        summary: super::summary::saved,
        about: "Post a [HEALTH] record: a liveness signal with metrics",
        examples: "  forgestate health --agent implementation-orchestrator --session s1
  forgestate health --agent orchestrator --session s1 --metrics '{\"workers\": 3}' --next-check soon
  forgestate health --agent implementation-orchestrator --session s1 --status Degraded --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_WRITE
    };
}

impl Run for Health {
    async fn run(ctx: &Context<'_>, r: HealthRequest) -> Result<SaveAnswer> {
        let metrics = input::object_or_text("metrics", r.metrics)?;
        let status = r.status.as_deref().unwrap_or(DEFAULT_STATUS);
        let record = Record::health(
            &r.agent,
            &r.session,
            status,
            Value::Object(metrics),
            r.next_check.as_deref(),
        )?;
        SaveAnswer::saved(
            ctx.client,
            ctx.client.save_as(record, Write::default()).await,
        )
    }
}

/// Fork.
pub struct Fork;

impl Verb for Fork {
    type Request = ForkRequest;
    type Answer = SaveAnswer;
    const SPEC: Spec = Spec {
        name: "fork",
        title: "Fork a session",
        description: "Start a new session from the state of a checkpoint of another one: the new \
            session's first checkpoint copies that checkpoint's phase and data, and its `Parent:` \
            names the record it came from. Use it to retry a session from a known-good point, or \
            to branch off an alternative approach without disturbing the original. `at` picks \
            the record (default: the session's newest checkpoint); `agent` picks whose \
            checkpoint when several agents work in the session. Returns the new checkpoint as \
            `checkpoint` does.",
        reads_thread: true,
        example: r#"{"session": "s1", "new_session": "s2", "force": true}"#,
        summary: super::summary::saved,
        about: "Start a new session from the state of a checkpoint of another one (Parent: names it)",
        examples: "  forgestate fork --session s1 --new-session s1-retry
  forgestate fork --session s1 --at 0192f000-0000-7000-8000-000000000002 --new-session s1-b
  forgestate fork --session s1 --agent implementation-worker --new-session s2 --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_WRITE
    };
}

impl Run for Fork {
    async fn run(ctx: &Context<'_>, r: ForkRequest) -> Result<SaveAnswer> {
        let record = ctx
            .client
            .fork_record(&ForkQuery {
                session: r.session,
                at: r.at,
                new_session: r.new_session,
                agent: r.agent,
                force: r.force,
            })
            .await?;
        SaveAnswer::saved(ctx.client, ctx.client.save(record).await)
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Checkpoint {
    type Flags = CheckpointFlags;

    /// The request, its `data` read from `--data` (inline or `-`), `--data-file` and `--set`.
    fn request(flags: &CheckpointFlags) -> Result<CheckpointRequest> {
        let text = input::read_text(flags.data.as_deref(), flags.data_file.as_deref())?;
        let mut data = match text {
            Some(text) => input::json_object("--data", &text)?,
            None => Map::new(),
        };
        input::apply_sets(&mut data, &flags.set)?;
        Ok(CheckpointRequest {
            data: Value::Object(data),
            ..flags.request.clone()
        })
    }

    fn show(_: &CheckpointFlags, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        show_saved(answer, p)
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Health {
    type Flags = HealthFlags;

    /// The request, its `metrics` the text of `--metrics` (inline or `-`; the verb parses it, as
    /// it does a JSON string from MCP).
    fn request(flags: &HealthFlags) -> Result<HealthRequest> {
        let metrics = input::read_text(flags.metrics.as_deref(), None)?;
        Ok(HealthRequest {
            metrics: metrics.map_or_else(empty, Value::String),
            ..flags.request.clone()
        })
    }

    fn show(_: &HealthFlags, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        show_saved(answer, p)
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Fork {
    type Flags = ForkRequest;

    fn request(flags: &ForkRequest) -> Result<ForkRequest> {
        Ok(flags.clone())
    }

    /// The line naming what was forked into what (not with `--json` or `--quiet`), then the save.
    fn show(a: &ForkRequest, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        if !p.quiet() && !p.json_mode() {
            let record = &answer.record;
            p.note(&format!(
                "forked session {} at record {} ({}, phase {}) into session {}",
                a.session,
                record.parent.as_deref().unwrap_or("?"),
                record.agent,
                record.phase().unwrap_or("-"),
                a.new_session
            ));
        }
        show_saved(answer, p)
    }
}

#[cfg(feature = "cli")]
impl SaveAnswer {
    /// Shows a save on the command line: posted (with what its automatic rotation did), or
    /// spooled to the outbox, which `--strict` makes a failure (exit 75, the JSON answer
    /// carrying the error).
    pub fn show(self, p: &impl super::cli::Printer) -> u8 {
        show_saved(self, p)
    }
}

#[cfg(feature = "cli")]
fn show_saved(answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
    if answer.posted {
        if let Some(report) = answer.rotation.as_ref().filter(|_| !p.quiet()) {
            p.note(&super::operate::rotation_text(report));
        }
        p.warn(&answer.warnings);
        if p.json_mode() {
            p.json(&answer);
        } else {
            let mut line = posted_line(&answer);
            if let Some(url) = &answer.url {
                line.push_str(&format!("\n{url}"));
            }
            p.out(&line);
        }
        return 0;
    }
    // A cause only fixing something can cure is an error line (the first warning says what
    // to fix), shown even with --quiet.
    if !p.quiet() || answer.permanent {
        for (i, w) in answer.warnings.iter().enumerate() {
            let level = match answer.permanent && i == 0 {
                true => "error",
                false => "warning",
            };
            p.note(&format!("{level}: {w}"));
        }
    }
    let code = if p.strict() { 75 } else { 0 };
    if p.json_mode() && code != 0 {
        let message = format!(
            "{} {} was spooled to the outbox, not posted (--strict); `forgestate flush` posts it",
            answer.record.kind().name(),
            answer.id.as_deref().unwrap_or("(no id)"),
        );
        p.json_failed(&answer, code, &message);
    } else if p.json_mode() {
        p.json(&answer);
    }
    code
}

/// `checkpoint 0193… saved as comment 12 in …`, with the count of redacted values.
#[cfg(feature = "cli")]
fn posted_line(a: &SaveAnswer) -> String {
    let kind = a.record.kind().name();
    let id = a.id.as_deref().unwrap_or("(no id)");
    let mut line = format!(
        "{kind} {id} saved as comment {} in {}",
        a.comment_id
            .map_or_else(|| "?".to_string(), |c| c.to_string()),
        a.store.as_deref().unwrap_or("the store")
    );
    if let Some(n) = a.record.redacted {
        line.push_str(&format!(" ({n} secret value(s) redacted)"));
    }
    line
}
