//! Stores: where comment bodies live. A store is "a thread of comments" and nothing more.
//!
//! Invariant: stores know nothing about the record format. They append opaque bodies, list them
//! back in thread order, and say who the current author is. Everything else (parsing, trust,
//! dedupe, resume) happens above them in [`crate::client`], identically for every backend.

mod digest;
mod internal;
mod local;
mod shrinking;

use std::future::Future;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::Serialize;
use thiserror::Error;

pub(crate) use digest::Digest;
pub(crate) use internal::{CommentCount, Cursor, Delta, Effort, Keep, Predecessor};
pub use local::{LocalThread, THREAD_FILE};
pub(crate) use shrinking::map_shrinking;

/// One comment as a store holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comment {
    /// The store's own id: increasing in thread order (a forge's global comment id).
    pub id: u64,
    /// Who posted it (a forge login, or the local store's configured author).
    pub author: String,
    /// When it was posted.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Where a human can see it, when the store has such a place.
    pub url: Option<String>,
    /// The opaque body.
    #[serde(skip)]
    pub body: String,
}

/// Comments read back, with anything odd the store noticed on the way (e.g. a torn last line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The readable comments, in thread order.
    pub comments: Vec<Comment>,
    /// Anything odd noticed while reading.
    pub warnings: Vec<String>,
    /// Comments the store holds but could not read (a forge sent one in an odd shape). Each is
    /// one rejected comment for the reader, never a reason to fail the whole listing.
    pub rejects: Vec<Unreadable>,
    /// The listing may lack comments the thread holds (a forge that cut a list short, or has no
    /// repository-wide list, was read through the head's own list): one of `warnings` says why.
    pub incomplete: bool,
}

/// A comment that could not be read, with what could be read of it and why not the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The store's comment id, when it could be read.
    pub id: Option<u64>,
    /// The poster, when it could be read.
    pub author: Option<String>,
    /// When it was posted, when that could be read.
    pub created_at: Option<DateTime<Utc>>,
    /// When it last changed, when that could be read.
    pub updated_at: Option<DateTime<Utc>>,
    /// Where a human can see it.
    pub url: Option<String>,
    /// What is wrong with it, naming the field: "`body` is null, expected a string".
    pub reason: String,
    /// Set when the store skipped the comment on purpose, as the reader's `Keep` asked, without holding
    /// its body.
    pub skipped: Option<Skip>,
    /// The beginning of a body skipped as too large ([`Skip::TooLarge`]): at most
    /// [`HEAD_BYTES`] bytes, cut at a character boundary, so a reader can tell whether it was
    /// meant as a record (and whose) without the store holding the body.
    pub head: Option<String>,
}

/// The most bytes of a skipped body's beginning a store keeps ([`Unreadable::head`]).
pub const HEAD_BYTES: usize = 512;

/// The first [`HEAD_BYTES`] (or fewer) bytes of `body`, cut at a character boundary.
pub fn body_head(body: &str) -> String {
    let mut end = body.len().min(HEAD_BYTES);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    body[..end].to_string()
}

/// A body as compared with a store's copy of it: a forge may store it with CRLF (or CR) line
/// ends and trim or add surrounding whitespace, so LF line ends, trimmed.
pub(crate) fn normal_body(body: &str) -> String {
    body.replace("\r\n", "\n")
        .replace('\r', "\n")
        .trim()
        .to_string()
}

/// Why a store skipped a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Its author is not one the reader keeps.
    Untrusted,
    /// Its body is longer than the reader's size limit.
    TooLarge {
        /// The body's length, in bytes.
        len: usize,
        /// The cap, in bytes.
        cap: usize,
    },
}

/// What [`Thread::init`] did: where the thread lives, and whether this call created it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Init {
    /// Where the thread lives: the local thread file's path, or the session issue's URL.
    pub location: String,
    /// True when this call created the thread; false when it already existed (on a forge, also
    /// when a concurrent `init` created it first and this call adopted that one).
    pub created: bool,
}

/// What [`Thread::delete`] did, id by id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// Comments this call deleted.
    pub deleted: Vec<u64>,
    /// Comments that were already gone (deleting is idempotent: not an error).
    pub missing: Vec<u64>,
}

/// A store failed. Each message names the object involved and what to try.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A local file operation failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
    /// A blocking task panicked or was cancelled.
    #[error("the store's background task failed: {0}")]
    Task(String),
    /// A remote backend failed; `kind` says who must act, `source` keeps the typed error.
    #[error("{source}")]
    Backend {
        /// Who must act.
        kind: BackendFailure,
        /// The backend's typed error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Who must act on a backend failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendFailure {
    /// Configuration or permissions: retrying will not help.
    Setup,
    /// The backend refused this particular request's content.
    Rejected,
    /// The backend could not be reached or answered with an error of its own.
    Unavailable,
}

/// Decides, where the store can, inside the critical section of an append, whether it may go
/// ahead: it is given the comments the thread holds after a comment id and answers true to
/// append. Whoever builds it knows the record format; the store only hands it comments.
pub type AppendGuard = Box<dyn FnOnce(&[Comment]) -> bool + Send>;

/// The seal on [`Thread`]: only this crate's stores implement it, so its read methods may take
/// the crate's own types and change with them.
pub(crate) mod sealed {
    /// Implemented by the crate's stores only.
    pub trait Sealed {}
}

/// A thread of comments: the one abstraction every verb goes through. Sealed: the stores are
/// the local file ([`LocalThread`]), the forge issue and their run-time choice.
///
/// Methods return `Send` futures so a store can be used from any tokio runtime.
pub trait Thread: sealed::Sealed + Send + Sync + 'static {
    /// Where the thread lives, for messages ("local store ./.forgestate", an issue URL).
    fn describe(&self) -> String;

    #[doc(hidden)]
    /// Appends one comment and returns it as stored, trying as hard as `effort` says.
    fn append_with(
        &self,
        body: &str,
        effort: Effort,
    ) -> impl Future<Output = Result<Comment, StoreError>> + Send;

    #[doc(hidden)]
    /// Lists comments in thread order (ascending id). With `since`, only comments whose
    /// `updated_at` is at or after it, compared in whole seconds, as Forgejo does.
    fn list_with(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
    ) -> impl Future<Output = Result<Listing, StoreError>> + Send;

    #[doc(hidden)]
    /// [`Thread::list_with`], where the store may skip the comments `keep` does not keep (see
    /// [`Keep`]). The default skips nothing.
    fn list_keeping(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
        keep: &Keep,
    ) -> impl Future<Output = Result<Listing, StoreError>> + Send {
        let _ = keep;
        self.list_with(since, effort)
    }

    #[doc(hidden)]
    /// Appends `body` only when `guard` accepts the comments the thread holds after comment id
    /// `after`; `None` (nothing appended) when it refuses. The local store reads them and
    /// appends under its one lock, so no other process appends in between. The default, for a
    /// store that cannot lock (a forge), appends without asking: a compare-and-set there is a
    /// read, then a post.
    fn append_guarded(
        &self,
        body: &str,
        after: u64,
        guard: AppendGuard,
    ) -> impl Future<Output = Result<Option<Comment>, StoreError>> + Send {
        let _ = (after, guard);
        async move { self.append(body).await.map(Some) }
    }

    /// [`Thread::append_with`] with full effort.
    fn append(&self, body: &str) -> impl Future<Output = Result<Comment, StoreError>> + Send {
        self.append_with(body, Effort::Full)
    }

    /// [`Thread::list_with`] with full effort.
    fn list(
        &self,
        since: Option<DateTime<Utc>>,
    ) -> impl Future<Output = Result<Listing, StoreError>> + Send {
        self.list_with(since, Effort::Full)
    }

    /// Makes sure the thread exists (creating it if needed) and says where it lives and whether
    /// this call created it.
    fn init(&self) -> impl Future<Output = Result<Init, StoreError>> + Send;

    /// The identity new comments are posted as.
    fn whoami(&self) -> impl Future<Output = Result<String, StoreError>> + Send;

    /// The store's clock now, which its comments' times are stamped by: a forge's as its last
    /// answer's `Date` showed it, else (and for the local store) this machine's. Ages of
    /// records are measured on it, so a client whose clock drifted still judges them right.
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    /// Deletes these comments, by the store's ids. Idempotent: an id that is already gone is
    /// listed in [`Deleted::missing`], not an error. The ids of the remaining comments never
    /// change. A store that cannot delete says so (the default).
    fn delete(&self, ids: &[u64]) -> impl Future<Output = Result<Deleted, StoreError>> + Send {
        let _ = ids;
        let describe = self.describe();
        async move {
            Err(StoreError::Backend {
                kind: BackendFailure::Setup,
                source: format!("{describe} cannot delete comments").into(),
            })
        }
    }

    /// Whether comments by other authors may be trusted by default. True only for stores whose
    /// access control is the file system itself.
    fn trusts_everyone(&self) -> bool {
        false
    }

    /// Whether a record this store cannot take now may wait in an outbox on this machine. False
    /// for the local store: it is on this machine's disk already, so it has none.
    fn keeps_an_outbox(&self) -> bool {
        true
    }

    #[doc(hidden)]
    /// A new command starts: a remote store gives it a fresh wait budget (the default, for a
    /// store that never waits, does nothing).
    fn begin_command(&self) {}

    #[doc(hidden)]
    /// What this command does if the store does not answer (the wait rule,
    /// docs/failure-handling.md): `None` when it has an answer without it (a save spools, a
    /// warm read answers offline), so it ends within the wait budget; `Some(why)` when it has
    /// none, so it may wait up to the patience. The first word of a command holds; the default
    /// (a store that never waits) ignores it.
    fn without_answer(&self, why: Option<&'static str>) {
        let _ = why;
    }

    #[doc(hidden)]
    /// How many comments the thread's head held when this process last read the head itself
    /// (a forge's issue number, its `comments` count, and its `updated_at`), when it did. A read
    /// cache holding more comments on that issue, created by then, has missed a deletion.
    /// `None` by default (the local store, whose cursor sees deletions).
    fn comment_count(&self) -> Option<CommentCount> {
        None
    }

    #[doc(hidden)]
    /// What tells this thread from another at the same place ([`Thread::describe`]): a forge's
    /// repository id and session issue creation, so a read cache notices a forge recreated at the
    /// same URL. `None` by default (the local store).
    fn generation(&self) -> Option<String> {
        None
    }

    #[doc(hidden)]
    /// What changed after `cursor` (everything when it is `None` or no longer applies), and
    /// where the next such read starts, skipping what `keep` does not keep. The default asks
    /// [`Thread::list_keeping`] `since` the cursor's time; the local store reads on from a byte offset instead.
    fn list_delta(
        &self,
        cursor: Option<&Cursor>,
        effort: Effort,
        keep: &Keep,
    ) -> impl Future<Output = Result<Delta, StoreError>> + Send {
        internal::list_delta_since(self, cursor, effort, keep)
    }

    #[doc(hidden)]
    /// Makes the thread ready to take a record the way a write would: a forge finds its
    /// session issue, or creates it when writes may (`auto_init`), else fails as a write
    /// would. A no-op by default (the local store creates its file on the first append).
    fn prepare_write(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }

    #[doc(hidden)]
    /// The thread this one continues, `hops` steps back (1 is the one it links directly), with
    /// its comments: a forge's closed earlier session issue. `None` when there is no such
    /// thread (the default, and the local store's answer).
    fn predecessor(
        &self,
        hops: usize,
    ) -> impl Future<Output = Result<Option<Predecessor>, StoreError>> + Send {
        let _ = hops;
        async { Ok(None) }
    }
}

/// The issue number in a forge comment's or issue's web URL ([`Comment::url`],
/// `…/issues/12#issuecomment-3`), when it is on an issue (a pull request's is `…/pulls/…`).
pub fn issue_in_url(url: &str) -> Option<u64> {
    // Read on every comment of a listing: bytes, no copy.
    const ISSUES: &[u8] = b"/issues/";
    let bytes = url.as_bytes();
    let at = bytes.windows(ISSUES.len()).rposition(|w| w == ISSUES)?;
    let rest = &bytes[at + ISSUES.len()..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if !matches!(rest.get(digits), None | Some(b'#' | b'/' | b'?')) {
        return None;
    }
    rest[..digits]
        .iter()
        .try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .filter(|_| digits > 0)
}
