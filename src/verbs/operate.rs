//! The operator's verbs: `init`, `rotate` (the library runs them), and `prune`, `flush`,
//! `outbox`, `doctor`, `watch`, which the CLI drives (signals, the machine's outboxes, the
//! configuration file) over the library's drivers; their requests and answers are described here
//! so every face agrees on them.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CLI, Context, Group, Run, Spec, Verb, answer_schema, request_schema};
use crate::Rotation;
use crate::error::Result;

/// `init` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitRequest {}

/// What `init` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InitAnswer {
    /// Where the session thread is (the issue's web page, or the local store's file).
    pub thread: String,
    /// Whom records are posted as.
    pub author: String,
    /// This call created the thread (false: it was there).
    pub created: bool,
    /// Records still waiting in this machine's outbox after the drain.
    pub left: usize,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// Init.
pub struct Init;

impl Verb for Init {
    type Request = InitRequest;
    type Answer = InitAnswer;
    const SPEC: Spec = Spec {
        name: "init",
        title: "Find or create the session thread",
        description: "Find or create the session thread (on a forge: the labelled session \
            issue), say whom records are posted as, and post what waits in the outbox.",
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        about: "Find or create the session thread (on a forge: the labelled session issue)",
        examples: "  forgestate init
  forgestate init --url https://forge.example.com --repo acme/app --token-file ~/.forgestate-token
  forgestate init --json",
        human: |a| {
            let what = if a["created"] == true {
                "created"
            } else {
                "found"
            };
            let (thread, author) = (a["thread"].as_str()?, a["author"].as_str()?);
            Some(format!(
                "session thread {what}: {thread} (records are posted as {author})"
            ))
        },
        ..Spec::OPERATOR
    };
}

impl Run for Init {
    async fn run(ctx: &Context<'_>, _: InitRequest) -> Result<InitAnswer> {
        let (init, author) = ctx.client.init().await?;
        let left = ctx.client.drain().await;
        let warnings = match left {
            0 => Vec::new(),
            n => vec![format!(
                "{n} record(s) still wait in the outbox; they are posted by a later command or \
                 by `forgestate flush`"
            )],
        };
        Ok(InitAnswer {
            thread: init.location,
            author,
            created: init.created,
            left,
            warnings,
        })
    }
}

/// `rotate` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateRequest {}

/// Rotate.
pub struct Rotate;

impl Verb for Rotate {
    type Request = RotateRequest;
    type Answer = Rotation;
    const SPEC: Spec = Spec {
        name: "rotate",
        title: "Rotate the session issue",
        description: "Replace a long session issue with a new one carrying each active \
            session's newest records, then close it (safe to run again after an interruption). \
            Also automatic after a save once the issue holds more than `rotate_after` comments.",
        destructive: true,
        faces: CLI,
        reads_thread: true,
        example: "{}",
        about: "Replace a long session issue with a new one carrying each active session's newest records, then close it (safe to run again after an interruption)",
        after: "Also automatic: a checkpoint or health record rotates the issue once it holds more than [forge] rotate_after comments (default 2000; 0 turns it off).",
        examples: "  forgestate rotate
  forgestate rotate --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

impl Run for Rotate {
    async fn run(ctx: &Context<'_>, _: RotateRequest) -> Result<Rotation> {
        ctx.client.rotate().await
    }
}

/// `prune`: which records go.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct PruneRequest {
    /// Keep the newest N records per agent, session and kind.
    #[serde(default = "keep_default")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = crate::defaults::PRUNE_KEEP))]
    pub keep: usize,
    /// Only agents matching this glob.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Only sessions matching this glob.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub session: Option<String>,
    /// Delete exactly these records (record ids; yours only) instead of all but the newest
    /// `keep`, which is then not used. Ids the thread does not hold are skipped.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "id", value_name = "UUID"))]
    pub ids: Vec<String>,
    /// Delete (without it, a dry run).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub yes: bool,
}

/// `keep` when the request leaves it out: what the CLI's `--keep` defaults to.
fn keep_default() -> usize {
    crate::defaults::PRUNE_KEEP
}

/// What `prune` answers: the plan, and what was deleted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PruneAnswer {
    /// Nothing was deleted (no `yes`).
    pub dry_run: bool,
    /// Whose records the plan deletes (only the store identity's own).
    pub author: String,
    /// How many per agent, session and kind stay.
    pub keep: usize,
    /// The records the plan deletes, oldest first.
    pub delete: Vec<crate::client::prune::Doomed>,
    /// Matching records that stay: the newest of each group.
    pub kept: usize,
    /// Older matching records that stay because another author posted them.
    pub kept_other_authors: usize,
    /// Comment ids deleted.
    pub deleted: Vec<u64>,
    /// Comment ids already gone.
    pub missing: Vec<u64>,
}

/// Prune.
pub struct Prune;

impl Verb for Prune {
    type Request = PruneRequest;
    type Answer = PruneAnswer;
    const SPEC: Spec = Spec {
        name: "prune",
        title: "Delete older records",
        description: "Delete your older records beyond the newest N per agent, session and kind \
            (a dry run without `yes`); other authors' comments are never touched.",
        destructive: true,
        reads_thread: true,
        flags: &[("ids", "id")],
        example: r#"{"keep": 1, "session": "s1"}"#,
        about: "Delete your older records beyond the newest N per agent, session and kind (a dry run without --yes); other authors' comments are never touched",
        examples: "  forgestate prune
  forgestate prune --keep 3 --session s1
  forgestate prune --keep 3 --agent 'implementation-*' --yes",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

impl Run for Prune {
    async fn run(ctx: &Context<'_>, r: PruneRequest) -> Result<PruneAnswer> {
        use crate::client::prune::{PruneOptions, PruneReport, apply, plan};
        super::input::check_glob("agent", r.agent.as_deref())?;
        super::input::check_glob("session", r.session.as_deref())?;
        let ids = r
            .ids
            .into_iter()
            .map(|id| super::input::record_id("ids", id))
            .collect::<Result<Vec<_>>>()?;
        let options = PruneOptions {
            keep: r.keep,
            agent: r.agent,
            session: r.session,
            ids,
        };
        let plan = plan(ctx.client, &options).await?;
        let report = match r.yes && !plan.delete.is_empty() {
            true => apply(ctx.client, &plan, |_, _| {}).await?,
            false => PruneReport::default(),
        };
        Ok(PruneAnswer {
            dry_run: !r.yes,
            author: plan.author,
            keep: plan.keep,
            delete: plan.delete,
            kept: plan.kept,
            kept_other_authors: plan.kept_other_authors,
            deleted: report.deleted,
            missing: report.missing,
        })
    }
}

/// `flush`: which outboxes.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct FlushRequest {
    /// Every outbox on this machine, each to the forge and repository it was spooled for.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "from"))]
    pub all: bool,
    /// This outbox directory, to the forge configured now (for records spooled under a mistyped
    /// URL, owner or repository).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub from: Option<PathBuf>,
}

/// What `flush` answers for one outbox (`flush --all`: `{"outboxes": [...]}` of these).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushAnswer {
    /// Entries found already in the thread (not posted again).
    pub already_posted: usize,
    /// Another process was flushing this outbox.
    pub busy: bool,
    /// Entries the forge refused, moved to the dead letters.
    pub dead: Vec<FlushLetter>,
    /// The error that stopped the flush, when one did.
    pub error: Option<FlushError>,
    /// Entries still waiting.
    pub left: usize,
    /// Entries that are not records, moved aside.
    pub moved_aside: Vec<FlushLetter>,
    /// The outbox directory.
    pub outbox: PathBuf,
    /// Entries posted now, with their comments.
    pub posted: Vec<FlushPosted>,
}

impl FlushAnswer {
    /// The answer for the outbox `outbox` from its flush `report`; `error` is set when the
    /// face counts the flush as failed (the face decides the exit code).
    pub fn new(
        outbox: PathBuf,
        report: &crate::FlushReport,
        error: Option<FlushError>,
    ) -> FlushAnswer {
        let letters = |l: &[crate::durable::DeadLetter]| -> Vec<FlushLetter> {
            l.iter()
                .map(|d| FlushLetter {
                    path: d.path.clone(),
                    reason: d.reason.clone(),
                    answer: d.answer.clone(),
                })
                .collect()
        };
        FlushAnswer {
            already_posted: report.already_posted,
            busy: report.busy,
            dead: letters(&report.dead),
            error,
            left: report.left,
            moved_aside: letters(&report.moved_aside),
            outbox,
            posted: report
                .posted
                .iter()
                .map(|(path, c)| FlushPosted {
                    spooled: path.clone(),
                    comment_id: c.id,
                    url: c.url.clone(),
                })
                .collect(),
        }
    }
}

/// An outbox entry `flush` moved to the dead letters, or aside.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushLetter {
    /// The entry's file.
    pub path: PathBuf,
    /// Why it was moved.
    pub reason: String,
    /// What the forge answered, when it answered.
    pub answer: Option<String>,
}

/// An outbox entry `flush` posted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushPosted {
    /// The entry's file (gone now).
    pub spooled: PathBuf,
    /// The comment it became.
    pub comment_id: u64,
    /// The comment's web address, where the store has one.
    pub url: Option<String>,
}

/// The error that stopped a flush: the CLI's error object (`{"error": …}`'s body).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlushError {
    /// The exit code.
    pub code: u8,
    /// Who must act: `usage`, `data`, `io`, `tempfail`, `config`, `conflict`.
    pub category: String,
    /// The message on one line.
    pub message: String,
    /// Why a comment is not a record (`parse` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Flush.
pub struct Flush;

impl Verb for Flush {
    type Request = FlushRequest;
    type Answer = FlushAnswer;
    const SPEC: Spec = Spec {
        name: "flush",
        title: "Post the outbox",
        description: "Post the records waiting in this machine's outbox, oldest first, exactly \
            once each.",
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

/// `outbox` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutboxRequest {}

/// What `outbox` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutboxAnswer {
    /// Every outbox on this machine: its directory, forge, waiting records, oldest, last drains
    /// and dead letters.
    pub outboxes: Vec<crate::durable::OutboxSummary>,
}

/// Outbox.
pub struct Outboxes;

impl Verb for Outboxes {
    type Request = OutboxRequest;
    type Answer = OutboxAnswer;
    const SPEC: Spec = Spec {
        name: "outbox",
        title: "This machine's outboxes",
        description: "Every outbox on this machine: its forge, waiting records, oldest age, last \
            failure and dead letters.",
        faces: CLI,
        group: Group::Operators,
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::PURE
    };
}

/// `doctor` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoctorRequest {}

/// What `doctor` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DoctorAnswer {
    /// Every check in order: name, status (ok, warn, fail, skip), ok, detail, fix.
    pub checks: Vec<crate::doctor::Check>,
    /// Whether any check failed.
    pub failed: bool,
}

/// Doctor.
pub struct Doctor;

impl Verb for Doctor {
    type Request = DoctorRequest;
    type Answer = DoctorAnswer;
    const SPEC: Spec = Spec {
        name: "doctor",
        title: "Check the setup",
        description: "Check the setup, one check per line with the fix: config, forge, token, \
            repository, label, session issue, clock, trust, outbox, cache.",
        read_only: true,
        faces: CLI,
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

#[cfg(feature = "cli")]
impl super::cli::Command for Init {
    type Flags = InitRequest;

    fn request(_: &InitRequest) -> Result<InitRequest> {
        Ok(InitRequest {})
    }

    fn show(_: &InitRequest, answer: InitAnswer, p: &impl super::cli::Printer) -> u8 {
        super::cli::show_answer::<Self>(&answer, p)
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Rotate {
    type Flags = RotateRequest;

    fn request(_: &RotateRequest) -> Result<RotateRequest> {
        Ok(RotateRequest {})
    }

    /// What the rotation did, and what it could not carry (not with `--quiet`).
    fn show(_: &RotateRequest, report: Rotation, p: &impl super::cli::Printer) -> u8 {
        if p.json_mode() {
            p.json(&report);
            return 0;
        }
        p.out(&rotation_text(&report));
        if !p.quiet() {
            for why in &report.skipped {
                p.note(&format!(
                    "warning: not carried ({why}); it stays readable through the link to session \
                     issue #{}",
                    report.from
                ));
            }
        }
        0
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Prune {
    type Flags = PruneRequest;

    fn request(flags: &PruneRequest) -> Result<PruneRequest> {
        Ok(flags.clone())
    }

    /// The plan: what was (or would be) deleted, and what stays.
    fn show(a: &PruneRequest, plan: PruneAnswer, p: &impl super::cli::Printer) -> u8 {
        use chrono::SecondsFormat;
        if p.json_mode() {
            p.json(&plan);
            return 0;
        }
        let verb = if a.yes { "deleted" } else { "would delete" };
        let why = match a.ids.is_empty() {
            true => format!(
                "keeping the newest {} per agent, session and kind",
                plan.keep
            ),
            false => format!("of the {} record id(s) given", a.ids.len()),
        };
        let mut text = format!(
            "{verb} {} record(s) by {} ({why})",
            plan.delete.len(),
            plan.author,
        );
        for d in &plan.delete {
            text.push_str(&format!(
                "\n  comment {}  {}  {}  {}  {}  {}",
                d.comment_id,
                d.created_at.to_rfc3339_opts(SecondsFormat::Secs, true),
                d.agent,
                d.session,
                d.kind,
                d.what
            ));
        }
        text.push_str(&format!("\nkept: {} record(s)", plan.kept));
        if plan.kept_other_authors > 0 {
            text.push_str(&format!(
                "; {} older record(s) by other authors left alone",
                plan.kept_other_authors
            ));
        }
        if !plan.missing.is_empty() {
            text.push_str(&format!(
                "\n{} of them were already gone",
                plan.missing.len()
            ));
        }
        if !a.yes && !plan.delete.is_empty() {
            text.push_str("\nrun again with --yes to delete them");
        }
        p.out(&text);
        0
    }
}

/// What a rotation did: one line (two with a note), and the new issue's address.
/// One line (two with a note) saying what the rotation did.
#[cfg(feature = "cli")]
pub(super) fn rotation_text(r: &Rotation) -> String {
    let mut line = match (r.to, &r.to_url) {
        (Some(to), Some(url)) => {
            let made = if r.created { "created" } else { "found" };
            let mut s = format!(
                "session issue #{} rotated to #{to} ({made}): {} record(s) carried",
                r.from, r.carried
            );
            if r.already_carried > 0 {
                s.push_str(&format!(", {} carried before", r.already_carried));
            }
            if !r.skipped.is_empty() {
                s.push_str(&format!(", {} not carried", r.skipped.len()));
            }
            s.push_str(if r.closed {
                "; old issue closed"
            } else {
                "; old issue still open"
            });
            s.push_str(&format!("\n{url}"));
            s
        }
        _ => format!("session issue #{} not rotated", r.from),
    };
    if let Some(note) = &r.note {
        line.push_str(&format!("\n{note}"));
    }
    line
}
