//! What the store's internal reads take and give: how hard to try ([`Effort`]), which comments
//! to keep whole ([`Keep`]), and the incremental read ([`Cursor`], [`Delta`]). Crate-private:
//! the types are `pub` here so the sealed [`Thread`](super::Thread) may name them, and this
//! module is private, so nothing outside the crate can.
//!
//! Outside the crate these names do not resolve (each block below must fail to compile), while
//! the public store types do:
//!
//! ```
//! use forgestate::store::{Comment, Listing, Thread};
//! use forgestate::{Client, ForkQuery, HistoryQuery, ListQuery};
//! ```
//! ```compile_fail
//! use forgestate::store::Cursor;
//! ```
//! ```compile_fail
//! use forgestate::store::Keep;
//! ```
//! ```compile_fail
//! use forgestate::store::Digest;
//! ```
//! ```compile_fail
//! use forgestate::forge::Probe;
//! ```
//! ```compile_fail
//! use forgestate::durable::FlushLock;
//! ```
//! ```compile_fail
//! let _ = forgestate::mirror::BASE_SUFFIX;
//! ```
//! ```compile_fail
//! // The positional, boolean reads gave way to `Client::query(&ListQuery)`.
//! let _ = forgestate::Client::<forgestate::backend::AnyThread>::list_since;
//! ```
//! ```compile_fail
//! // `Thread` is sealed: only the crate's stores implement it.
//! struct Mine;
//! impl forgestate::store::Thread for Mine {}
//! ```

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Digest, Listing, StoreError, Thread};

/// Which comments a listing keeps whole. A store may skip the others as they stream past,
/// never holding their bodies, and return them as [`Unreadable`] with [`Unreadable::skipped`]
/// set; a store that does not skip returns them whole, and readers decide the same either way.
/// Format-free: it names authors and sizes, nothing about what a body says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keep {
    /// The authors whose comments are kept, besides the store's own identity
    /// ([`Thread::whoami`]); `None` keeps every author's.
    pub authors: Option<BTreeSet<String>>,
    /// Bodies longer than this many bytes are skipped.
    pub max_body: usize,
    /// The store's own identity, when the caller already knows it (a login the read cache
    /// holds for this token): the store then need not ask who it is.
    pub identity: Option<String>,
    /// What the reader makes of each kept comment as the listing streams in (see [`Digest`]).
    /// A store that streams calls it; one that does not never does. For one listing only: a
    /// store never keeps it for later reads.
    pub digest: Option<Digest>,
    /// Whether a read `since` a time also reads how many comments the thread's head holds
    /// ([`Thread::comment_count`]): a forge asks for its session issue alongside the list (one
    /// more request, read at the same time), so that a reader holding more of the head's
    /// comments than that count knows one was deleted, which `since` cannot show. Only the read
    /// cache asks (its warm reads); a store without such a count ignores it.
    pub count: bool,
}

impl Keep {
    /// Keeps everything.
    pub fn all() -> Keep {
        Keep {
            authors: None,
            max_body: usize::MAX,
            identity: None,
            digest: None,
            count: false,
        }
    }
}

/// How hard a remote store tries before giving up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    /// Retry transient failures within the configured budget.
    Full,
    /// One attempt with a short timeout, for work that must not stall the caller.
    Quick,
    /// One attempt with the normal request timeout: draining the outbox, where a slow forge must
    /// still get through but a failure is simply retried by a later command.
    Once,
    /// [`Effort::Once`], connecting with a short timeout (1.5 s at most): the drain a saving
    /// command still makes during a backoff, so an unreachable forge costs a second or two and
    /// one that accepts the connection gets the normal request timeout.
    Probe,
}

/// What [`Thread::comment_count`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommentCount {
    /// The issue (its number).
    pub issue: u64,
    /// How many comments it had.
    pub count: u64,
    /// When it last changed, by the store's clock.
    pub at: DateTime<Utc>,
}

/// Where an incremental read ([`Thread::list_delta`]) starts: what the reader saw last.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Serialize)]
pub enum Cursor {
    /// A forge: comments updated at or after this time (the server's clock, whole seconds).
    Since(DateTime<Utc>),
    /// A local file: the bytes after `offset` of the file with this identity, whose bytes just
    /// before `offset` hash to `tail`, and whose size and modification time were `len` and
    /// `mtime_ns` when it was read (so a file rewritten in place is noticed).
    Offset {
        /// Device and inode (0 where the platform has none).
        identity: (u64, u64),
        /// How far the reader got (the end of the last complete line).
        offset: u64,
        /// A hash of up to 256 bytes before `offset`.
        tail: u64,
        /// The file's size when it was read (0 in cursors written before it was kept).
        #[serde(default)]
        len: u64,
        /// The file's modification time when it was read, in nanoseconds since the epoch.
        #[serde(default)]
        mtime_ns: i128,
        /// Whether that modification time was too close to the read to tell a later write in
        /// the same clock tick apart (then an unchanged-looking file is read again).
        #[serde(default)]
        racy: bool,
        /// The largest id the lines before `offset` were read under (`None` in cursors written
        /// before it was kept: the file is then read again from the start).
        #[serde(default)]
        max_id: Option<u64>,
    },
}

/// What changed in a thread after a [`Cursor`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// The comments changed after the cursor (all of them when `full`).
    pub listing: Listing,
    /// Where the next incremental read starts; `None` when the store cannot say yet.
    pub cursor: Option<Cursor>,
    /// True when this is the whole thread: the cursor was missing or no longer applies.
    pub full: bool,
    /// Where the thread lives ([`Thread::describe`] after the read): an incremental read that
    /// lands in another thread (the session issue changed) is not a continuation.
    pub location: String,
}

/// The time-based [`Thread::list_delta`]: `since` the cursor's time (inclusive, whole seconds),
/// the next cursor being the newest `updated_at` seen.
pub(crate) async fn list_delta_since<T: Thread + ?Sized>(
    thread: &T,
    cursor: Option<&Cursor>,
    effort: Effort,
    keep: &Keep,
) -> Result<Delta, StoreError> {
    let since = match cursor {
        Some(Cursor::Since(at)) => Some(*at),
        _ => None,
    };
    let listing = thread.list_keeping(since, effort, keep).await?;
    // The comments the reader's digest took whole are not in the listing: it says when the
    // newest of them changed.
    let newest = listing
        .comments
        .iter()
        .map(|c| c.updated_at)
        .chain(listing.rejects.iter().filter_map(|r| r.updated_at))
        .chain(keep.digest.as_ref().and_then(Digest::newest_listed))
        .max();
    let cursor = match (newest, since) {
        (Some(n), Some(s)) => Some(Cursor::Since(n.max(s))),
        (n, s) => n.or(s).map(Cursor::Since),
    };
    Ok(Delta {
        full: since.is_none(),
        cursor,
        location: match thread.generation() {
            Some(g) => format!("{} ({g})", thread.describe()),
            None => thread.describe(),
        },
        listing,
    })
}

/// An earlier thread and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Predecessor {
    /// How to name it in a message: "the previous session issue #12 (closed)".
    pub describe: String,
    /// Its comments.
    pub listing: Listing,
}
