//! `export` and `import`: a thread moved between a forge (or a local store) and a local store.
//!
//! Export writes the believed records of the whole thread (a forge's every chain member, the
//! earlier issues a rotation closed included) into a local store, each comment with its id,
//! author and times, so the exported store resumes as the thread did. Import posts a local
//! store's records to this client's store in thread order, through [`Client::save`] like every
//! other record (redaction, the record checks, the outbox, signing), each once: a record whose
//! `Id` (or, for a seed record without one, whose content) the target already holds, posted or
//! waiting in this machine's outbox, is skipped, so a rerun posts nothing new and an
//! interrupted import resumes where it stopped. The original time is kept as `Posted-At:`.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use chrono::SubsecRound;
use serde::Serialize;

use super::ListQuery;
use super::linked::MAX_HISTORY_HOPS;
use super::{Client, Outcome};
use crate::error::{Category, Error, Result};
use crate::format::Identity;
use crate::scan::Trust;
use crate::store::{Comment, Listing, LocalThread, THREAD_FILE, Thread};

/// What [`Client::export_to`] did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Exported {
    /// The local store written (its thread file).
    pub to: String,
    /// Believed records in the thread.
    pub records: usize,
    /// Records written by this run.
    pub written: usize,
    /// Records the store already held (an export run again).
    pub already: usize,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// What [`Client::import_from`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Imported {
    /// The local store read.
    pub from: String,
    /// Where the records went ([`Thread::describe`]).
    pub to: String,
    /// Records in the local store.
    pub records: usize,
    /// Records posted by this run.
    pub posted: usize,
    /// Records the target already held (posted before, or waiting in the outbox).
    pub already: usize,
    /// Records spooled to this machine's outbox because the target could not take them now
    /// (a later command or `flush` posts them). The import stops at the first one: run it again
    /// once the forge answers.
    pub spooled: usize,
    /// Records refused by the checks every post goes through, each with why.
    pub refused: Vec<String>,
    /// Records not tried because the import stopped early (an outage).
    pub left: usize,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

impl<T: Thread> Client<T> {
    /// Writes the thread's believed records into the local store in `dir` (created when
    /// missing), each with its comment id, author and times. Running it again writes only what
    /// is new; a directory holding another thread is refused.
    pub async fn export_to(&self, dir: &Path) -> Result<Exported> {
        self.without_answer(Some("an export has nothing to answer without the forge"));
        let mut all: BTreeMap<u64, Comment> = BTreeMap::new();
        let mut warnings = Vec::new();
        let head = self.thread_raw().list(None).await?;
        warnings.extend(head.warnings);
        all.extend(head.comments.into_iter().map(|c| (c.id, c)));
        for hops in 1..=MAX_HISTORY_HOPS {
            let Some(earlier) = self.thread_raw().predecessor(hops).await? else {
                break;
            };
            warnings.extend(earlier.listing.warnings);
            for c in earlier.listing.comments {
                all.entry(c.id).or_insert(c);
            }
        }
        let trust = self.trust().await?;
        let listing = Listing {
            comments: all.values().cloned().collect(),
            ..Listing::default()
        };
        let scan = self.scan_listing(listing, &trust);
        warnings.extend(scan.warnings);
        let mut keep: Vec<Comment> = scan
            .entries
            .iter()
            .filter_map(|e| e.comment.id.and_then(|id| all.remove(&id)))
            .collect();
        // The store keeps comment ids increasing; readers of the export order the records by
        // first posting again (their `Posted-At:` travels with them), so a thread that holds
        // copies ranked before older originals still exports.
        keep.sort_by_key(|c| c.id);
        let records = keep.len();
        let target = LocalThread::new(dir, "export").private();
        let kept = target.append_kept(keep).await?;
        Ok(Exported {
            to: dir.join(THREAD_FILE).display().to_string(),
            records,
            written: kept.written,
            already: kept.present,
            warnings,
        })
    }

    /// Posts the records of the local store in `dir` to this client's store, in thread order,
    /// each once (see the module documentation). Fails when `dir` holds no local store.
    pub async fn import_from(&self, dir: &Path) -> Result<Imported> {
        self.without_answer(Some("an import has nothing to answer without the forge"));
        let file = dir.join(THREAD_FILE);
        // A symbolic link goes on to be refused by name when the store opens it.
        let link = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink());
        if !file.is_file() && !link {
            return Err(Error::usage(format!(
                "{} holds no local store (no {THREAD_FILE}); give the directory `export --to` \
                 wrote, or a local store's directory",
                dir.display()
            )));
        }
        crate::fsutil::check_private_dir(
            dir,
            "anyone could plant records there that import would post with your token",
        )
        .map_err(|e| Error::usage(format!("refusing to import: {e}")))?;
        let source = LocalThread::new(dir, "import").private();
        let listing = source.list(None).await?;
        let from = crate::scan::scan(listing, &Trust::Everyone);
        let mut report = Imported {
            from: file.display().to_string(),
            to: self.thread_raw().describe(),
            records: from.entries.len(),
            warnings: from.warnings,
            ..Imported::default()
        };
        let whole = ListQuery::default().whole_history();
        let there = match self.query(&whole).await {
            Ok(there) => there,
            // A repository with no session issue yet (a store moved to a new repository): the
            // issue is made as a save makes it (`auto_init`), which then holds nothing.
            Err(e) if e.category() == Category::Config && !from.entries.is_empty() => {
                self.thread_raw()
                    .prepare_write()
                    .await
                    .map_err(Error::from)?;
                self.query(&whole).await?
            }
            Err(e) => return Err(e),
        };
        if there.offline {
            return Err(Error::unavailable(
                "the forge cannot be read, so which records it already holds is unknown; try \
                 again when it answers (nothing was posted)",
            ));
        }
        // The one identity rule (`format/identity.rs`): by `Id`, or a seed record's content.
        let held: HashSet<Identity> = there.entries.iter().map(|e| e.record.identity()).collect();
        let total = from.entries.len();
        for (done, entry) in from.entries.into_iter().enumerate() {
            if held.contains(&entry.record.identity()) {
                report.already += 1;
                continue;
            }
            // The posted copy is a fresh comment: say so here, and keep the flag (`Edited-At:`).
            if let Some(warning) = crate::scan::edited_warning(&entry) {
                report
                    .warnings
                    .push(format!("imported as it now reads: {warning}"));
            }
            // A body holds whole microseconds (the local store's clock has nanoseconds).
            let first = entry.comment.created_at.trunc_subsecs(6);
            let record = (entry.record.clone().first_posted_at(first)).edited_before_carry(
                entry.comment.edited,
                entry.comment.updated_at.trunc_subsecs(6),
            );
            match self.save_as_written(record).await {
                Outcome::Posted(_) => report.posted += 1,
                Outcome::Spooled { cause, .. } => {
                    report.spooled += 1;
                    report.left = total - done - 1;
                    report.warnings.push(format!(
                        "the import stopped: a record was spooled to the outbox ({cause}); run \
                         the import again when the forge answers"
                    ));
                    break;
                }
                Outcome::Failed(e) if e.category() != Category::Data => {
                    if e.category() != Category::TempFail {
                        return Err(e);
                    }
                    return Err(Error::unavailable(format!(
                        "the import stopped after posting {} record(s) ({} already there) of \
                         {total}: {e}; run it again when the store answers: it resumes where it \
                         stopped",
                        report.posted, report.already
                    )));
                }
                Outcome::Failed(e) => (report.refused)
                    .push(format!("{}: {e}", super::rotate::describe(&entry.record))),
            }
        }
        Ok(report)
    }
}
