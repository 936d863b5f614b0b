//! The verbs that read records: `resume` (with the handoff: next step, blockers, context drift),
//! `latest` and `list`.

use std::path::PathBuf;

#[cfg(feature = "cli")]
mod cli;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Context, Run, Spec, Verb, answer_schema, input, request_schema};
use crate::error::Result;
use crate::format::{Kind, format_time};
use crate::report::{Conflict, Ended, PendingIntent};
use crate::resume::glob_matches;
use crate::scan::{Entry, Filter, Rejected, Scan};
use crate::{ListQuery, Resumed};

/// `resume`: where an agent should pick a session up.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ResumeRequest {
    /// The agent resuming, exactly as it posts checkpoints (not a glob).
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// The session to resume, exactly (not a glob).
    #[cfg_attr(feature = "cli", arg(long))]
    pub session: String,
    /// The status document the agent works from (the one given to `checkpoint`): the answer's
    /// `context_drift` says whether it changed since the checkpoint.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub context_file: Option<PathBuf>,
    /// Take the session over: post a `[TAKEOVER]` record making this writer (or `writer`) the
    /// session's only owner, from its newest record on. Every reader then ignores the records
    /// other writers post to it (they are fenced), and their next read fails with exit 73.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub take_over: bool,
    /// Resume as this writer instead of this client's own: with `take_over`, the writer the
    /// session is handed to (a supervisor preparing the next worker, which then writes with
    /// the same `writer`); without it, the writer whose ownership is checked.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub writer: Option<String>,
}

/// What `resume` answers: where to pick up, from which record, the handoff, and how sure that is.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResumeAnswer {
    /// Where to pick up: the resume map's answer for the last phase.
    pub resume_point: String,
    /// The last checkpoint's phase, or `fresh_start`.
    pub phase: String,
    /// The last checkpoint's whole data object (empty on a fresh start).
    #[schemars(with = "Map<String, Value>")]
    pub data: Value,
    /// The checkpoint the answer comes from, with its comment; null on a fresh start.
    pub checkpoint: Option<Entry>,
    /// The checkpoint's record id (null on a fresh start).
    pub record_id: Option<String>,
    /// The checkpoint's comment id (null on a fresh start, or while it is pending).
    pub comment_id: Option<u64>,
    /// When the checkpoint was written (RFC 3339).
    pub time: Option<String>,
    /// No checkpoint exists for this agent and session: start from the beginning.
    pub fresh_start: bool,
    /// The checkpoint waits in this machine's outbox, not posted yet.
    pub pending: bool,
    /// The store could not be read: the answer comes from this machine's read cache and outbox.
    pub offline: bool,
    /// The phase matched no key of the resume map, so `resume_point` is the default.
    pub unmapped: bool,
    /// Handoff: the checkpoint's next step, in words.
    pub next: Option<String>,
    /// Handoff: what blocked progress, one line each.
    pub blockers: Vec<String>,
    /// The hash of the context file the checkpoint recorded (`sha256:…`), if any.
    pub context_hash: Option<String>,
    /// With `context_file`: whether that file changed since the checkpoint (true too when the
    /// checkpoint recorded no hash, since nobody can say); null without `context_file`.
    pub context_drift: Option<bool>,
    /// The id of the newest record of this agent and session (a checkpoint, health or end
    /// record): what the next record's `Parent:` names, and what `checkpoint --if-latest` takes.
    pub latest_id: Option<String>,
    /// The session was ended (`end`) and no checkpoint came after: why, when, and the note.
    pub ended: Option<Ended>,
    /// The session was ended, then a checkpoint reopened it: the end that was reopened.
    pub reopened: Option<Ended>,
    /// A write-ahead intent (`checkpoint --intent`) no later checkpoint confirmed: the side effect
    /// may or may not have happened, so check the world before doing it again.
    pub pending_intent: Option<PendingIntent>,
    /// Records that continue from the same parent: two writers worked on this session from one
    /// state (each is also a warning).
    pub conflicts: Vec<Conflict>,
    /// The session's owner, when it was taken over: the writer, when, and from which record.
    pub owner: Option<crate::scan::Takeover>,
    /// How many of the session's records are fenced: posted by a writer after another one took
    /// the session over (each is also a warning); never resumed from.
    pub fenced: usize,
    /// With `take_over`: the id of the takeover record this call posted.
    pub takeover_id: Option<String>,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    pub complete: bool,
    /// Things the caller should know (a newer comment that could not be read, say).
    pub warnings: Vec<String>,
}

/// Resume.
pub struct ResumeVerb;

impl Verb for ResumeVerb {
    type Request = ResumeRequest;
    type Answer = ResumeAnswer;
    const SPEC: Spec = Spec {
        name: "resume",
        title: "Resume a session",
        description: "Find where an agent should pick up a session. Call it first when \
            (re)starting work. Returns `resume_point` (the step to continue from), the last \
            checkpoint's `phase` and its whole `data`, its `record_id`, the handoff it left \
            (`next`, `blockers`; with `context_file`, `context_drift` says whether that status \
            document changed since), and flags: `fresh_start` (no checkpoint yet: start from the \
            beginning), `pending` (the checkpoint is still in this machine's outbox), `offline` \
            (the forge could not be read, the answer comes from the outbox). Session facts: \
            `ended` (the session was ended, with its reason and note; the data is still the last \
            checkpoint's), `pending_intent` (a side effect recorded with `intent` that no later \
            checkpoint confirmed: check whether it happened before redoing it), `conflicts` \
            (two writers continued from the same record; also a warning), and `latest_id` (the \
            newest record's id, for `checkpoint`'s `if_latest`). Agent and session match \
            exactly.",
        example: r#"{"agent": "w", "session": "s1"}"#,
        summary: resume_summary,
        about: "Print where an agent should resume a session, with its last checkpoint's data",
        examples: "  forgestate resume --agent implementation-worker --session s1
  forgestate resume --agent implementation-worker --session s1 --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_READ
    };
}

impl Run for ResumeVerb {
    async fn run(ctx: &Context<'_>, r: ResumeRequest) -> Result<ResumeAnswer> {
        let context = r
            .context_file
            .as_deref()
            .map(|p| input::context_file("context_file", p))
            .transpose()?;
        let writer = r.writer.as_deref();
        if let Some(w) = writer {
            input::writer("writer", w)?;
        }
        let (mut answer, takeover_id) = match r.take_over {
            true => {
                let taken = ctx.client.take_over(&r.agent, &r.session, writer).await?;
                let id = match &taken.outcome {
                    crate::Outcome::Posted(p) => p.id.clone(),
                    crate::Outcome::Spooled { record, .. } => record.id.clone(),
                    crate::Outcome::Failed(_) => None,
                };
                (taken.resumed, id)
            }
            false => {
                let writer = writer.unwrap_or(ctx.client.writer());
                (
                    ctx.client.resume_as(&r.agent, &r.session, writer).await?,
                    None,
                )
            }
        };
        if let Some(bytes) = &context {
            answer.resume.check_context(bytes);
        }
        let mut answer = ResumeAnswer::new(answer);
        answer.takeover_id = takeover_id;
        Ok(answer)
    }
}

impl ResumeAnswer {
    /// The answer for `resume` (its context already checked, when there is a context file).
    pub fn new(answer: Resumed) -> ResumeAnswer {
        let Resumed {
            resume,
            session,
            complete,
            warnings,
        } = answer;
        let e = resume.checkpoint.as_ref();
        ResumeAnswer {
            record_id: e.and_then(|e| e.record.id.clone()),
            comment_id: e.and_then(|e| e.comment.id),
            time: e.map(|e| format_time(&e.record.time)),
            fresh_start: e.is_none(),
            pending: e.is_some_and(|e| e.comment.pending),
            context_hash: e.and_then(|e| e.record.context_hash.clone()),
            resume_point: resume.resume_point,
            phase: resume.phase,
            data: resume.data,
            checkpoint: resume.checkpoint,
            offline: resume.offline,
            unmapped: resume.unmapped,
            next: resume.next,
            blockers: resume.blockers,
            context_drift: resume.context_drift,
            latest_id: session.latest_id,
            ended: session.ended,
            reopened: session.reopened,
            pending_intent: session.pending_intent,
            complete,
            conflicts: session.conflicts,
            owner: session.owner,
            fenced: session.fenced,
            takeover_id: None,
            warnings,
        }
    }
}

/// The record filters `latest` and `list` share.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FilterRequest {
    /// Only records of this agent; a glob such as "implementation-*" matches several.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Only records of this session; a glob such as "sess-*" matches several.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub session: Option<String>,
    /// Only this kind of record. Default: either.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub kind: Option<Kind>,
    /// Only checkpoints whose phase matches this glob, e.g. "subtask_*_complete".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub phase: Option<String>,
}

impl FilterRequest {
    /// The library's filter, every glob checked.
    fn filter(&self, since: Option<chrono::DateTime<chrono::Utc>>) -> Result<Filter> {
        input::check_glob("agent", self.agent.as_deref())?;
        input::check_glob("session", self.session.as_deref())?;
        input::check_glob("phase", self.phase.as_deref())?;
        Ok(Filter {
            agent: self.agent.clone(),
            session: self.session.clone(),
            kind: self.kind,
            since,
        })
    }
}

/// Keeps the records whose phase matches `phase` (a glob); health records have none.
fn by_phase(mut scan: Scan, phase: &str) -> Scan {
    scan.entries
        .retain(|e| e.record.phase().is_some_and(|p| glob_matches(phase, p)));
    scan
}

/// `latest`: the newest matching record.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct LatestRequest {
    /// Which records count.
    #[serde(flatten)]
    #[cfg_attr(feature = "cli", command(flatten))]
    pub filter: FilterRequest,
}

/// What `latest` answers: the library's answer as it is.
pub use crate::client::Latest as LatestAnswer;

/// Latest.
pub struct LatestVerb;

impl Verb for LatestVerb {
    type Request = LatestRequest;
    type Answer = LatestAnswer;
    const SPEC: Spec = Spec {
        name: "latest",
        title: "Newest matching record",
        description: "Return the newest record matching the filters (agent and session globs \
            such as \"implementation-*\", kind checkpoint or health, phase glob), in thread \
            order. Use it to see what another agent did last. Returns `record` (null when none \
            matches).",
        example: r#"{"session": "s1", "kind": "checkpoint"}"#,
        summary: latest_summary,
        about: "Print the newest matching record (JSON null when there is none)",
        examples: "  forgestate latest --agent implementation-worker --session s1
  forgestate latest --agent 'implementation-*' --kind health
  forgestate latest --session s1 --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_READ
    };
}

impl Run for LatestVerb {
    async fn run(ctx: &Context<'_>, r: LatestRequest) -> Result<LatestAnswer> {
        let filter = r.filter.filter(None)?;
        Ok(match &r.filter.phase {
            // A phase filter reads the list and takes its newest entry.
            Some(phase) => {
                let scan = by_phase(ctx.client.list(&filter, None).await?, phase);
                LatestAnswer {
                    record: scan.entries.last().cloned(),
                    offline: scan.offline,
                    complete: scan.complete(),
                    warnings: scan.warnings,
                }
            }
            None => ctx.client.latest(&filter).await?,
        })
    }
}

/// `list`: matching records, oldest first.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ListRequest {
    /// Which records count.
    #[serde(flatten)]
    #[cfg_attr(feature = "cli", command(flatten))]
    pub filter: FilterRequest,
    /// Only records posted at or after this time: RFC 3339 ("2026-11-29T08:00:00Z") or an age
    /// such as "90m", "24h" or "7d".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TIME"))]
    pub since: Option<String>,
    /// Only the newest N matching records (still returned oldest first). Default: all.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub limit: Option<usize>,
    /// Also return comments that are not valid, trusted records, with the reason.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub invalid: bool,
    /// Read the thread's whole history: every earlier session issue it continues (rotated away),
    /// not only the current one and what was carried from them.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
}

/// What `list` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListAnswer {
    /// The matching records, oldest first.
    pub records: Vec<Entry>,
    /// With `invalid`: the comments that are not valid, trusted records, with the reason (null
    /// without it).
    pub invalid: Option<Vec<Rejected>>,
    /// The store could not be read: the records come from this machine's read cache and outbox.
    pub offline: bool,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    pub complete: bool,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// List.
pub struct ListVerb;

impl Verb for ListVerb {
    type Request = ListRequest;
    type Answer = ListAnswer;
    const SPEC: Spec = Spec {
        name: "list",
        title: "List records",
        description: "List records matching the filters (agent and session globs, kind, phase \
            glob, since a time or an age such as \"24h\"), oldest first; `limit` keeps only the \
            newest N. Use it to review what agents recorded. Returns `records`, and with \
            `invalid: true` also the comments that are not valid, trusted records, with the \
            reason.",
        example: r#"{"session": "s1", "limit": 5}"#,
        summary: list_summary,
        about: "List records, oldest first",
        examples: "  forgestate list --session s1
  forgestate list --agent 'implementation-*' --since 24h --limit 20
  forgestate list --invalid --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::AGENT_READ
    };
}

impl Run for ListVerb {
    async fn run(ctx: &Context<'_>, r: ListRequest) -> Result<ListAnswer> {
        let since = r
            .since
            .as_deref()
            .map(|t| input::since_arg("since", t))
            .transpose()?;
        // An age is counted back on the store's clock, as `status` measures ages.
        let (since, age) = input::Since::split(since);
        let filter = r.filter.filter(since)?;
        // With a phase filter, the limit counts only the records that pass it.
        let limit = r.limit.filter(|_| r.filter.phase.is_none());
        let mut scan = ctx
            .client
            .query(&ListQuery {
                filter,
                limit,
                age,
                whole_history: r.all,
            })
            .await?;
        if let Some(phase) = &r.filter.phase {
            scan = by_phase(scan, phase);
        }
        if let Some(limit) = r.limit {
            let skip = scan.entries.len().saturating_sub(limit);
            scan.entries.drain(..skip);
        }
        let complete = scan.complete();
        let invalid = r.invalid.then_some(scan.rejected);
        Ok(ListAnswer {
            complete,
            records: scan.entries,
            invalid,
            offline: scan.offline,
            warnings: scan.warnings,
        })
    }
}

/// `resume`'s summary: where to pick up, and everything that qualifies it.
fn resume_summary(v: &Value) -> Option<String> {
    use super::summary::{place, str_of};
    let mut s = match v["fresh_start"] == true {
        true => format!(
            "no checkpoint yet for this agent in this session: fresh start at {}",
            str_of(v, "resume_point")
        ),
        false => format!(
            "resume at {} (phase {}, checkpoint {} in {})",
            str_of(v, "resume_point"),
            str_of(v, "phase"),
            v["record_id"].as_str().unwrap_or("(version 1.0, no id)"),
            place(&v["checkpoint"]["comment"])
        ),
    };
    if v["unmapped"] == true {
        s.push_str(&format!(
            "; phase {} is not in the resume map, so this is the default",
            str_of(v, "phase")
        ));
    }
    if let Some(next) = v["next"].as_str() {
        s.push_str(&format!("; next: {next}"));
    }
    for b in v["blockers"].as_array().into_iter().flatten() {
        s.push_str(&format!("; blocker: {}", b.as_str().unwrap_or_default()));
    }
    match v["context_drift"].as_bool() {
        Some(true) => s.push_str(
            "; the context file changed since this checkpoint (or it recorded no hash): re-read \
             it before going on",
        ),
        Some(false) => s.push_str("; the context file is unchanged since this checkpoint"),
        None => {}
    }
    if let Some(reason) = v["ended"]["reason"].as_str() {
        s.push_str(&format!("; the session ended ({reason})"));
    }
    if let Some(name) = v["pending_intent"]["name"].as_str() {
        s.push_str(&format!(
            "; intent {name} is pending: check whether it happened before doing it again"
        ));
    }
    if let Some(n) = v["conflicts"].as_array().map(Vec::len).filter(|n| *n > 0) {
        s.push_str(&format!(
            "; {n} record(s) were continued by two writers (see warnings)"
        ));
    }
    if v["offline"] == true {
        s.push_str("; offline: the forge could not be read, answered from this machine's read cache and outbox");
    }
    Some(s)
}

/// `latest`'s summary: the record on one line, or that there is none.
fn latest_summary(v: &Value) -> Option<String> {
    Some(match v["record"].is_object() {
        true => format!(
            "newest matching record: {}",
            super::summary::line(&v["record"])
        ),
        false => "no matching record found".to_string(),
    })
}

/// `list`'s summary: a line per record, and what the read could not see.
fn list_summary(v: &Value) -> Option<String> {
    let records = v["records"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut s = match records.len() {
        0 => "no matching records".to_string(),
        n => format!("{n} matching record(s), oldest first:"),
    };
    for e in records {
        s.push_str(&format!("\n{}", super::summary::line(e)));
    }
    if v["offline"] == true {
        s.push_str("\noffline: the forge could not be read; only pending records are listed");
    }
    if let Some(invalid) = v["invalid"].as_array() {
        s.push_str(&format!(
            "\n{} comment(s) are not valid, trusted records",
            invalid.len()
        ));
    }
    Some(s)
}
