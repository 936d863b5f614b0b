//! Tidying the session thread's chain (`forge/chain.rs`): the members other than the head that
//! reads or discovery noted as holding records the head may lack (a duplicate left open by a
//! racing start whose creator died, a reopened old issue, late posts to an issue that closed or
//! was rotated away) get their newest original records carried to the head (of each agent,
//! session and kind, the newest, unless it is itself a copy), each with its own `Id`, a
//! `Carried-From:` and its first comment time in `Posted-At:`; the open ones are then closed. A
//! closed stray
//! another machine carried from less than [`UNDER_WAY`](crate::forge::UNDER_WAY) ago (after its
//! rotation's closing note) is left to that machine and tidied again with the next record: every
//! machine whose cached number named a rotated-away issue finds it at about the same time.
//! An open old issue that a newer member continues (reopened, or a rotation interrupted before
//! it closed it) is rotated again instead, which finishes that rotation.
//!
//! Readers merge the members by `Id` whether or not this ran, so carrying is only an
//! optimisation for later cold readers: a failure is a warning, never a lost record. It costs no
//! request when nothing was noted.

use std::collections::HashSet;

use serde::Serialize;

use super::Client;
use super::rotate::forge_err;
use crate::backend::AnyThread;
use crate::error::Result;
use crate::forge::MARGIN;
use crate::format::Kind;
use crate::scan::Entry;

/// What [`Client::tidy_chain`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tidied {
    /// The head the records went to.
    pub head: Option<u64>,
    /// Records carried to the head.
    pub carried: usize,
    /// Strays closed.
    pub closed: Vec<u64>,
}

impl Tidied {
    /// Counts a rotation this tidy finished.
    fn add(&mut self, finished: super::Rotation) {
        self.carried += finished.carried;
        if finished.closed {
            self.closed.push(finished.from);
        }
    }
}

impl Client<AnyThread> {
    /// Carries the records of the strays the forge noted to the head, and closes the open
    /// strays: see the module documentation. Nothing to do (no request) on the local store and
    /// in the steady state.
    pub async fn tidy_chain(&self) -> Result<Tidied> {
        let Some(forge) = self.thread_raw().forge() else {
            return Ok(Tidied::default());
        };
        if !forge.has_strays() {
            return Ok(Tidied::default());
        }
        // The head first (its discovery notes the open strays again), then the strays.
        let (head, opened) = forge.head().await.map_err(forge_err)?;
        let strays = forge.take_strays();
        let mut done = Tidied {
            head: Some(head.0),
            ..Tidied::default()
        };
        let mut looked = HashSet::new();
        for old in forge.take_left().into_iter().filter(|n| *n != head) {
            // A rotation this machine left to the run carrying it: finished here once that
            // run shows no progress (a rotation stopped by its command's wait budget, or
            // killed), or left again (and noted again) while it does. Nothing to do once it
            // is finished.
            let Some(target) = forge.current_issue().await.map_err(forge_err)? else {
                continue;
            };
            if target.number != old {
                continue;
            }
            looked.insert(old);
            if self.under_way(forge, old).await?.is_some() {
                continue;
            }
            done.add(self.rotate_old(forge, target).await?);
        }
        let trust = self.trust().await?;
        let from = opened - MARGIN;
        let strays = strays.into_iter().filter(|s| s.issue != head);
        for stray in strays.filter(|s| !looked.contains(&s.issue)) {
            let target = match stray.continued {
                true => forge.current_issue().await.map_err(forge_err)?,
                false => None,
            };
            if let Some(old) = target.filter(|t| t.number == stray.issue) {
                if let Some(new) = self.under_way(forge, old.number).await? {
                    // Its creator is carrying now; every writer that found the two issues
                    // open carrying too would pile copies on the new head.
                    tracing::info!(
                        "a rotation of session issue {} to {} is under way; leaving it to finish",
                        old.number,
                        new.number
                    );
                    continue;
                }
                // An unfinished rotation, or the old issue reopened one link behind the open
                // successor: rotating it again finishes the job (carries what is missing by
                // `Id`, notes the successor, closes it). An old issue reopened deeper in the
                // chain has no open successor: it is carried from and closed like a duplicate,
                // never rotated (that would fork the thread from it).
                done.add(self.rotate_old(forge, old).await?);
                continue;
            }
            let listing = forge
                .comments_since(stray.issue, from)
                .await
                .map_err(forge_err)?;
            let upto = listing.comments.iter().map(|c| c.id).max().unwrap_or(0);
            let rotated = forge.rotation_note(&listing, head);
            let found = self.scan_listing(listing, &trust);
            let earliest = found.entries.iter().map(|e| e.comment.created_at).min();
            if let Some(earliest) = earliest {
                // A carried copy is posted after its original: the head's comments since then
                // hold every copy an earlier tidy or rotation made.
                let there = forge
                    .comments_since(head, earliest.min(opened) - MARGIN)
                    .await
                    .map_err(forge_err)?;
                let there = self.scan_listing(there, &trust);
                let carrying = |e: &Entry| {
                    e.record.carried_from == Some(stray.issue.0)
                        && e.comment.id.unwrap_or(0) > rotated.unwrap_or(0)
                        && forge.lately(e.comment.created_at)
                };
                if !stray.open && there.entries.iter().any(carrying) {
                    // Every machine whose cached number named the stray finds its late records
                    // at about the same time: one carries them, the others leave them to it (and
                    // look again with their next record), or each would post its own copies.
                    tracing::info!(
                        "another machine is carrying the late records of session issue {} to \
                         {head}; leaving them to it",
                        stray.issue
                    );
                    forge.note_untidied(stray.issue);
                    continue;
                }
                let mut ids: HashSet<String> = there
                    .entries
                    .into_iter()
                    .filter_map(|e| e.record.id)
                    .collect();
                for entry in late_originals(found.entries) {
                    // A record without an `Id` (a seed record) cannot be told apart from a copy:
                    // readers merge it where it is.
                    let Some(id) = entry.record.id.clone() else {
                        continue;
                    };
                    if !ids.insert(id) {
                        continue;
                    }
                    let record = entry
                        .record
                        .carried(stray.issue.0)
                        .first_posted_at(entry.comment.created_at)
                        .edited_before_carry(entry.comment.edited, entry.comment.updated_at);
                    let record = self.prepare(record)?;
                    match self.carry(forge, head, record).await {
                        Ok(()) => done.carried += 1,
                        Err(super::rotate::Carry::Refused(why)) => tracing::warn!(
                            "not carried from session issue {} to {head}: {why}; readers still \
                             merge it from there",
                            stray.issue
                        ),
                        Err(super::rotate::Carry::Failed(e)) => return Err(e),
                    }
                }
            }
            if stray.open && forge.close_stray(stray.issue, head).await {
                done.closed.push(stray.issue.0);
            }
            forge.note_tidied(stray.issue, upto);
        }
        if done.carried > 0 || !done.closed.is_empty() {
            tracing::info!(
                "tidied the session thread: {} record(s) carried to {head}, closed {:?}",
                done.carried,
                done.closed
            );
        }
        Ok(done)
    }
}

/// What makes two records one pair's record of one kind: agent, session and kind.
fn key(e: &Entry) -> (String, String, Kind) {
    (
        e.record.agent.clone(),
        e.record.session.clone(),
        e.record.kind(),
    )
}

/// The records of a stray worth carrying to the head: of each (agent, session, kind), the
/// newest, and only when it is an original (no `Carried-From:`/`Posted-At:`). A copy on the
/// stray came from an earlier member, which readers merge, and whose newest records a rotation
/// carried already; an older record of a pair is history, which `list --all` reads where it is.
/// Carrying everything since the head was opened instead posts the stray's whole window again
/// on every tidy, and copies of copies pile up on each head (seen in the soak: 7,572 comments
/// for 300 records).
fn late_originals(entries: Vec<Entry>) -> Vec<Entry> {
    let mut newest = std::collections::HashMap::new();
    for (n, e) in entries.iter().enumerate() {
        newest.insert(key(e), n);
    }
    entries
        .into_iter()
        .enumerate()
        .filter(|(n, e)| {
            newest.get(&key(e)) == Some(n)
                && e.record.carried_from.is_none()
                && e.record.posted_at.is_none()
        })
        .map(|(_, e)| e)
        .collect()
}
