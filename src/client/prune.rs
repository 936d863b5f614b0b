//! Prune: delete this identity's older records, keeping the newest N of each agent, session and
//! kind.
//!
//! The plan is computed from [`Client::scan`] (trusted, valid, deduped records), so only
//! records count: a comment that is not a record is never touched. Records are grouped by
//! (agent, session, kind) and the newest `keep` of each group stay, whoever posted them;
//! of the older ones, only those posted by the store's own identity ([`Thread::whoami`]) are
//! deleted. Checkpoints and health signals are counted apart, so a run of heartbeats never
//! pushes out the checkpoint an agent resumes from. With `keep >= 1` the newest record of every
//! group always stays. A record's later copies (re-posts with the same `Id:`, which readers skip)
//! go with it, newest first, so no copy is left to stand in for it at a newer place in the
//! thread; when a copy is not ours to delete, the record stays too.
//!
//! Only the records a reader believes count (the fencing rule, `crate::scan::fence`): a fenced
//! record is never one of the newest `keep`, and is never deleted as old; a `[TAKEOVER]` that
//! decides whether a record left is fenced stays, and with `keep`, so does the newest record of
//! a writer the session was taken from (how it learns so). So `resume` and `latest` answer the
//! same after a prune, for every reader and writer.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::scan::{CommentInfo, Entry, Filter, Rejection};
use crate::store::{Deleted, Thread};

/// How many comments one [`Thread::delete`] call is handed, so progress is reported as it goes
/// and a failure loses at most one batch's worth of accounting.
const BATCH: usize = 50;

/// What to prune.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneOptions {
    /// Records to keep per (agent, session, kind); at least 1.
    pub keep: usize,
    /// Only agents matching this glob.
    pub agent: Option<String>,
    /// Only sessions matching this glob.
    pub session: Option<String>,
    /// Exactly these records (by record id) instead of all but the newest `keep`: what a program
    /// that keeps its own index deletes (the LangGraph saver's `delete_thread`, `prune`). The
    /// newest record of a group may go then; ids the thread does not hold are skipped.
    pub ids: Vec<String>,
}

/// One record the plan deletes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Doomed {
    /// The store's comment id.
    pub comment_id: u64,
    /// The record's id, when it has one.
    pub record_id: Option<String>,
    /// The agent.
    pub agent: String,
    /// The session.
    pub session: String,
    /// `checkpoint` or `health`.
    pub kind: &'static str,
    /// The checkpoint's phase or the health signal's status.
    pub what: String,
    /// When the comment was posted.
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// Where a human can see it.
    pub url: Option<String>,
}

/// What a prune would do (a dry run), or did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrunePlan {
    /// Records kept per (agent, session, kind).
    pub keep: usize,
    /// Whose records may go: the store's own identity.
    pub author: String,
    /// The records to delete, oldest first.
    pub delete: Vec<Doomed>,
    /// Matching records that stay: the newest of each group (the records a reader believes,
    /// not counting fenced ones), every fenced record, and what the fencing rule needs.
    pub kept: usize,
    /// Older matching records that stay because another author posted them.
    pub kept_other_authors: usize,
}

/// Computes what a prune would delete. Refuses when the thread cannot be read.
pub async fn plan<T: Thread>(client: &Client<T>, options: &PruneOptions) -> Result<PrunePlan> {
    client.without_answer(Some("a prune has nothing to answer without the forge"));
    if options.keep == 0 && options.ids.is_empty() {
        return Err(Error::usage(
            "--keep 0 would delete the newest record of every agent and session; keep at least 1",
        ));
    }
    let author = client.thread_raw().whoami().await?;
    let scan = client.scan().await?;
    if scan.offline {
        return Err(Error::unavailable(
            "the thread cannot be read now, so nothing can be pruned; try again when it can",
        ));
    }
    let filter = Filter {
        agent: options.agent.clone(),
        session: options.session.clone(),
        ..Filter::default()
    };
    // Later copies of a record (a re-post with the same `Id:`, or a comment that says something
    // else under it): deleting the first copy alone would promote the next one to the record,
    // in its newer place in the thread.
    let mut copies: BTreeMap<u64, Vec<CommentInfo>> = BTreeMap::new();
    for r in scan.rejected {
        if let Rejection::Duplicate { first_comment, .. }
        | Rejection::Conflict { first_comment, .. } = r.code
        {
            copies.entry(first_comment).or_default().push(r.comment);
        }
    }
    let entries = scan.entries;
    let mut groups: BTreeMap<(String, String, &'static str), Vec<usize>> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.comment.id.is_some() && filter.matches(e) {
            let key = (
                e.record.agent.clone(),
                e.record.session.clone(),
                e.record.kind().name(),
            );
            groups.entry(key).or_default().push(i);
        }
    }
    let mut out = PrunePlan {
        keep: options.keep,
        author,
        delete: Vec::new(),
        kept: 0,
        kept_other_authors: 0,
    };
    let named: std::collections::BTreeSet<&str> = options.ids.iter().map(String::as_str).collect();
    let mut gone = vec![false; entries.len()];
    for (_, group) in groups {
        // Only records a reader believes count: the newest `keep` unfenced ones stay, and the
        // older unfenced ones go, oldest first (the scan's entries are in the thread's order).
        // A fenced record is never deleted as old: `resume` counts and names it, and `history`
        // lists it, so every answer stays the same.
        let believed = group.iter().filter(|&&i| !entries[i].fenced).count();
        let mut older = believed.saturating_sub(options.keep);
        for i in group {
            let e = &entries[i];
            let doomed = match named.is_empty() {
                true if e.fenced || older == 0 => false,
                true => {
                    older -= 1;
                    true
                }
                false => e.record.id.as_deref().is_some_and(|id| named.contains(id)),
            };
            if !doomed {
                out.kept += 1;
                continue;
            }
            let Some(id) = e.comment.id.filter(|_| e.comment.author == out.author) else {
                out.kept_other_authors += 1;
                continue;
            };
            if copies.get(&id).is_some_and(|copies| {
                copies
                    .iter()
                    .any(|c| c.id.is_none() || c.author != out.author)
            }) {
                // A copy we may not delete would take the record's place: keep both.
                out.kept_other_authors += 1;
                continue;
            }
            gone[i] = true;
        }
    }
    // What the fencing rule needs stays: with --keep, a record that tells a writer the session
    // was taken from it (with --id the caller names what goes); a takeover that decides
    // whether a record left is fenced.
    if named.is_empty() {
        out.kept += crate::scan::keep_displaced(&entries, &mut gone);
    }
    out.kept += crate::scan::keep_fencing(&entries, &mut gone);
    for (e, gone) in entries.into_iter().zip(gone) {
        let Some(id) = e.comment.id.filter(|_| gone) else {
            continue;
        };
        for c in copies.remove(&id).unwrap_or_default() {
            let mut copy = e.clone();
            copy.comment = c;
            if let Some(copy_id) = copy.comment.id {
                out.delete.push(doomed(copy_id, copy));
            }
        }
        out.delete.push(doomed(id, e));
    }
    out.delete.sort_by_key(|d| d.comment_id);
    Ok(out)
}

fn doomed(comment_id: u64, e: Entry) -> Doomed {
    let kind = e.record.kind().name();
    let what = match &e.record.payload {
        crate::format::Payload::Checkpoint { phase, .. } => phase.clone(),
        crate::format::Payload::Health { status, .. } => status.clone(),
        crate::format::Payload::End { reason, .. } => reason.clone(),
        crate::format::Payload::Takeover { .. } => {
            format!("owner {}", e.record.writer.as_deref().unwrap_or("unknown"))
        }
    };
    Doomed {
        comment_id,
        record_id: e.record.id,
        agent: e.record.agent,
        session: e.record.session,
        kind,
        what,
        created_at: e.comment.created_at,
        url: e.comment.url,
    }
}

/// What [`apply`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Comments deleted now.
    pub deleted: Vec<u64>,
    /// Comments that were already gone.
    pub missing: Vec<u64>,
}

/// Deletes what `plan` lists, in batches, calling `progress(done, total)` after each. On a
/// failure, the error says how many were deleted before it (running prune again finishes the
/// job: deletes are idempotent).
pub async fn apply<T: Thread>(
    client: &Client<T>,
    plan: &PrunePlan,
    mut progress: impl FnMut(usize, usize),
) -> Result<PruneReport> {
    client.without_answer(Some("a prune has nothing to answer without the forge"));
    // Newest first: a later copy of a record goes before its first copy, so an interrupted
    // prune never leaves a copy standing in for a deleted record.
    let ids: Vec<u64> = plan.delete.iter().rev().map(|d| d.comment_id).collect();
    let mut report = PruneReport::default();
    for batch in ids.chunks(BATCH) {
        let deleted = client.thread_raw().delete(batch).await;
        // Whatever went, the read cache must not keep it (even after a partial failure).
        client.forget_read_cache()?;
        match deleted {
            Ok(Deleted { deleted, missing }) => {
                report.deleted.extend(deleted);
                report.missing.extend(missing);
            }
            Err(e) => {
                let done = report.deleted.len() + report.missing.len();
                let e = Error::from(e);
                if done == 0 {
                    return Err(e);
                }
                return Err(partial(e, done, ids.len()));
            }
        }
        progress(report.deleted.len() + report.missing.len(), ids.len());
    }
    report.deleted.sort_unstable();
    report.missing.sort_unstable();
    Ok(report)
}

/// `e`, saying how far the prune got first, in the same category.
fn partial(e: Error, done: usize, total: usize) -> Error {
    let message = format!(
        "{e} (after deleting {done} of {total}; run prune again to finish, it is idempotent)"
    );
    match e.category() {
        crate::error::Category::Config => Error::config(message),
        crate::error::Category::TempFail => Error::unavailable(message),
        _ => e,
    }
}
