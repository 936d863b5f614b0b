//! Flushing: posting what an outbox holds, in order, exactly once, under its lock.
//!
//! Each round lists the thread since a little before the oldest entry, skips entries whose body
//! the thread already holds (a post committed before its answer was lost), posts the rest one by
//! one, and moves an entry out of the queue (to the landed, [`Outbox::land`]) only after its post
//! is confirmed. Entries that are not records, and
//! records the forge refuses for good, go to the dead letters so they never block the queue.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chrono::Utc;

use super::{DeadLetter, Durable, FLUSH_PATIENCE, FlushReport, Outbox, SKEW, Spooled};
use crate::error::{Category, Error};
use crate::store::{Effort, Thread, normal_body};

/// How a flush runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Drain<'a> {
    /// The `flush` verb: the full retry budget, waiting for another flusher.
    Flush,
    /// A command's drain: one attempt per request, no request after the deadline (the first
    /// listing and post aside).
    Budget(Instant),
    /// A saving command's drain: one attempt per request with this effort, until `own` is
    /// posted or a request fails.
    Until {
        own: &'a std::path::Path,
        effort: Effort,
    },
}

/// The least a drain waits for the forge to say who we are, however little budget is left.
const WHOAMI_FLOOR: Duration = Duration::from_secs(1);

impl<T: Thread> Durable<T> {
    pub(super) async fn flush_from_with(&self, source: &Outbox, how: Drain<'_>) -> FlushReport {
        let mut report = FlushReport::default();
        let (deadline, own, effort) = match how {
            Drain::Flush => (None, None, Effort::Full),
            Drain::Budget(deadline) => (Some(deadline), None, Effort::Once),
            Drain::Until { own, effort } => (None, Some(own), effort),
        };
        let lock = match how {
            Drain::Flush => source.lock(FLUSH_PATIENCE).await,
            _ => source.try_lock(),
        };
        let _lock = match lock {
            Ok(Some(l)) => l,
            Ok(None) => {
                report.busy = true;
                report.left = source.len();
                return report;
            }
            Err(e) => {
                report.error = Some(Error::io("cannot lock the outbox", source.dir(), e));
                report.left = source.len();
                return report;
            }
        };
        let mut task = self
            .progress
            .task("posting the outbox", Some(source.len() as u64));
        let mut sent_any = false;
        let out_of_time =
            |sent_any: bool| sent_any && deadline.is_some_and(|d| Instant::now() >= d);
        // Entries that could not be moved aside (or removed once posted) are left alone for the
        // rest of this flush, so they are neither retried nor warned about again.
        let mut stuck: HashSet<PathBuf> = HashSet::new();
        // Entries pushed while we flush are picked up by the next round; a round that makes no
        // progress ends the flush.
        'rounds: for _round in 0..1000 {
            let progress_before = progress(&report);
            let entries = match source.pending() {
                Ok(e) => e,
                Err(e) => {
                    report.error = Some(Error::io("cannot read the outbox", source.dir(), e));
                    break;
                }
            };
            let entries: Vec<Spooled> = entries
                .into_iter()
                .filter(|e| !stuck.contains(&e.path))
                .collect();
            if entries.is_empty() {
                break;
            }
            task.set_total(Some(progress(&report) as u64 + entries.len() as u64));
            let mut good = Vec::with_capacity(entries.len());
            for mut entry in entries {
                match self.check(&entry) {
                    Ok(None) => good.push(entry),
                    Ok(Some(gated)) => {
                        tracing::info!(
                            "{}: secrets redacted on its way out of the outbox",
                            entry.path.display()
                        );
                        entry.body = gated;
                        good.push(entry)
                    }
                    Err(why) => {
                        if !self.move_aside(source, &entry, &why, &mut report) {
                            stuck.insert(entry.path.clone());
                        }
                    }
                }
            }
            let Some(first) = good.first() else {
                continue;
            };
            if out_of_time(sent_any) {
                break;
            }
            let listing = match self
                .thread
                .list_with(Some(first.spooled_at - SKEW), effort)
                .await
            {
                Ok(listing) => listing,
                Err(e) => {
                    report.error = Some(e.into());
                    break;
                }
            };
            // Only our own comments can be earlier attempts (the login is cached after one look).
            // A drain bounds the look like any other request; without the answer it stops rather
            // than let someone else's copy of a body pass for our post.
            let bound = match how {
                Drain::Flush => None,
                Drain::Budget(d) => Some(d),
                // As long as a command's drain may take.
                Drain::Until { .. } => Some(Instant::now() + self.policy.budget),
            };
            let me = match bound {
                None => self.thread.whoami().await.ok(),
                Some(d) => {
                    let left = d
                        .saturating_duration_since(Instant::now())
                        .max(WHOAMI_FLOOR);
                    match tokio::time::timeout(left, self.thread.whoami()).await {
                        Ok(me) => me.ok(),
                        Err(_) => {
                            report.error = Some(Error::unavailable(format!(
                                "the forge did not say who we are within {} s; the records \
                                 wait in the outbox, run `forgestate flush` later",
                                left.as_secs_f32().ceil()
                            )));
                            break;
                        }
                    }
                }
            };
            let present: HashSet<String> = listing
                .comments
                .into_iter()
                .filter(|c| me.as_ref().is_none_or(|m| *m == c.author))
                .map(|c| normal_body(&c.body))
                .collect();
            for entry in &good {
                task.advance_to(progress(&report) as u64);
                if present.contains(&normal_body(&entry.body)) {
                    report.already_posted += 1;
                } else {
                    if out_of_time(sent_any) {
                        break 'rounds;
                    }
                    sent_any = true;
                    tracing::debug!("stage: flushing {}", entry.path.display());
                    match self.thread.append_with(&entry.body, effort).await {
                        Ok(c) => report.posted.push((entry.path.clone(), c)),
                        Err(e) => {
                            let e = Error::from(e);
                            if e.category() == Category::Data {
                                if let Err(io) = self.bury(source, entry, &e, &mut report) {
                                    // Posting it again would be refused again: stop here.
                                    report.error = Some(Error::io(
                                        "cannot move a refused record to the dead letters",
                                        source.dead_dir(),
                                        io,
                                    ));
                                    break 'rounds;
                                }
                                continue;
                            }
                            report.error = Some(e);
                            break 'rounds;
                        }
                    }
                }
                let done = own.is_some_and(|own| entry.path == own);
                // Kept among the landed until a read of the thread holds it: the machine's
                // offline answers know its own records, wherever a kill comes.
                match source.land(&entry.path) {
                    Ok(()) => tracing::debug!("stage: flushed {}", entry.path.display()),
                    // The next flush finds the body in the thread and removes it then.
                    Err(e) => {
                        tracing::warn!(
                            "cannot remove flushed outbox entry {}: {e}",
                            entry.path.display()
                        );
                        stuck.insert(entry.path.clone());
                    }
                }
                if done {
                    // The command's own record is in: later entries are another command's.
                    break 'rounds;
                }
            }
            task.advance_to(progress(&report) as u64);
            if progress(&report) == progress_before {
                break;
            }
        }
        drop(task);
        report.left = source.len();
        match &report.error {
            Some(e) => {
                source.record_failure(&e.to_string());
                if e.category() == Category::TempFail {
                    self.unreachable.store(true, Ordering::Relaxed);
                }
            }
            None => source.record_success(),
        }
        report
    }

    /// Whether an entry may be posted at all, and the body to post when the gate rewrote it.
    pub(super) fn check(&self, entry: &Spooled) -> std::result::Result<Option<String>, String> {
        if let Some(why) = &entry.unreadable {
            return Err(format!("the file {why}"));
        }
        if entry.body.trim().is_empty() {
            return Err("the file is empty".into());
        }
        match &self.validator {
            Some(validator) => validator.check(&entry.body),
            None => Ok(None),
        }
    }

    /// Moves a non-record aside; `false` when it cannot be moved (it was warned about).
    fn move_aside(
        &self,
        source: &Outbox,
        entry: &Spooled,
        why: &str,
        report: &mut FlushReport,
    ) -> bool {
        match source.bury(entry, why, None) {
            Ok(path) => {
                tracing::warn!(
                    "moved {} aside to {}: {why}; it was never posted",
                    entry.path.display(),
                    path.display()
                );
                report.moved_aside.push(letter(path, why, None));
                true
            }
            Err(e) => {
                tracing::warn!(
                    "{} is not a record ({why}) and cannot be moved aside: {e}; it is skipped",
                    entry.path.display()
                );
                false
            }
        }
    }

    /// Moves a refused record to the dead letters; the IO error when it cannot be moved.
    fn bury(
        &self,
        source: &Outbox,
        entry: &Spooled,
        e: &Error,
        report: &mut FlushReport,
    ) -> std::io::Result<()> {
        let reason = "the forge refused it";
        let answer = e.to_string();
        match source.bury(entry, reason, Some(&answer)) {
            Ok(path) => {
                tracing::error!(
                    "{}: {reason} ({answer}); moved to the dead letters, the queue goes on. Fix \
                     or drop the file by hand, or post it again with `forgestate checkpoint`",
                    path.display()
                );
                report.dead.push(letter(path, reason, Some(answer)));
                Ok(())
            }
            Err(io) => {
                tracing::error!(
                    "{}: {reason} ({answer}), and it cannot be moved aside ({io})",
                    entry.path.display()
                );
                Err(io)
            }
        }
    }
}

/// How much a flush has done so far: a round that leaves this unchanged made no progress.
fn progress(report: &FlushReport) -> usize {
    report.posted.len() + report.already_posted + report.dead.len() + report.moved_aside.len()
}

fn letter(path: PathBuf, reason: &str, answer: Option<String>) -> DeadLetter {
    DeadLetter {
        path,
        reason: reason.to_string(),
        answer,
        moved_at: Utc::now(),
    }
}
