//! `flush`: this outbox, every outbox with `--all`, another one with `--from`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use forgestate::config::Overrides;
use forgestate::durable::{Outbox, survey};
use forgestate::verbs::{FlushAnswer, FlushError, FlushRequest};
use forgestate::{Error, FlushReport};

use super::args::Cli;
use super::errors::{ErrorBody, exit_code};
use super::failure::Failure;
use super::open::load;
use super::open::open;
use super::open::open_with;
use super::output;

/// `forgestate flush [--all | --from DIR]`.
pub async fn flush(cli: &Cli, a: &FlushRequest) -> Result<u8, Failure> {
    let mut done: Vec<(PathBuf, FlushReport)> = Vec::new();
    if a.all {
        let config = load(cli)?;
        let here = config.forge_url();
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
            let report = match open_with(cli, &config.clone().with_overrides(over)) {
                Ok(client) => {
                    client
                        .durable_raw()
                        .flush_from(&Outbox::new(&summary.dir))
                        .await
                }
                Err(f) => left(Error::config(format!(
                    "the outbox {}: {}",
                    summary.dir.display(),
                    f.message
                ))),
            };
            done.push((summary.dir, report));
        }
    } else if let Some(dir) = &a.from {
        if !Outbox::new(dir).is_outbox() {
            return Err(Error::config(format!(
                "--from {}: not an outbox directory; `forgestate outbox` lists them",
                dir.display()
            ))
            .into());
        }
        let client = open(cli)?;
        let report = client.durable_raw().flush_from(&Outbox::new(dir)).await;
        done.push((dir.clone(), report));
    } else {
        let client = open(cli)?;
        let dir = client.outbox().map(|o| o.dir().to_path_buf());
        let report = client.flush().await;
        done.push((dir.unwrap_or_default(), report));
    }
    let done: Vec<Flushed> = done
        .into_iter()
        .map(|(dir, report)| {
            let failure = verdict_of(&report);
            Flushed {
                dir,
                report,
                failure,
            }
        })
        .collect();
    print(&done, a.all, cli.json);
    let failed: Vec<(u8, String)> = done.into_iter().filter_map(|f| f.failure).collect();
    match failed.as_slice() {
        [] => Ok(0),
        [(code, message)] => Err(Failure {
            code: *code,
            reason: None,
            message: message.clone(),
        }),
        [(code, _), ..] => Err(Failure {
            code: *code,
            reason: None,
            message: format!(
                "{} outboxes still hold records; see the errors above",
                failed.len()
            ),
        }),
    }
}

/// One outbox flushed, and why that counts as a failure, if it does.
struct Flushed {
    dir: PathBuf,
    report: FlushReport,
    failure: Option<(u8, String)>,
}

/// The library's verdict on a flush, as an exit code and message.
fn verdict_of(report: &FlushReport) -> Option<(u8, String)> {
    let error = match (&report.error, report.busy) {
        (Some(e), _) if report.left > 0 => Some(exit_code(e)),
        (None, true) => Some(crate::face::EX_TEMPFAIL),
        _ => None,
    }?;
    let message = match &report.error {
        Some(e) => e.to_string(),
        None => "another process is flushing this outbox; try again when it is done".to_string(),
    };
    Some((error, message))
}

fn print(done: &[Flushed], all: bool, as_json: bool) {
    if as_json {
        let docs: Vec<FlushAnswer> = done.iter().map(report_json).collect();
        return match (all, docs.as_slice()) {
            (false, [one]) => output::json(one),
            _ => output::json(&AllDoc { outboxes: docs }),
        };
    }
    if all && done.is_empty() {
        output::note("no outbox holds records");
    }
    let several = done.iter().filter(|f| f.failure.is_some()).count() > 1;
    for Flushed {
        dir,
        report,
        failure,
    } in done
    {
        output::out(&report_text(report, dir));
        if let Some((_, message)) = failure.as_ref().filter(|_| several) {
            output::error(message);
        }
        for letter in report.dead.iter().chain(&report.moved_aside) {
            output::note(&format!(
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

/// `flush --all --json`: one document for every outbox flushed.
#[derive(Serialize)]
struct AllDoc {
    outboxes: Vec<FlushAnswer>,
}

/// `flush --json` for one outbox: the verb's answer; `error` is `null` unless the flush failed,
/// and then the error object.
fn report_json(flushed: &Flushed) -> FlushAnswer {
    let error = flushed.failure.as_ref().map(|(code, message)| {
        let body = ErrorBody::new(*code, message);
        FlushError {
            code: body.code,
            category: body.category.to_string(),
            message: body.message,
            reason: body.reason,
        }
    });
    FlushAnswer::new(flushed.dir.clone(), &flushed.report, error)
}

fn report_text(report: &FlushReport, dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        // The local store writes in place: it has no outbox to flush.
        return "nothing to flush: the local store writes each record in place, with no outbox"
            .to_string();
    }
    let dir = dir.display().to_string();
    let mut text = format!("flushed {} record(s) from {dir}", report.posted.len());
    if report.already_posted > 0 {
        text.push_str(&format!(
            "; {} were already in the thread",
            report.already_posted
        ));
    }
    let aside = report.dead.len() + report.moved_aside.len();
    if aside > 0 {
        text.push_str(&format!("; {aside} moved to the dead letters"));
    }
    if report.busy {
        text.push_str("; another process is flushing");
    }
    text.push_str(&format!("; {} left", report.left));
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
