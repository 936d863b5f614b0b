//! `checkpoint`: where an agent got to, and the state it needs to resume.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Context, Run, SaveAnswer, Spec, Verb, input};
use crate::Write;
use crate::error::{Error, Result};
use crate::format::Record;

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
    #[serde(default = "crate::format::empty_object")]
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

/// Checkpoint.
pub struct Checkpoint;

impl Verb for Checkpoint {
    type Request = CheckpointRequest;
    type Answer = SaveAnswer;
    const DECLARED: Spec = Spec {
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
        about: "Post a [CHECKPOINT] record: where an agent got to, and the state it needs to resume",
        examples: "  forgestate checkpoint --agent worker --session s1 --phase clone_complete --set issue_number=42
  forgestate checkpoint --agent worker --session s1 --phase pr_created --merge --set pr=7
  forgestate checkpoint --agent worker --session s1 --phase tests_pass --intent create_pr",
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
        let record = with_intent(record, r.intent, r.intent_data, r.done)?.with_writer(r.writer);
        let write = Write {
            if_latest: r.if_latest,
            merge: r.merge,
            parent: r.parent,
            check_owner: r.check_owner || ctx.client.checks_owner(),
        };
        SaveAnswer::saved(ctx.client, ctx.client.save_as(record, write).await)
    }
}

/// `record` with its write-ahead intent and confirmation: intent data without an intent is a
/// usage error (the CLI words `intent_data` as its flag).
fn with_intent(
    record: Record,
    intent: Option<String>,
    data: Option<Value>,
    done: Option<String>,
) -> Result<Record> {
    let record = match (intent, data) {
        (Some(name), data) => record.with_intent(&name, data.unwrap_or(Value::Null))?,
        (None, Some(_)) => {
            return Err(Error::usage(
                "intent_data needs an intent: name the side effect it describes",
            ));
        }
        (None, None) => record,
    };
    match done {
        Some(name) => Ok(record.with_done(&name)?),
        None => Ok(record),
    }
}

#[cfg(feature = "cli")]
impl super::cli::MakeRequest<CheckpointRequest> for CheckpointFlags {
    /// The request, its `data` read from `--data` (inline or `-`), `--data-file` and `--set`.
    fn request(&self) -> Result<CheckpointRequest> {
        let text = input::read_text(self.data.as_deref(), self.data_file.as_deref())?;
        let mut data = match text {
            Some(text) => input::json_object("--data", &text)?,
            None => Map::new(),
        };
        input::apply_sets(&mut data, &self.set)?;
        Ok(CheckpointRequest {
            data: Value::Object(data),
            ..self.request.clone()
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Checkpoint {
    type Flags = CheckpointFlags;

    fn show(_: &CheckpointRequest, answer: SaveAnswer, p: &impl super::cli::Printer) -> u8 {
        answer.show(p)
    }
}
