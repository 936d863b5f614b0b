//! From comments to records: parse every body, apply trust, dedupe by record id, filter.
//!
//! Pure: takes a [`Listing`] a store produced, returns what it means. "Latest" is the thread's
//! order (`scan/order.rs`: by first posting on the store's clock, then lineage, then comment
//! id), never the client clocks in `Time:` lines, and where two comments carry the same record
//! `Id`, the first one (by comment id) wins; a later one that says something else is a
//! conflict, warned of (`scan/conflict.rs`).

mod conflict;
mod fence;
mod order;
mod signed;

pub use conflict::conflict_warnings;
pub(crate) use conflict::differs;

pub use fence::{
    Takeover, fence, fenced_flags, fenced_out, fenced_warning, keep_displaced, keep_fencing, owners,
};
pub use order::Place;
pub(crate) use order::{Posting, sort_by_place, sort_keyed};
pub use signed::Checked;
pub(crate) use signed::{Verifier, gated, not_believed_warnings, unsigned_count_warning};

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::format::{GLOB_CHARS, Identity, Kind, ParseError, Record, marker_line, parse};
use crate::store::{Comment, Listing, Skip, Unreadable};

/// Where a record came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommentInfo {
    /// The store's comment id; `None` while the record waits in this machine's outbox.
    pub id: Option<u64>,
    /// Who posted it.
    pub author: String,
    /// When it was posted.
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    #[schemars(with = "String")]
    pub updated_at: DateTime<Utc>,
    /// Where a human can see it.
    pub url: Option<String>,
    /// The forge issue holding it (from its `url`); `None` on the local store and while queued.
    pub issue: Option<u64>,
    /// Changed after posting (`updated_at` later than `created_at`): a human may have edited it.
    pub edited: bool,
    /// Not posted yet: spooled in this machine's outbox, waiting for the forge.
    pub pending: bool,
    /// Believed without a signature although the reader has signing keys: posted before the
    /// thread's first signed record (`[signing] require_signatures = false`). Printed only
    /// when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsigned: bool,
}

impl CommentInfo {
    /// A comment of `author` posted at `at` and not changed since, with no address.
    pub fn at(id: Option<u64>, author: &str, at: DateTime<Utc>) -> CommentInfo {
        CommentInfo {
            id,
            author: author.to_string(),
            created_at: at,
            updated_at: at,
            url: None,
            issue: None,
            edited: false,
            pending: false,
            unsigned: false,
        }
    }
}

impl From<&Comment> for CommentInfo {
    fn from(c: &Comment) -> Self {
        CommentInfo {
            updated_at: c.updated_at,
            url: c.url.clone(),
            issue: c.url.as_deref().and_then(crate::store::issue_in_url),
            edited: edited_after_posting(c.created_at, c.updated_at),
            ..CommentInfo::at(Some(c.id), &c.author, c.created_at)
        }
    }
}

/// How much later than its creation a comment may have been stamped `updated_at` and still
/// count as unedited: forgestate never edits a posted comment, but a server may stamp the two
/// times a moment apart.
pub const EDIT_SLACK_SECS: i64 = 2;

/// Whether a comment created at `created` and last changed at `updated` was edited after
/// posting (beyond [`EDIT_SLACK_SECS`]).
pub fn edited_after_posting(created: DateTime<Utc>, updated: DateTime<Utc>) -> bool {
    (updated - created).num_seconds() > EDIT_SLACK_SECS
}

/// The warning for a record whose comment was edited after posting (`None` when it was not):
/// anyone with write access to a forge repository can edit any comment, and the API does not
/// say who did. A carried copy of an edited record says when the original was edited and
/// first posted (`Edited-At:`, `Posted-At:`).
pub fn edited_warning(e: &Entry) -> Option<String> {
    if !e.comment.edited {
        return None;
    }
    let which = match e.comment.id {
        Some(id) => format!("comment {id}"),
        None => "its comment".to_string(),
    };
    let record = match &e.record.id {
        Some(id) => format!("record {id}"),
        None => "a record".to_string(),
    };
    let seen = match &e.comment.url {
        Some(url) => format!(" (see {url})"),
        None => String::new(),
    };
    Some(format!(
        "{record} ({} {}/{}) was edited after posting: {which} changed at {}, posted at {}; \
         what it says may not be what the agent wrote{seen}",
        e.record.kind().name(),
        e.record.agent,
        e.record.session,
        crate::format::format_time(&e.record.edited_at.unwrap_or(e.comment.updated_at)),
        crate::format::format_time(&e.record.first_posted(e.comment.created_at)),
    ))
}

/// A trusted, valid, first-of-its-id record and the comment that holds it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Entry {
    /// The record.
    #[serde(flatten)]
    pub record: Record,
    /// The comment that holds it.
    pub comment: CommentInfo,
    /// Written by a writer that no longer owns its session: a takeover by another writer
    /// comes before it (see [`fence`]). Never a resume point, never `latest`, never a verdict;
    /// kept in `history` and `list`. Printed only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fenced: bool,
}

/// Why a comment does not count as a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The body is not a valid record.
    #[error(transparent)]
    Invalid(ParseError),
    /// The poster is not a trusted author.
    #[error(
        "posted by {author}, who is not a trusted author; never used for resume (add them to \
         trusted_authors if they should be)"
    )]
    Untrusted {
        /// The poster's login.
        author: String,
    },
    /// Another comment already holds this record id.
    #[error("repeats record {record_id}, first posted as comment {first_comment}")]
    Duplicate {
        /// The repeated record id ([`NO_ID`] for a record without one, repeated with the same
        /// kind, agent, session, time and payload).
        record_id: String,
        /// The comment that holds its first copy.
        first_comment: u64,
    },
    /// Another comment already holds this record id, and says something else: one of the two
    /// was edited after posting (a person set an `Id:` line to another record's, say). The
    /// first one counts, as for a duplicate; readers warn.
    #[error(
        "holds record {record_id}, as comment {first_comment} does, but says something else (one \
         of the two was edited after posting?); comment {first_comment} counts"
    )]
    Conflict {
        /// The record id both comments hold.
        record_id: String,
        /// The comment that holds the record that counts.
        first_comment: u64,
    },
    /// A valid record by a trusted author that is not believed: with a signing key configured,
    /// its signature is missing or does not match its content.
    #[error("not believed: {reason}; answers come from the newest record whose signature is valid")]
    NotBelieved {
        /// Why, as a clause ("it carries no signature").
        reason: String,
    },
    /// The store holds the comment in a shape that cannot be read (say, a `null` body).
    #[error(
        "the comment cannot be read ({reason}); it is not used (look at it in the forge's web UI)"
    )]
    Unreadable {
        /// What could not be read.
        reason: String,
    },
}

impl Rejection {
    /// A stable, machine-readable code (`untrusted`, `duplicate`, a parse code, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::Invalid(e) => e.code(),
            Rejection::Untrusted { .. } => "untrusted",
            Rejection::Duplicate { .. } => "duplicate",
            Rejection::Conflict { .. } => "id_conflict",
            Rejection::Unreadable { .. } => "unreadable",
            Rejection::NotBelieved { .. } => "not_believed",
        }
    }
}

/// A comment that was not taken as a record, and why.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Rejected {
    /// The comment.
    pub comment: CommentInfo,
    /// Why it does not count.
    #[serde(serialize_with = "ser_code")]
    #[schemars(with = "String")]
    pub code: Rejection,
    /// The reason, as a sentence.
    pub reason: String,
    /// The kind and agent on the body's marker line, when the body has one: whose record a
    /// comment that does not read was meant to be.
    #[serde(skip)]
    pub marker: Option<(Kind, String)>,
}

fn ser_code<S: serde::Serializer>(r: &Rejection, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.code())
}

/// Whose comments count as records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// Everyone who can write the store (the local store: the file system is the boundary).
    Everyone,
    /// Only these authors (a forge: anyone who can read an issue can comment on it).
    Only(BTreeSet<String>),
}

impl Trust {
    pub(crate) fn allows(&self, author: &str) -> bool {
        match self {
            Trust::Everyone => true,
            Trust::Only(set) => set.contains(author),
        }
    }
}

/// A whole thread, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Records in thread order.
    pub entries: Vec<Entry>,
    /// Comments that are not records, in thread order.
    pub rejected: Vec<Rejected>,
    /// What the store noticed while reading (torn lines and the like).
    pub warnings: Vec<String>,
    /// The store could not be read; only what this machine holds (its read cache and outbox) is known.
    pub offline: bool,
    /// The read may have missed records the thread holds (one of `warnings` says why): answers
    /// built from it say `complete: false`.
    pub incomplete: bool,
}

impl Scan {
    /// Whether the whole thread was read: not offline, and no part of the read was cut short.
    pub fn complete(&self) -> bool {
        !self.offline && !self.incomplete
    }
}

/// Reads a listing: parse, trust, dedupe. Comments the store could not read are rejected, each
/// with its reason, in thread order among the others.
pub fn scan(listing: Listing, trust: &Trust) -> Scan {
    scan_checked(listing, trust, &|_: &str| Checked::Believed)
}

/// [`scan`], where a valid record whose body `check` finds a problem with (a signature that is
/// missing or wrong, with a signing key configured) is not believed: it is rejected with that
/// problem, and a trusted author's such record is also a warning, so a caller learns why the
/// answer is an older record. A record `check` finds [unsigned](Checked::Unsigned) is believed,
/// marked, while no signed record precedes it, and such records share one warning.
pub fn scan_checked(
    listing: Listing,
    trust: &Trust,
    check: &(dyn Fn(&str) -> Checked + Sync),
) -> Scan {
    let Listing {
        mut comments,
        warnings,
        rejects,
        incomplete,
    } = listing;
    comments.sort_by_key(|c| c.id);
    // By value: each body is dropped once parsed, so a long thread's bodies and its parsed
    // records are not all held at once.
    let mut gate = signed::Gate::default();
    let parsed = comments.into_iter().map(|comment| {
        let mut info = CommentInfo::from(&comment);
        let outcome = match parse(&comment.body) {
            Ok(record) => match gate.decide(check(&comment.body), &mut info) {
                // A copy of an edited record (`Edited-At:`) stays flagged as edited.
                None if record.edited_at.is_some() => {
                    info.edited = true;
                    Parsed::Record(posting(&record), record)
                }
                None => Parsed::Record(posting(&record), record),
                Some(why) => Parsed::Refused(why, marker_line(&comment.body)),
            },
            Err(ParseError::NoMarker) => Parsed::NoMarker,
            // Too large to read, and plainly not a record: no answer could have been it.
            Err(ParseError::TooLarge { .. })
                if crate::format::marker_in_head(&comment.body) == Some(None) =>
            {
                Parsed::NoMarker
            }
            Err(e) => Parsed::Invalid(e, marker_line(&comment.body)),
        };
        (info, outcome)
    });
    let (entries, rejected) = classify(parsed, rejects, trust, &|first: &Record, copy: &Record| {
        conflict::differs(first, copy)
    });
    let entries: Vec<Entry> = entries
        .into_iter()
        .map(|(comment, record)| Entry {
            record,
            comment,
            fenced: false,
        })
        .collect();
    let warnings = warnings
        .into_iter()
        .chain(signed::not_believed_warnings(&rejected))
        .chain(conflict_warnings(&rejected))
        .chain(unsigned_count_warning(
            entries.iter().filter(|e| e.comment.unsigned).count(),
        ))
        .collect();
    Scan {
        entries,
        rejected,
        warnings,
        offline: false,
        incomplete,
    }
}

/// The warning for a rejection that is a trusted author's record not believed.
fn not_believed_warning(r: &Rejected) -> Option<String> {
    let Rejection::NotBelieved { reason } = &r.code else {
        return None;
    };
    let whose = match &r.marker {
        Some((kind, agent)) => format!(" ({} {agent})", kind.name()),
        None => String::new(),
    };
    let which = match r.comment.id {
        Some(id) => format!("comment {id}"),
        None => "a comment".to_string(),
    };
    Some(format!(
        "{which}{whose} is not believed: {reason}; answering from the newest record whose \
         signature is valid"
    ))
}

/// What a comment's body is, as far as [`classify`] needs to know.
pub(crate) enum Parsed<R> {
    /// Not a record at all (no marker line).
    NoMarker,
    /// Meant as a record but invalid, with the kind and agent its marker line names.
    Invalid(ParseError, Option<(Kind, String)>),
    /// A record, with what its place needs ([`Posting`]: its `Id` among it), and whatever stands
    /// for it (the record, or where to load it).
    Record(Posting, R),
    /// A record that is not believed (a missing or wrong signature), with why, and the kind and
    /// agent its marker line names.
    Refused(String, Option<(Kind, String)>),
    /// Has a marker line, but its body was not kept (the read cache keeps no body of an author
    /// it did not trust); rejected as untrusted, or as unreadable should its author be trusted.
    Skipped,
}

/// What a duplicate's `record_id` says of a record without an `Id` (seed 003's client writes
/// none): it repeats a record by its kind, agent, session, time and payload.
pub const NO_ID: &str = "(no Id: the same kind, agent, session, time and payload)";

/// Whether a later copy of a record says something other than its first copy: the copy's kind
/// and agent when it does (see [`classify`]).
pub(crate) type Differs<'a, R> = dyn Fn(&R, &R) -> Option<(Kind, String)> + 'a;

/// The one place trust and dedupe are decided, over comments in comment id order: a comment with
/// no marker is rejected whoever posted it; then an untrusted author's comment is rejected; then
/// an invalid body; then a record an earlier comment holds (by `Id`, or, without one, by its
/// kind, agent, session, time and payload: [`Record::identity`]). A later copy that `differs`
/// finds saying something other than the first is a [`Rejection::Conflict`], marked with the
/// kind and agent `differs` answers (the copy's). Returns the accepted records in the thread's
/// order ([`sort_by_place`]), and the rejections (with `unreadable` ones among them in id
/// order).
pub(crate) fn classify<R>(
    parsed: impl IntoIterator<Item = (CommentInfo, Parsed<R>)>,
    unreadable_ones: Vec<Unreadable>,
    trust: &Trust,
    differs: &Differs<'_, R>,
) -> (Vec<(CommentInfo, R)>, Vec<Rejected>) {
    let parsed = parsed.into_iter();
    // Sized up front: a long thread's keyed records are its largest allocation.
    // (Most comments of a thread are records, so the upper bound is the better guess.)
    let (low, high) = parsed.size_hint();
    let mut accepted = Vec::with_capacity(high.unwrap_or(low).min(1 << 22));
    let mut rejected = Vec::new();
    // Each record's first comment, and where that record is among `accepted`.
    let mut first_seen: HashMap<Identity, (u64, usize)> = HashMap::new();
    for (info, outcome) in parsed {
        let mut marker = None;
        let rejection = match outcome {
            Parsed::NoMarker => Rejection::Invalid(ParseError::NoMarker),
            _ if !trust.allows(&info.author) => Rejection::Untrusted {
                author: info.author.clone(),
            },
            Parsed::Invalid(e, m) => {
                marker = m;
                Rejection::Invalid(e)
            }
            Parsed::Refused(reason, m) => {
                marker = m;
                Rejection::NotBelieved { reason }
            }
            Parsed::Skipped => Rejection::Unreadable {
                reason: "the read cache did not keep its body; run with --refresh".into(),
            },
            Parsed::Record(posting, record) => {
                let identity = match (&posting.id, posting.same) {
                    (Some(id), _) => Some(Identity::Id(id.clone())),
                    (None, same) => same.map(Identity::Same),
                };
                match identity
                    .as_ref()
                    .and_then(|key| first_seen.get(key).map(|&c| (key, c)))
                {
                    Some((key, (first, at))) => {
                        let record_id = match key {
                            Identity::Id(id) => id.clone(),
                            Identity::Same(_) => NO_ID.to_string(),
                        };
                        let held: Option<&R> = accepted
                            .get(at)
                            .map(|(_, _, (_, r)): &(Place, Posting, (CommentInfo, R))| r);
                        match held.and_then(|held| differs(held, &record)) {
                            Some(m) => {
                                marker = Some(m);
                                Rejection::Conflict {
                                    record_id,
                                    first_comment: first,
                                }
                            }
                            None => Rejection::Duplicate {
                                record_id,
                                first_comment: first,
                            },
                        }
                    }
                    None => {
                        if let Some(key) = identity {
                            first_seen.insert(key, (info.id.unwrap_or_default(), accepted.len()));
                        }
                        // Keyed as it comes: the posting is moved into its key, not copied.
                        accepted.push((place(&info, &posting), posting, (info, record)));
                        continue;
                    }
                }
            }
        };
        rejected.push(Rejected {
            comment: info,
            reason: rejection.to_string(),
            code: rejection,
            marker,
        });
    }
    if !unreadable_ones.is_empty() {
        rejected.extend(unreadable_ones.into_iter().map(unreadable));
        rejected.sort_by_key(|r| r.comment.id.unwrap_or(u64::MAX));
    }
    (order::sort_keyed(accepted), rejected)
}

/// What the ordering rule needs of a record.
pub(crate) fn posting(record: &Record) -> Posting {
    Posting {
        first: record.posted_at,
        id: record.id.clone(),
        same: record.id.is_none().then(|| record.sameness()),
        parent: record.parent.clone(),
        time: Some(record.time),
    }
}

/// The place of a record whose [`Posting`] is `posting` in the comment `info`.
pub(crate) fn place(info: &CommentInfo, posting: &Posting) -> Place {
    let place = Place::of(posting.first, info.created_at, info.id);
    match posting.time {
        Some(t) => place.written(t),
        None => place,
    }
}

/// Sorts entries into the thread's order (`scan/order.rs`); entries waiting in the outbox stay after
/// the thread's own, in the order they were spooled.
pub fn sort_entries(entries: &mut Vec<Entry>) {
    let (mut posted, pending): (Vec<Entry>, Vec<Entry>) =
        entries.drain(..).partition(|e| !e.comment.pending);
    sort_by_place(&mut posted, |e| (e.place(), posting(&e.record)));
    posted.extend(pending);
    *entries = posted;
}

impl Entry {
    /// Where this entry stands in the thread's order (`scan/order.rs`).
    pub fn place(&self) -> Place {
        place(&self.comment, &posting(&self.record))
    }
}

/// An unreadable comment as a rejection. Times that could not be read show as the epoch.
fn unreadable(u: Unreadable) -> Rejected {
    let edited =
        matches!((u.created_at, u.updated_at), (Some(c), Some(m)) if edited_after_posting(c, m));
    let created_at = u.created_at.unwrap_or(DateTime::UNIX_EPOCH);
    let updated_at = u.updated_at.unwrap_or(created_at);
    // What the kept beginning of a body skipped as too large says: not a record, or whose.
    let said = u.head.as_deref().and_then(crate::format::marker_in_head);
    let rejection = match u.skipped {
        Some(Skip::Untrusted) => Rejection::Untrusted {
            author: u.author.clone().unwrap_or_default(),
        },
        Some(Skip::TooLarge { .. }) if said == Some(None) => {
            Rejection::Invalid(ParseError::NoMarker)
        }
        Some(Skip::TooLarge { len, cap }) => Rejection::Invalid(ParseError::TooLarge { len, cap }),
        None => Rejection::Unreadable { reason: u.reason },
    };
    Rejected {
        comment: CommentInfo {
            updated_at,
            issue: u.url.as_deref().and_then(crate::store::issue_in_url),
            url: u.url,
            edited,
            ..CommentInfo::at(u.id, &u.author.unwrap_or_default(), created_at)
        },
        reason: rejection.to_string(),
        code: rejection,
        marker: said.flatten(),
    }
}

/// Adds records spooled in this machine's outbox (`(spooled_at, body)`, oldest first) after the
/// thread's own, marked pending. A spooled record whose `Id` is already in the thread was posted
/// and not yet cleaned up: the thread's copy stands. Spooled bodies are this machine's own, so
/// trust does not apply; a body that does not parse is reported as a warning.
pub fn add_pending(scan: &mut Scan, spooled: impl IntoIterator<Item = (DateTime<Utc>, String)>) {
    let seen: std::collections::HashSet<String> = scan
        .entries
        .iter()
        .filter_map(|e| e.record.id.clone())
        .collect();
    add_pending_except(scan, spooled, |id| seen.contains(id));
}

/// [`add_pending`] where `held` says which record ids the thread holds (a scan that holds only
/// some of its entries still knows every id the thread holds).
pub(crate) fn add_pending_except(
    scan: &mut Scan,
    spooled: impl IntoIterator<Item = (DateTime<Utc>, String)>,
    held: impl Fn(&str) -> bool,
) {
    let mut seen = std::collections::HashSet::new();
    for (at, body) in spooled {
        match parse(&body) {
            Ok(record) => {
                if record
                    .id
                    .as_ref()
                    .is_some_and(|id| held(id) || !seen.insert(id.clone()))
                {
                    continue;
                }
                let comment = CommentInfo {
                    pending: true,
                    ..CommentInfo::at(None, "", at)
                };
                scan.entries.push(Entry {
                    record,
                    comment,
                    fenced: false,
                });
            }
            Err(e) => scan
                .warnings
                .push(format!("an outbox entry is not a record ({e}); left as is")),
        }
    }
}

/// Adds records this machine posted that the thread as read lacks (`(spooled_at, body)`, oldest
/// first: its outbox's landed entries) after the thread's own, as posted records that no comment
/// of the read shows, before any waiting ones: an offline answer from a read cache older than
/// the machine's own newest post still knows it. Ids `held` says the thread holds, or that the
/// scan has, are skipped.
pub(crate) fn add_landed_except(
    scan: &mut Scan,
    landed: impl IntoIterator<Item = (DateTime<Utc>, String)>,
    held: impl Fn(&str) -> bool,
) {
    let known: std::collections::HashSet<String> = scan
        .entries
        .iter()
        .filter_map(|e| e.record.id.clone())
        .collect();
    let before = scan.entries.len();
    add_pending_except(scan, landed, |id| held(id) || known.contains(id));
    if scan.entries.len() == before {
        return;
    }
    for e in &mut scan.entries[before..] {
        e.comment.pending = false;
    }
    sort_entries(&mut scan.entries);
}

/// Warnings for comments newer than `answer` (`None` when there is no answer) that might have
/// been a newer answer but could not be read: invalid or unreadable comments of a trusted or
/// unknown author, and a record `Id`'s later copy that says something other than the first
/// ([`Rejection::Conflict`]); never untrusted ones or exact duplicates. When a comment's marker line names its
/// kind and agent, it counts only if `wanted` accepts them. A comment whose id could not be read
/// counts unless its posting time, read, is before the answer's comment's (the thread's order
/// follows the comments' times); one posted before the answer counts too when the answer is a
/// copy first posted before it (`Posted-At:`), since a record it held would rank after the
/// answer.
pub fn unread_newer(
    scan: &Scan,
    trust: &Trust,
    answer: Option<&Entry>,
    wanted: impl Fn(Kind, &str) -> bool,
) -> Vec<String> {
    let answer = answer.and_then(|e| {
        Some(AnswerAt {
            id: e.comment.id?,
            created_at: e.comment.created_at,
            first: e.record.posted_at,
        })
    });
    scan.rejected
        .iter()
        .filter(|r| match &r.code {
            Rejection::Invalid(ParseError::NoMarker) => false,
            Rejection::Invalid(_) => true,
            Rejection::Unreadable { .. } => {
                r.comment.author.is_empty() || trust.allows(&r.comment.author)
            }
            // Already a warning of the scan's own, whichever answer it is newer than.
            Rejection::NotBelieved { .. } => false,
            // Its first copy counts, but says something else: this one may have been the
            // answer (its `Id:` taken by an older comment a person edited).
            Rejection::Conflict { .. } => true,
            Rejection::Untrusted { .. } | Rejection::Duplicate { .. } => false,
        })
        .filter(|r| match answer {
            Some(answer) => answer.maybe_before(&r.comment),
            // No answer: any comment that could not be read might have been one.
            None => true,
        })
        .filter(|r| r.marker.as_ref().is_none_or(|(k, a)| wanted(*k, a)))
        .map(|r| {
            let reason = match &r.code {
                Rejection::Unreadable { reason } => reason.clone(),
                other => other.to_string(),
            };
            let which = match r.comment.id {
                Some(id) => format!("comment {id}"),
                None => "a comment with no readable id".to_string(),
            };
            format!(
                "{which}, newer than this answer, could not be read ({}: {reason}); the answer may be stale — \
                 see `list --invalid`",
                r.code.code(),
            )
        })
        .collect()
}

/// Where an answer stands, for [`unread_newer`]: its comment id and time, and its `Posted-At:`
/// on a copy.
#[derive(Clone, Copy)]
struct AnswerAt {
    id: u64,
    created_at: DateTime<Utc>,
    first: Option<DateTime<Utc>>,
}

impl AnswerAt {
    /// Whether `r`, a comment that could not be read, might hold a record that ranks after the
    /// answer. A time that could not be read shows as the epoch ([`unreadable`]): unknown.
    fn maybe_before(self, r: &CommentInfo) -> bool {
        let known = |t: DateTime<Utc>| (t != DateTime::UNIX_EPOCH).then_some(t);
        match r.id {
            Some(id) if id > self.id => true,
            None if known(r.created_at).is_none_or(|t| t >= self.created_at) => true,
            // Posted before the answer's comment: it ranks after the answer only when the
            // answer is a copy first posted before it.
            _ => (self.first).is_some_and(|first| known(r.created_at).is_none_or(|t| t > first)),
        }
    }
}

/// Whether `name` matches a filter value: exactly, unless the value holds a glob metacharacter
/// ([`GLOB_CHARS`]); then as a glob, as resume map keys are ([`crate::format::glob_matches`]).
pub fn name_matches(value: &str, name: &str) -> bool {
    // Compared in NFC: `é` typed either way names one agent (records written elsewhere, before
    // names were kept in NFC, included).
    let (value, name) = (crate::format::nfc(value), crate::format::nfc(name));
    if value.contains(GLOB_CHARS) {
        crate::format::glob_matches(&value, &name)
    } else {
        value == name
    }
}

/// Which records a verb is about. Empty fields match everything; `agent` and `session` match a
/// plain name exactly and a value with a glob metacharacter (`implementation-*`) as a glob
/// ([`name_matches`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Agents matching this glob.
    pub agent: Option<String>,
    /// Sessions matching this glob.
    pub session: Option<String>,
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only records whose comment was posted at or after this time (whole seconds).
    pub since: Option<DateTime<Utc>>,
}

impl Filter {
    /// Whether `e` passes the filter.
    pub fn matches(&self, e: &Entry) -> bool {
        self.wants(e.record.kind(), &e.record.agent)
            && self
                .session
                .as_ref()
                .is_none_or(|s| name_matches(s, &e.record.session))
            && self
                .since
                .is_none_or(|t| e.comment.created_at.timestamp() >= t.timestamp())
    }

    /// Whether a record of `kind` by `agent` passes the kind and agent parts of the filter.
    pub(crate) fn wants(&self, kind: Kind, agent: &str) -> bool {
        self.kind.is_none_or(|k| k == kind)
            && self.agent.as_ref().is_none_or(|a| name_matches(a, agent))
    }
}
