//! A session over time, on the client: the `Parent:` every record carries (the newest record of
//! its agent and session this client wrote or read back), compare-and-set (`--if-latest`),
//! `checkpoint --merge`, and the read of one pair's records those need.
//!
//! The lineage costs no request: a client remembers the id of each record it saves and the
//! newest id each `resume` returns, in memory, and with a lineage directory on this machine's
//! disk too (`known.rs`; the CLI keeps one, so each fresh process continues the last). A client
//! that knows nothing of the pair yet writes no `Parent:` unless told one (`--parent`); reading
//! the thread to find one would cost a request, and would hide a second writer anyway (it names
//! the newest record, not the one the writer continued from). Only `if_latest` and `merge` read
//! the pair.

use serde_json::{Map, Value};

use super::{Client, Outcome};
use crate::error::{Error, Result};
use crate::format::{Kind, Payload, Record, format_time};
use crate::mirror::Keep;
use crate::scan::{Entry, Scan};
use crate::store::Thread;

/// How a write continues its session (see [`Client::save_as`]).
#[derive(Debug, Clone, Default)]
pub struct Write {
    /// Compare-and-set: post only when the newest record of the agent and session is this id;
    /// otherwise post nothing and fail with [`Error::Conflict`].
    pub if_latest: Option<String>,
    /// Start from the data of the agent and session's newest checkpoint and lay this record's
    /// data on top (top-level keys replace); without it a checkpoint is a complete snapshot.
    pub merge: bool,
    /// The `Parent:` to write. Default: `if_latest`, else the newest record this client knew
    /// (none for a client that knows nothing of the pair, unless it read it for `merge`).
    pub parent: Option<String>,
    /// Read the session first (one warm request) and post nothing, failing with
    /// [`Error::Fenced`], when another writer took it over since this client's writer wrote
    /// it. Without it a fenced writer's save still posts, and every reader ignores it.
    pub check_owner: bool,
}

/// One pair's records, read for a write or a resume.
pub(crate) struct PairRead {
    /// The pair's records in thread order; only the newest checkpoint has its data.
    pub entries: Vec<Entry>,
    /// The whole scan (warnings, offline, rejected), its entries moved out.
    pub scan: Scan,
    /// Whom the read trusted (`None` when offline).
    pub trust: Option<crate::scan::Trust>,
    /// Every (agent, session) with a checkpoint the read saw (for `resume`'s "did you mean").
    pub names: std::collections::BTreeSet<(String, String)>,
}

impl<T: Thread> Client<T> {
    /// Remembers `record` as the newest of its pair this client knows.
    pub(super) fn remember(&self, record: &Record) {
        if let Some(id) = &record.id {
            self.known.set(&record.agent, &record.session, id.clone());
        }
    }

    /// The records of one (agent, session) pair, in thread order, with the data of its newest
    /// checkpoint only (the others' data is `null`). Not scrubbed: the pair is found by its names
    /// as written, and the caller scrubs what it answers ([`Client::scrub_entry`]).
    pub(crate) async fn read_pair(&self, agent: &str, session: &str) -> Result<PairRead> {
        let names = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let pair = |e: &Entry| {
            if e.record.kind() == Kind::Checkpoint
                && let Ok(mut names) = names.lock()
            {
                names.insert((e.record.agent.clone(), e.record.session.clone()));
            }
            e.record.agent == agent && e.record.session == session
        };
        let whole = |e: &Entry| e.record.kind() == Kind::Checkpoint;
        let (mut scan, trust) = self
            .scan_unscrubbed(Keep::Pair(&pair, &whole, (agent, session)))
            .await?;
        let entries = std::mem::take(&mut scan.entries)
            .into_iter()
            .filter(pair)
            .collect();
        Ok(PairRead {
            entries,
            scan,
            trust,
            names: names.into_inner().unwrap_or_default(),
        })
    }

    /// Saves `record` as [`Client::save`] does, continuing its session as `write` says:
    /// compare-and-set, merge, and the `Parent:` line. A refused compare-and-set posts nothing.
    ///
    /// On the local store a compare-and-set is one critical section between processes: the
    /// append checks, under the store's lock, that no record of the pair landed since the read,
    /// and when one did the check is made again from a fresh read (which names the newer
    /// record). A forge cannot lock: there it is a read, then a post.
    pub async fn save_as(&self, record: Record, write: Write) -> Outcome {
        self.saving();
        for _ in 0..CAS_TRIES {
            let (continued, seen) = match self.continue_session(record.clone(), write.clone()).await
            {
                Ok(continued) => continued,
                Err(e) => return Outcome::Failed(e),
            };
            let continued = self.as_this_writer(continued);
            let guard = seen.map(|seen| (seen.after, seen.guard(&continued)));
            if let Some(outcome) = Box::pin(self.save_written(continued, guard)).await {
                return outcome;
            }
        }
        Outcome::Failed(Error::Conflict {
            message: format!(
                "not posted: records of agent {} in session {} kept landing between the check of \
                 --if-latest and the post ({CAS_TRIES} tries); resume to see their state, then \
                 write again with --if-latest",
                record.agent, record.session
            ),
        })
    }

    /// The record to save, with what the compare-and-set read of the pair saw, when there is one.
    async fn continue_session(
        &self,
        mut record: Record,
        write: Write,
    ) -> Result<(Record, Option<Seen>)> {
        for (flag, id) in [("if_latest", &write.if_latest), ("parent", &write.parent)] {
            if id.as_deref().is_some_and(|id| id.trim().is_empty()) {
                return Err(Error::usage(format!(
                    "{flag} is empty; give a record id (resume prints it as latest_id)"
                )));
            }
        }
        for (field, id) in [("if_latest", &write.if_latest), ("parent", &write.parent)] {
            if let Some(id) = id.as_deref() {
                check_record_id(field, id)?;
            }
        }
        let known = self.known.get(&record.agent, &record.session);
        let must_read = write.if_latest.is_some() || write.merge || write.check_owner;
        let read = match must_read {
            false => None,
            true => match self.read_pair(&record.agent, &record.session).await {
                Ok(read) => Some(read),
                // A forge with no session issue yet holds no record: nobody took the session
                // over and there is nothing to merge onto, so only a compare-and-set must fail.
                Err(e) if write.if_latest.is_none() && crate::forge::no_session_issue(&e) => None,
                Err(e) => return Err(e),
            },
        };
        let Some(read) = read else {
            let parent = write.parent.or(record.parent.take()).or(known);
            return Ok((record.with_parent(parent), None));
        };
        let entries: Vec<Entry> = read
            .entries
            .into_iter()
            .map(|e| self.scrub_entry(e))
            .collect();
        if read.scan.offline {
            return Err(Error::Unavailable {
                message: format!(
                    "cannot {} agent {} in session {}: the store could not be read, so nothing \
                     was posted; try again when it answers",
                    match (write.merge, write.if_latest.is_some()) {
                        (true, _) => "merge onto the newest checkpoint of",
                        (false, true) => "check --if-latest for",
                        (false, false) => "check the owner of",
                    },
                    record.agent,
                    record.session
                ),
            });
        }
        let seen = match write.if_latest {
            Some(_) => Seen::of(&entries),
            None => None,
        };
        let writer = record.writer.as_deref().unwrap_or_else(|| self.writer());
        super::takeover::refuse_fenced(&entries, &record.agent, &record.session, writer)?;
        // Fenced records are not the session's: never the newest, never merged from.
        let entries: Vec<Entry> = entries.into_iter().filter(|e| !e.fenced).collect();
        let newest = entries.last();
        if let Some(expected) = &write.if_latest {
            refuse_unless_latest(&record, expected, newest)?;
        }
        if write.merge {
            merge_onto(&mut record, &entries);
        }
        let latest = newest.and_then(|e| e.record.id.clone());
        let parent = write
            .parent
            .or(record.parent.take())
            .or(write.if_latest)
            .or(known)
            .or(latest);
        Ok((record.with_parent(parent), seen))
    }

    /// Ends a session: posts an `[END]` record for `reason` (one of
    /// [`crate::format::END_REASONS`]) with an optional note, continuing the session's lineage.
    pub async fn end(
        &self,
        agent: &str,
        session: &str,
        reason: &str,
        note: Option<&str>,
    ) -> Outcome {
        match Record::end(agent, session, reason, note) {
            Ok(record) => self.save_as(record, Write::default()).await,
            Err(e) => Outcome::Failed(e.into()),
        }
    }
}

/// How often a compare-and-set is decided again after records of its pair landed between its
/// read and its append, before it gives up as a conflict.
const CAS_TRIES: usize = 8;

/// What a compare-and-set's read of its pair saw: the newest comment holding one of the pair's
/// records, and the record ids it read.
struct Seen {
    after: u64,
    ids: std::collections::HashSet<Option<String>>,
}

impl Seen {
    /// What `entries` (the pair's records as read, fenced ones included) show; `None` when one
    /// has no comment id yet (it waits in an outbox: no store that locks has one).
    fn of(entries: &[Entry]) -> Option<Seen> {
        let mut after = 0;
        for e in entries {
            after = after.max(e.comment.id?);
        }
        let ids = entries.iter().map(|e| e.record.id.clone()).collect();
        Some(Seen { after, ids })
    }

    /// Accepts the comments after [`Seen::after`] unless one holds a record of `record`'s pair
    /// that the read did not see: then someone wrote to the session since.
    fn guard(self, record: &Record) -> crate::store::AppendGuard {
        let (agent, session) = (record.agent.clone(), record.session.clone());
        Box::new(move |comments| {
            !comments.iter().any(|c| {
                crate::format::parse(&c.body).is_ok_and(|r| {
                    r.agent == agent && r.session == session && !self.ids.contains(&r.id)
                })
            })
        })
    }
}

/// Refuses a `parent` or an `if_latest` that is not a record id (a UUID, as `resume` prints
/// `latest_id`): a `Parent:` naming nothing would hide the session's real lineage, and a
/// compare-and-set against no record could only ever fail as a conflict, which it is not. The
/// text is not echoed: it may be anything, a secret pasted by mistake included.
fn check_record_id(field: &str, id: &str) -> Result<()> {
    let what = match field {
        "parent" => "the record this one continues from",
        _ => "the newest record of the session, which this one must follow",
    };
    match crate::format::is_record_id(id) {
        true => Ok(()),
        false => Err(Error::usage(format!(
            "{field} is not a record id; give the id of {what}, such as \
             01a232d2-6f5a-743e-b1a3-fe4349829487 (resume prints it as latest_id)"
        ))),
    }
}

/// Compare-and-set: fails unless the pair's newest record is `expected`.
fn refuse_unless_latest(record: &Record, expected: &str, newest: Option<&Entry>) -> Result<()> {
    let (agent, session) = (&record.agent, &record.session);
    match newest {
        Some(e) if e.record.id.as_deref() == Some(expected) => Ok(()),
        Some(e) => Err(Error::Conflict {
            message: format!(
                "not posted: the newest record of agent {agent} in session {session} is {} ({} \
                 written {}), not {expected}; someone continued the session first: resume to \
                 see their state, then write again with --if-latest {}",
                e.record
                    .id
                    .as_deref()
                    .unwrap_or("(a version 1.0 record, no id)"),
                match e.record.kind().name() {
                    kind @ "end" => format!("an {kind}"),
                    kind => format!("a {kind}"),
                },
                format_time(&e.record.time),
                e.record.id.as_deref().unwrap_or("ID"),
            ),
        }),
        None => Err(Error::Conflict {
            message: format!(
                "not posted: agent {agent} has no record in session {session}, so it cannot \
                 continue from {expected}; check the agent and session names, or write without \
                 --if-latest to start the session"
            ),
        }),
    }
}

/// `--merge`: the newest checkpoint's data with `record`'s data laid on top.
fn merge_onto(record: &mut Record, entries: &[Entry]) {
    let from = entries
        .iter()
        .rev()
        .find(|e| e.record.kind() == Kind::Checkpoint);
    // The merged record is not edited itself: without this line the edit would be laundered
    // into a clean record, and no later `resume` would warn of it.
    if let Some(warning) = from.and_then(crate::scan::edited_warning) {
        tracing::warn!("--merge carries the data of an edited record: {warning}");
    }
    let base = from
        .and_then(|e| e.record.data().as_object().cloned())
        .unwrap_or_default();
    if let Payload::Checkpoint { data, .. } = &mut record.payload {
        let mut merged: Map<String, Value> = base;
        if let Value::Object(on_top) = std::mem::take(data) {
            merged.extend(on_top);
        }
        *data = Value::Object(merged);
    }
}
