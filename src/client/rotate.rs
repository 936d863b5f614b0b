//! Rotation: replace a long session issue with a fresh one that carries forward what agents
//! resume from, so the thread a human reads in the forge UI (and a cold reader downloads) stays
//! bounded.
//!
//! The steps, each safe to repeat: (1) find or create the successor (same title and label, its
//! body linking the old issue); (2) post on it, as ordinary records with a `Carried-From:` header
//! and their own `Id`, the newest checkpoint and the newest health of every (agent, session) pair
//! active within `carry_days`, skipping those already there; (3) note the successor on the old
//! issue and close it. A rerun after an interruption finishes the job; sessions that were not
//! carried are still found by following the link back (`linked.rs`), with a warning.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Client;
use crate::backend::AnyThread;
use crate::error::{Error, Result};
use crate::forge::{ForgeError, ForgeThread};
use crate::format::{Identity, Kind, Record};
use crate::scan::Entry;
use crate::store::StoreError;

/// What [`Client::rotate`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Rotation {
    /// The session issue rotated (or found with nothing to rotate).
    pub from: u64,
    /// Its web page.
    pub from_url: String,
    /// The successor, when there is one.
    pub to: Option<u64>,
    /// The successor's web page.
    pub to_url: Option<String>,
    /// This run created the successor (false: an earlier or concurrent run did, or none).
    pub created: bool,
    /// Records this run carried forward.
    pub carried: usize,
    /// Records an earlier run had already carried (found on the successor by `Id`).
    pub already_carried: usize,
    /// Records that could not be carried, each with the reason (they stay readable through the
    /// link).
    pub skipped: Vec<String>,
    /// The old issue is closed.
    pub closed: bool,
    /// Why nothing, or not everything, was done, when that is the case.
    pub note: Option<String>,
    /// The old issue's body held the status table: the new issue got it, and the old one's
    /// table now says where the session continues.
    pub dashboard: bool,
}

impl Client<AnyThread> {
    /// Rotates the session issue now (`forgestate rotate`): see the module documentation.
    /// Idempotent: a rerun after an interruption finishes the rotation and never carries a
    /// record twice; run on an issue that holds only records carried into it, it does nothing.
    pub async fn rotate(&self) -> Result<Rotation> {
        self.without_answer(Some("a rotation has nothing to answer without the forge"));
        let forge = self.thread_raw().forge().ok_or_else(|| {
            Error::config(
                "only a forge's session issue is rotated; the local store has no comment list \
                 for a human to read, so it is never rotated",
            )
        })?;
        let old = forge
            .current_issue()
            .await
            .map_err(forge_err)?
            .ok_or_else(|| {
                Error::config(format!(
                    "no open session issue titled {:?} in {}; nothing to rotate",
                    forge.settings().title,
                    forge.settings().repo
                ))
            })?;
        self.rotate_old(forge, old).await
    }

    /// Rotates `old`, an open session issue (the head, or one a newer open issue continues).
    pub(super) async fn rotate_old(
        &self,
        forge: &ForgeThread,
        old: crate::forge::Issue,
    ) -> Result<Rotation> {
        let mut report = Rotation {
            from: old.number.0,
            from_url: old.html_url.clone(),
            ..Rotation::default()
        };
        let pending = forge.find_successor(old.number).await.map_err(forge_err)?;
        if let Some(new) = &pending
            && self.left_to_its_carrier(forge, old.number, new).await?
        {
            return Ok(left_report(report, new));
        }
        let trust = self.trust().await?;
        let listing = forge.thread_comments(old.number).await.map_err(forge_err)?;
        let old_scan = self.scan_listing(listing, &trust);
        if pending.is_none()
            && old_scan
                .entries
                .iter()
                // The other members' records merged in: the ones this issue has a copy of are
                // read as the originals, so only this issue's own records decide.
                .filter(|e| e.comment.issue.is_none_or(|n| n == old.number.0))
                .all(|e| e.record.carried_from.is_some())
        {
            report.note = Some(format!(
                "session issue {} holds no record besides those carried into it; nothing to \
                 rotate",
                old.number
            ));
            return Ok(report);
        }
        let successor = forge.successor(&old).await.map_err(forge_err)?;
        let new = successor.issue;
        // Another run created it, or took over a stopped one, while this one read the old
        // issue: it is carrying.
        if !successor.created
            && !successor.lost_race
            && self.left_to_its_carrier(forge, old.number, &new).await?
        {
            return Ok(left_report(report, &new));
        }
        report.to = Some(new.number.0);
        report.to_url = Some(new.html_url.clone());
        report.created = successor.created;
        if successor.lost_race {
            report.note = Some(format!(
                "a concurrent rotation created {} first and is carrying the records; run \
                 `forgestate rotate` again if it was interrupted",
                new.number
            ));
            return Ok(report);
        }
        let days = forge.settings().carry_days;
        let picks = to_carry(&old_scan.entries, days, Utc::now());
        let there = self.scan_listing(
            forge.issue_comments(new.number).await.map_err(forge_err)?,
            &trust,
        );
        // By `Id`, or a seed record's content (`format/identity.rs`).
        let there: HashSet<Identity> = there.entries.iter().map(|e| e.record.identity()).collect();
        let limit = forge.settings().rotate_after;
        if limit > 0 && picks.len() as u64 >= limit {
            tracing::warn!(
                "rotate_after ({limit}) is not above the {} records a rotation carries: the new \
                 issue is due again almost at once; raise [forge] rotate_after",
                picks.len()
            );
        }
        for entry in picks {
            let what = describe(&entry.record);
            let carried = match self.prepare(
                entry
                    .record
                    .clone()
                    .carried(old.number.0)
                    .first_posted_at(entry.comment.created_at)
                    .edited_before_carry(entry.comment.edited, entry.comment.updated_at),
            ) {
                Ok(r) => r,
                Err(e) => {
                    report.skipped.push(format!("{what}: {e}"));
                    continue;
                }
            };
            if there.contains(&carried.identity()) {
                report.already_carried += 1;
                continue;
            }
            match self.carry(forge, new.number, carried).await {
                Ok(()) => report.carried += 1,
                Err(Carry::Refused(why)) => report.skipped.push(why),
                Err(Carry::Failed(e)) => return Err(e),
            }
        }
        forge.close_rotated(&old, &new).await.map_err(forge_err)?;
        report.closed = true;
        let policy = &self.dashboard.policy;
        match self
            .carry_dashboard(old.number, new.number, &new.html_url, policy)
            .await
        {
            Ok(carried) => report.dashboard = carried,
            Err(e) => report.skipped.push(format!(
                "the status table in the old issue's body: {e}; run `forgestate status --publish`"
            )),
        }
        tracing::info!(
            "rotated session issue {} to {}: {} record(s) carried",
            old.number,
            new.number,
            report.carried
        );
        Ok(report)
    }

    /// Whether the rotation of `old` to its open successor `new` is left to the run carrying it
    /// (see [`STALLED`](crate::forge::STALLED)): `new` was created, or got a record carried
    /// from `old`, less than that ago by the forge's clock, and not by this machine's own
    /// rotation (which a rerun here finishes at once). Many writers find a long issue due at once; each carrying the same
    /// records would pile copies on the new head (issue #42's 64-writer soak). When it is left,
    /// this machine writes to `new` from now on.
    async fn left_to_its_carrier(
        &self,
        forge: &ForgeThread,
        old: crate::forge::IssueNumber,
        new: &crate::forge::Issue,
    ) -> Result<bool> {
        if forge.rotating_here(new.number) {
            return Ok(false);
        }
        // Under way while it shows progress: created, or given a carried record, less than
        // `STALLED` ago. A run cut by its command's wait budget or killed shows none, and the
        // next machine finishes it (issue #42: a rotation stopped near the end of a run must
        // not stay open for the minute of `UNDER_WAY`).
        let under_way = forge.moving(new.created_at) || {
            let lately = forge.comments_lately(new.number).await.map_err(forge_err)?;
            let trust = self.trust().await?;
            let lately = self.scan_listing(lately, &trust);
            lately
                .entries
                .iter()
                .any(|e| e.record.carried_from == Some(old.0) && forge.moving(e.comment.created_at))
        };
        if under_way {
            forge.adopt_successor(new);
            // Looked at again with this machine's next record, which finishes it once the run
            // shows no progress.
            forge.note_left(old);
        }
        Ok(under_way)
    }

    /// The open successor of `old` when its rotation is under way in another run, which is
    /// left to finish it ([`Client::left_to_its_carrier`]).
    pub(super) async fn under_way(
        &self,
        forge: &ForgeThread,
        old: crate::forge::IssueNumber,
    ) -> Result<Option<crate::forge::Issue>> {
        let Some(new) = forge.find_successor(old).await.map_err(forge_err)? else {
            return Ok(None);
        };
        Ok(self
            .left_to_its_carrier(forge, old, &new)
            .await?
            .then_some(new))
    }

    /// Rotates when automatic rotation is on (`rotate_after` > 0) and the session issue was
    /// last seen with more comments than that. Costs no request when it is not due: the count
    /// comes from reads of the issue that happen anyway (discovery, the periodic recheck).
    /// Tidies the chain first ([`Client::tidy_chain`]; free when there is nothing to tidy): a
    /// failure there is a warning, since readers merge the members anyway.
    pub async fn rotate_if_due(&self) -> Result<Option<Rotation>> {
        if let Err(e) = self.tidy_chain().await {
            tracing::warn!(
                "cannot tidy the session thread ({e}); its records stay readable, and the next \
                 record tries again"
            );
        }
        let Some(forge) = self.thread_raw().forge() else {
            return Ok(None);
        };
        let Some(n) = forge.rotation_due() else {
            return Ok(None);
        };
        // Only the issue seen over its limit is rotated: when the thread has moved on (another
        // machine rotated it), the new head is not due just because the old one was, and
        // rotating it would close it within seconds of its creation.
        match forge.current_issue().await.map_err(forge_err)? {
            Some(old) if old.number == n => {
                if let Some(new) = self.under_way(forge, n).await? {
                    tracing::info!(
                        "session issue {n} is over its comment limit, and a rotation to {} is \
                         under way; leaving it to finish",
                        new.number
                    );
                    return Ok(None);
                }
                tracing::info!("session issue {n} is over its comment limit; rotating it");
                Ok(Some(self.rotate_old(forge, old).await?))
            }
            other => {
                tracing::info!(
                    "session issue {n} was over its comment limit, but the thread already \
                     continues in {}; not rotating",
                    other.map_or("no open issue".to_string(), |o| o.number.to_string())
                );
                Ok(None)
            }
        }
    }

    /// Renders and posts one carried (and prepared) record on issue `n`.
    pub(super) async fn carry(
        &self,
        forge: &ForgeThread,
        n: crate::forge::IssueNumber,
        record: Record,
    ) -> std::result::Result<(), Carry> {
        let what = describe(&record);
        let body = self
            .renderer
            .render(&record)
            .map(|b| self.seal(b))
            .map_err(|e| Carry::Refused(format!("{what}: {e}")))?;
        // The one out-gate, as for a flushed body: a carried record is checked and redacted
        // with this client's redactor however it was read.
        let body = self
            .outbound(&body)
            .map_err(|e| Carry::Refused(format!("{what}: {e}")))?;
        forge
            .post_on(n, &body)
            .await
            .map_err(|e| match e.status() {
                Some(400 | 413 | 422) => {
                    Carry::Refused(format!("{what}: the forge refused it: {e}"))
                }
                _ => Carry::Failed(forge_err(e)),
            })?;
        Ok(())
    }
}

/// Why one record was not carried.
pub(super) enum Carry {
    /// This record cannot be carried (too large with its new header, refused by the forge).
    Refused(String),
    /// The forge failed: stop, a rerun continues.
    Failed(Error),
}

/// The report of a rotation left to the run carrying it.
fn left_report(mut report: Rotation, new: &crate::forge::Issue) -> Rotation {
    report.to = Some(new.number.0);
    report.to_url = Some(new.html_url.clone());
    report.note = Some(format!(
        "a rotation of session issue {} to {} is under way: another run created {} and is \
         carrying the records, so it is left to that run. If that run was interrupted, \
         `forgestate rotate` finishes it a minute after its last step (on the machine that \
         started it, at once)",
        report.from, new.number, new.number
    ));
    tracing::info!("{}", report.note.as_deref().unwrap_or_default());
    report
}

/// A forge's failure as the crate's error, categorised as any store's.
pub(super) fn forge_err(e: ForgeError) -> Error {
    Error::from(StoreError::from(e))
}

/// A record as a report names it: its kind, id, agent and session.
pub(super) fn describe(r: &Record) -> String {
    format!(
        "{} {} of agent {} in session {}",
        r.kind().name(),
        r.id.as_deref().unwrap_or("(no id)"),
        r.agent,
        r.session
    )
}

/// One pair's newest checkpoint, health and end (indices into the entries), its last activity,
/// whether its newest record is an end, and its newest takeover.
type Pair = (
    Option<usize>,
    Option<usize>,
    Option<usize>,
    DateTime<Utc>,
    bool,
    Option<usize>,
);

/// The records a rotation carries, in thread order: the newest checkpoint and the newest health
/// (and end) of every (agent, session) pair that is unfinished (its newest record is not an
/// `[END]`), whatever its age, and of every other pair whose newest record is at most `days` old
/// at `now`. So an idle session is never left behind on an older issue, however many rotations
/// pass. A record carried before counts by its `Posted-At:` (else its own `Time:`: its comment
/// is only as old as that rotation), any other by when its comment was posted (the forge's
/// clock, not the agent's).
pub fn to_carry(entries: &[Entry], days: u64, now: DateTime<Utc>) -> Vec<&Entry> {
    let since = chrono::Duration::try_days(i64::try_from(days).unwrap_or(i64::MAX))
        .and_then(|d| now.checked_sub_signed(d))
        .unwrap_or(DateTime::<Utc>::MIN_UTC);
    let mut pairs: HashMap<(&str, &str), Pair> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        // A fenced record is never the pair's newest: the owner's line is carried, with the
        // takeover that fences the others (the copy keeps its place by `Posted-At:`).
        if e.comment.pending || e.fenced {
            continue;
        }
        let active = match (e.record.carried_from, e.record.posted_at) {
            (_, Some(first)) => first,
            (Some(_), None) => e.record.time,
            (None, None) => e.comment.created_at,
        };
        let key = (e.record.agent.as_str(), e.record.session.as_str());
        let slot = pairs
            .entry(key)
            .or_insert((None, None, None, active, false, None));
        match e.record.kind() {
            Kind::Checkpoint => slot.0 = Some(i),
            Kind::Health => slot.1 = Some(i),
            Kind::End => slot.2 = Some(i),
            Kind::Takeover => slot.5 = Some(i),
        }
        // Entries are in the thread's order: the last one seen is the pair's newest.
        slot.4 = e.record.kind() == Kind::End;
        slot.3 = slot.3.max(active);
    }
    let mut picked: Vec<usize> = pairs
        .into_values()
        .filter(|(_, _, _, active, ended, _)| !*ended || *active >= since)
        .flat_map(|(c, h, end, _, _, take)| c.into_iter().chain(h).chain(end).chain(take))
        .collect();
    picked.sort_unstable();
    picked.into_iter().map(|i| &entries[i]).collect()
}
