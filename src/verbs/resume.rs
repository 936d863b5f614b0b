//! `resume`: where an agent should pick a session up, with the handoff (next step, blockers,
//! context drift); on the command line a block of text.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Context, Run, Spec, Verb, input};
use crate::Resumed;
use crate::error::Result;
use crate::format::format_time;
use crate::report::{Conflict, Ended, PendingIntent};
use crate::scan::Entry;

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
    const DECLARED: Spec = Spec {
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
        about: "Print where an agent should resume a session, with its last checkpoint's data",
        examples: "  forgestate resume --agent implementation-worker --session s1
  forgestate resume --agent implementation-worker --session s1 --json",
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
        input::header("agent", &r.agent)?;
        input::header("session", &r.session)?;
        let writer = r.writer.as_deref();
        if let Some(w) = writer {
            input::header("writer", w)?;
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
            // Without a writer named, as the client's: a read never makes the machine's.
            false => match writer {
                Some(w) => (ctx.client.resume_as(&r.agent, &r.session, w).await?, None),
                None => (ctx.client.resume(&r.agent, &r.session).await?, None),
            },
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

#[cfg(feature = "cli")]
impl super::cli::Command for ResumeVerb {
    type Flags = ResumeRequest;

    fn show(a: &ResumeRequest, answer: ResumeAnswer, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        p.answer(&answer, |r| resume_text(r, &a.agent, &a.session, p))
    }
}

/// `resume` as text: the resume point, where it comes from, the handoff and the data.
#[cfg(feature = "cli")]
fn resume_text(
    r: &ResumeAnswer,
    agent: &str,
    session: &str,
    p: &impl super::cli::Printer,
) -> String {
    let from = match &r.checkpoint {
        Some(e) => format!(
            "checkpoint {} ({}, {})",
            e.record.id.as_deref().unwrap_or("(version 1.0, no id)"),
            super::cli::record::place(e),
            super::cli::record::when(&e.record.time, p)
        ),
        None => format!("no checkpoint for agent {agent} in session {session}: fresh start"),
    };
    let offline = if r.offline {
        "\noffline:      the forge could not be read; answered from this machine's read cache and outbox"
    } else {
        ""
    };
    let point = if r.unmapped {
        format!(
            "{} (the default: phase {} is not in the resume map of {agent})",
            r.resume_point, r.phase
        )
    } else {
        r.resume_point.clone()
    };
    let mut handoff = String::new();
    if let Some(next) = &r.next {
        handoff.push_str(&format!("\nnext:         {next}"));
    }
    for b in &r.blockers {
        handoff.push_str(&format!("\nblocker:      {b}"));
    }
    if let Some(end) = &r.ended {
        handoff.push_str(&format!("\nended:        {} at {}", end.reason, end.at));
        if let Some(note) = &end.note {
            handoff.push_str(&format!(" ({note})"));
        }
    }
    if let Some(end) = &r.reopened {
        let (reason, at) = (&end.reason, &end.at);
        handoff.push_str(&format!("\nreopened:     after an end ({reason}) at {at}"));
    }
    if let Some(intent) = &r.pending_intent {
        handoff.push_str(&format!(
            "\nintent:       PENDING {} (since {}): check whether it happened before doing it again",
            intent.name, intent.at
        ));
    }
    match r.context_drift {
        Some(true) => handoff.push_str(
            "\ncontext:      DRIFTED: the context file changed since this checkpoint (or it \
             recorded no Context-Hash); re-read it before going on",
        ),
        Some(false) => handoff.push_str("\ncontext:      unchanged since this checkpoint"),
        None => {}
    }
    p.printable(&format!(
        "resume point: {point}\nphase:        {}\nfrom:         {from}{offline}{handoff}\ndata:\n{}",
        r.phase,
        super::cli::record::pretty(&r.data)
    ))
}
