//! `flush`: this machine's outboxes posted, in order, exactly once; the CLI runs it over the
//! configuration ([`CliVerb`](super::cli::CliVerb)): this outbox, every outbox with
//! `--all`, another one with `--from`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Spec, Verb};

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
    /// The answer for the outbox `outbox` from its flush `report`, with no error: the face sets
    /// one when it counts the flush as failed (the face decides the exit code).
    pub fn new(outbox: PathBuf, report: &crate::FlushReport) -> FlushAnswer {
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
            error: None,
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
    const DECLARED: Spec = Spec {
        name: "flush",
        title: "Post the outbox",
        description: "Post the records waiting in this machine's outbox, oldest first, exactly \
            once each.",
        example: "{}",
        about: "Post the records waiting in this machine's outbox, oldest first",
        examples: "  forgestate flush
  forgestate flush --all
  forgestate flush --from ~/.local/state/forgestate/outbox/https___forge.example.com___acme__app",
        ..Spec::OPERATOR
    };
}

#[cfg(feature = "cli")]
mod cli {
    use std::path::PathBuf;

    use serde::Serialize;

    use super::{Flush, FlushAnswer, FlushRequest};
    use crate::FlushReport;
    use crate::config::Overrides;
    use crate::durable::{Outbox, survey};
    use crate::error::{Error, Result};
    use crate::verbs::cli::{CliVerb, Host, Printer};

    impl CliVerb for Flush {
        type Flags = FlushRequest;

        /// `forgestate flush [--all | --from DIR]`: each outbox flushed and shown; when any
        /// still holds records, the exit code of the first one's error.
        async fn run_cli(a: &FlushRequest, host: &impl Host, p: &impl Printer) -> Result<u8> {
            let done = match (&a.from, a.all) {
                (_, true) => every_outbox(host).await?,
                (Some(dir), false) => {
                    if !Outbox::new(dir).is_outbox() {
                        return Err(Error::config(format!(
                            "--from {}: not an outbox directory; `forgestate outbox` lists them",
                            dir.display()
                        )));
                    }
                    let client = host.open(&host.config()?)?;
                    let report = client.durable_raw().flush_from(&Outbox::new(dir)).await;
                    vec![(dir.clone(), report)]
                }
                (None, false) => {
                    let client = host.open(&host.config()?)?;
                    let dir = client.outbox().map(|o| o.dir().to_path_buf());
                    vec![(dir.unwrap_or_default(), client.flush().await)]
                }
            };
            let mut messages = Vec::new();
            let answers: Vec<FlushAnswer> = done
                .into_iter()
                .map(|(dir, report)| {
                    let mut answer = FlushAnswer::new(dir, &report);
                    if let Err(e) = report.verdict() {
                        answer.error = Some(p.error_object(&e));
                        messages.push(e.to_string());
                    }
                    answer
                })
                .collect();
            show(a.all, &answers, &messages, p);
            // The first failed outbox's code; one message for each failed outbox.
            let code = answers
                .iter()
                .find_map(|a| a.error.as_ref())
                .map(|e| e.code);
            match (code, messages.as_slice()) {
                (None, _) | (_, []) => Ok(0),
                (Some(code), [message]) => {
                    p.note(&format!("error: {message}"));
                    Ok(code)
                }
                (Some(code), all) => {
                    p.note(&format!(
                        "error: {} outboxes still hold records; see the errors above",
                        all.len()
                    ));
                    Ok(code)
                }
            }
        }
    }

    /// `flush --all`: every outbox on this machine that holds records, each to the forge and
    /// repository it was spooled for.
    async fn every_outbox(host: &impl Host) -> Result<Vec<(PathBuf, FlushReport)>> {
        let config = host.config()?;
        let here = config.forge_url();
        let mut done = Vec::new();
        for summary in survey(&config.outbox_roots()) {
            if summary.waiting == 0 {
                continue;
            }
            // The token in use belongs to the forge configured now: never send it elsewhere.
            // Outboxes that cannot be flushed here are reported as failures, not passed over.
            let left = |error: Error| FlushReport {
                left: summary.waiting,
                error: Some(error),
                ..FlushReport::default()
            };
            let Some(origin) = summary.origin.clone() else {
                done.push((
                    summary.dir.clone(),
                    left(Error::config(format!(
                        "the outbox {} does not say where its records were going; post them \
                         with `forgestate flush --from {}`",
                        summary.dir.display(),
                        summary.dir.display()
                    ))),
                ));
                continue;
            };
            if here.as_deref().is_none_or(|u| !same_forge(u, &origin.url)) {
                done.push((
                    summary.dir.clone(),
                    left(Error::config(format!(
                        "skipped the outbox {}: its records are for {}, not the forge configured \
                         now; run `forgestate flush --all` with that forge's url and token",
                        summary.dir.display(),
                        origin.url
                    ))),
                ));
                continue;
            }
            let over = Overrides {
                url: Some(origin.url),
                owner: Some(origin.owner),
                repo: Some(origin.repo),
                store: None,
                ..config.overrides().clone()
            };
            let report = match host.open(&config.clone().with_overrides(over)) {
                Ok(client) => {
                    client
                        .durable_raw()
                        .flush_from(&Outbox::new(&summary.dir))
                        .await
                }
                Err(e) => left(Error::config(format!(
                    "the outbox {}: {e}",
                    summary.dir.display()
                ))),
            };
            done.push((summary.dir, report));
        }
        Ok(done)
    }

    /// `flush --all --json`: one document for every outbox flushed.
    #[derive(Serialize)]
    struct All<'a> {
        outboxes: &'a [FlushAnswer],
    }

    /// Shows each outbox flushed: one answer (or `--all`'s document) as JSON, else a line each,
    /// its error when several failed, and each entry moved aside.
    fn show(all: bool, answers: &[FlushAnswer], messages: &[String], p: &impl Printer) {
        if p.json_mode() {
            return match (all, answers) {
                (false, [one]) => p.json(one),
                _ => p.json(&All { outboxes: answers }),
            };
        }
        if all && answers.is_empty() {
            p.note("no outbox holds records");
        }
        let mut messages = messages.iter().filter(|_| messages.len() > 1);
        for answer in answers {
            p.out(&text(answer));
            if answer.error.is_some()
                && let Some(message) = messages.next()
            {
                p.note(&format!("error: {message}"));
            }
            for letter in answer.dead.iter().chain(&answer.moved_aside) {
                p.note(&format!(
                    "error: {} was moved aside: {}{}; fix it and post it again, or delete it",
                    letter.path.display(),
                    letter.reason,
                    letter
                        .answer
                        .as_deref()
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default()
                ));
            }
        }
    }

    fn text(answer: &FlushAnswer) -> String {
        if answer.outbox.as_os_str().is_empty() {
            // The local store writes in place: it has no outbox to flush.
            return "nothing to flush: the local store writes each record in place, with no \
                    outbox"
                .to_string();
        }
        let mut text = format!(
            "flushed {} record(s) from {}",
            answer.posted.len(),
            answer.outbox.display()
        );
        if answer.already_posted > 0 {
            text.push_str(&format!(
                "; {} were already in the thread",
                answer.already_posted
            ));
        }
        let aside = answer.dead.len() + answer.moved_aside.len();
        if aside > 0 {
            text.push_str(&format!("; {aside} moved to the dead letters"));
        }
        if answer.busy {
            text.push_str("; another process is flushing");
        }
        text.push_str(&format!("; {} left", answer.left));
        text
    }

    /// Whether two forge URLs name the same server (case, a trailing `/` and `/api/v1` aside).
    fn same_forge(a: &str, b: &str) -> bool {
        let norm = |u: &str| {
            let u = u.trim().trim_end_matches('/').to_ascii_lowercase();
            u.strip_suffix("/api/v1").map(str::to_string).unwrap_or(u)
        };
        norm(a) == norm(b)
    }
}
