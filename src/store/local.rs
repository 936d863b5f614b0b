//! The embedded local store: one append-only `thread.jsonl` per directory, one comment per line.
//!
//! Durability and concurrency, in order of the steps of an append:
//! 1. take an exclusive advisory lock on the file (`flock`), so writers from any number of
//!    processes are serialised and lines never interleave;
//! 2. find the largest id in the file (the last valid line, and every id before it, since a
//!    merged or hand-edited file may be out of order, and as readers number a file whose ids
//!    repeat: [`ids`]) and take the next one with checked arithmetic, so a new record always
//!    sorts after every existing one;
//! 3. write the new line with one `write_all` in append mode, then `fdatasync`.
//!
//! A guarded append ([`Thread::append_guarded`], a compare-and-set) reads the comments after a
//! given id and asks its guard between steps 1 and 2, so the check and the append are one
//! critical section between processes.
//!
//! The thread file must be a regular file: it is opened without blocking and its type checked on
//! the opened handle, so a FIFO or a device put in its place is refused instead of read forever.
//!
//! A crash during step 3 can leave a torn last line. Readers skip it and report it; the next
//! append starts on a fresh line, so the torn bytes are kept (for forensics) but never merged
//! into a good record.

use std::fs::OpenOptions;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{
    AppendGuard, Comment, Cursor, Deleted, Delta, Effort, Init, Keep, Listing, StoreError, Thread,
};

mod delete;
mod delta;
mod file;
mod ids;
mod kept;

use file::{LineWarnings, next_id, open_regular};
use ids::Placed;

/// The file inside the store directory.
pub const THREAD_FILE: &str = "thread.jsonl";

/// One line of `thread.jsonl`.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    id: u64,
    author: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    body: String,
}

/// A thread kept in a local directory.
#[derive(Debug, Clone)]
pub struct LocalThread {
    dir: PathBuf,
    author: String,
    private: bool,
}

impl LocalThread {
    /// A store in `dir` (created on the first append) whose new comments are by `author`.
    pub fn new(dir: impl Into<PathBuf>, author: impl Into<String>) -> LocalThread {
        LocalThread {
            dir: dir.into(),
            author: author.into(),
            private: false,
        }
    }

    /// This store as `import` reads and `export` writes it, a directory that may have come from
    /// anywhere: the thread file is never followed through a symbolic link, and is refused when
    /// another user owns it or others may write it; what the store creates is its owner's only
    /// (directories 0700, the thread file 0600).
    pub fn private(mut self) -> LocalThread {
        self.private = true;
        self
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self) -> PathBuf {
        self.dir.join(THREAD_FILE)
    }

    /// Wraps an IO error on the thread file with what was being done.
    fn io_error(&self, op: &'static str) -> impl Fn(io::Error) -> StoreError + '_ {
        move |source| StoreError::Io {
            op,
            path: self.file(),
            source,
        }
    }

    fn ensure_dir(&self) -> Result<(), StoreError> {
        let made = match self.private {
            true => crate::fsutil::create_private_dir(&self.dir),
            false => std::fs::create_dir_all(&self.dir),
        };
        made.map_err(|source| StoreError::Io {
            op: "cannot create the store directory",
            path: self.dir.clone(),
            source,
        })
    }

    /// The thread file (and its directory) created when missing, opened to append and locked,
    /// and still the file the path names (a delete may have just replaced it). The lock is
    /// released when the file is dropped.
    fn lock_for_append(&self) -> Result<std::fs::File, StoreError> {
        self.ensure_dir()?;
        file::lock_current(
            &self.file(),
            OpenOptions::new().read(true).append(true).create(true),
            self.private,
        )
        .map_err(self.io_error("cannot open and lock"))
    }

    /// The blocking half of [`Thread::append`].
    pub fn append_blocking(&self, body: &str) -> Result<Comment, StoreError> {
        let mut file = self.lock_for_append()?;
        self.append_locked(&mut file, body)
    }

    /// The blocking half of [`Thread::append_guarded`]: the comments after `after` are read and
    /// judged by `guard`, and the body appended, under one lock.
    pub(crate) fn append_guarded_blocking(
        &self,
        body: &str,
        after: u64,
        guard: AppendGuard,
    ) -> Result<Option<Comment>, StoreError> {
        let io = |op| self.io_error(op);
        let mut file = self.lock_for_append()?;
        let mut bytes = Vec::new();
        file.seek(io::SeekFrom::Start(0))
            .map_err(io("cannot read"))?;
        file.read_to_end(&mut bytes).map_err(io("cannot read"))?;
        let mut listing = read_lines(&self.file(), &bytes, None);
        listing.comments.retain(|c| c.id > after);
        match guard(&listing.comments) {
            true => self.append_locked(&mut file, body).map(Some),
            false => Ok(None),
        }
    }

    /// Appends `body` to `file`, which this process holds locked for appends.
    fn append_locked(&self, file: &mut std::fs::File, body: &str) -> Result<Comment, StoreError> {
        let io = |op| self.io_error(op);
        let len = file.metadata().map_err(io("cannot stat"))?.len();
        let tail = file::tail(file, len).map_err(io("cannot read"))?;
        let id = next_id(tail.max_id).map_err(io("cannot append to"))?;
        let now = Utc::now();
        // Keep created_at non-decreasing in id order, as a forge's (created, id) order is.
        let created_at = tail.created_at.map_or(now, |t| t.max(now));
        let ends_clean = tail.ends_clean;
        let line = Line {
            id,
            author: self.author.clone(),
            created_at,
            updated_at: created_at,
            body: body.to_string(),
        };
        let mut bytes = Vec::with_capacity(body.len() + 160);
        if !ends_clean {
            bytes.push(b'\n'); // seal a torn last line so it cannot swallow this record
        }
        line.write_to(&mut bytes)
            .map_err(io("cannot encode a line for"))?;
        file.write_all(&bytes).map_err(io("cannot append to"))?;
        file.sync_data().map_err(io("cannot sync"))?;
        if len == 0 {
            let _ = crate::fsutil::sync_dir(&self.dir);
        }
        Ok(line.into_comment())
    }

    /// The blocking half of [`Thread::init`]: creates the directory and an empty thread file.
    pub fn init_blocking(&self) -> Result<Init, StoreError> {
        let path = self.file();
        self.ensure_dir()?;
        // Read access too, so opening a FIFO without blocking succeeds and is then refused.
        // Exclusive creation says whether this call created the file, even when inits race.
        let open = |options: &mut OpenOptions| {
            open_regular(&path, options.read(true).append(true), self.private)
        };
        let created = match open(OpenOptions::new().create_new(true)) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                open(OpenOptions::new().create(true)).map(|_| false)
            }
            Err(e) => Err(e),
        }
        .map_err(self.io_error("cannot create"))?;
        let _ = crate::fsutil::sync_dir(&self.dir);
        Ok(Init {
            location: path.display().to_string(),
            created,
        })
    }

    /// The blocking half of [`Thread::list`].
    pub fn list_blocking(&self, since: Option<DateTime<Utc>>) -> Result<Listing, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        let mut file = match open_regular(&path, OpenOptions::new().read(true), self.private) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Listing::default()),
            Err(e) => return Err(io("cannot open")(e)),
        };
        file.lock_shared().map_err(io("cannot lock"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io("cannot read"))?;
        drop(file);

        Ok(read_lines(&path, &bytes, since))
    }
}

/// The comments in `bytes` (whole lines of a thread file), with `since` applied, and warnings
/// for lines that do not read (a torn last line, corrupt, out-of-order or repeated lines).
fn read_lines(path: &Path, bytes: &[u8], since: Option<DateTime<Utc>>) -> Listing {
    read_lines_after(path, bytes, since, None).0
}

/// [`read_lines`] for the lines after others whose largest id (as read) was `max`; also the
/// largest id as read after these lines. Ids are given by [`ids::Numbering`].
fn read_lines_after(
    path: &Path,
    bytes: &[u8],
    since: Option<DateTime<Utc>>,
    max: Option<u64>,
) -> (Listing, Option<u64>) {
    let mut listing = Listing::default();
    let mut odd = LineWarnings::new(path);
    let mut numbering = ids::Numbering::after(max);
    let ends_clean = bytes.last().is_none_or(|&b| b == b'\n');
    let mut segments = bytes.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((index, segment)) = segments.next() {
        let is_last = segments.peek().is_none();
        if segment.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Line>(segment) {
            Ok(mut line) => {
                let number = index + 1;
                let before = numbering.max();
                match numbering.place(number, line.id, segment) {
                    Placed::Own { ordered: true, .. } => {}
                    Placed::Own { ordered: false, id } => {
                        odd.out_of_order(number, id, before.unwrap_or_default())
                    }
                    Placed::Copy { of } => {
                        odd.copy(number, of);
                        continue;
                    }
                    Placed::Renumbered { id, of } => {
                        odd.repeat(number, line.id, of, Some(id));
                        line.id = id;
                    }
                    Placed::NoIdLeft { of } => {
                        odd.repeat(number, line.id, of, None);
                        continue;
                    }
                }
                let keep = since.is_none_or(|s| line.updated_at.timestamp() >= s.timestamp());
                if keep {
                    listing.comments.push(line.into_comment());
                }
            }
            Err(e) if is_last && !ends_clean => listing.warnings.push(format!(
                "{}: ignored a torn last line ({} bytes) left by an interrupted write: {e}",
                path.display(),
                segment.len()
            )),
            Err(e) => odd.corrupt(index + 1, segment.len(), &e),
        }
    }
    listing.warnings.splice(0..0, odd.finish());
    (listing, numbering.max())
}

impl Line {
    /// Appends the line, newline included, to `out`.
    fn write_to(&self, out: &mut Vec<u8>) -> io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.push(b'\n');
        Ok(())
    }

    fn into_comment(self) -> Comment {
        Comment {
            id: self.id,
            author: self.author,
            created_at: self.created_at,
            updated_at: self.updated_at,
            url: None,
            body: self.body,
        }
    }
}

impl crate::store::sealed::Sealed for LocalThread {}

impl Thread for LocalThread {
    fn describe(&self) -> String {
        format!("local store {}", self.dir.display())
    }

    async fn append_with(&self, body: &str, _effort: Effort) -> Result<Comment, StoreError> {
        let (this, body) = (self.clone(), body.to_string());
        blocking(move || this.append_blocking(&body)).await
    }

    async fn append_guarded(
        &self,
        body: &str,
        after: u64,
        guard: AppendGuard,
    ) -> Result<Option<Comment>, StoreError> {
        let (this, body) = (self.clone(), body.to_string());
        blocking(move || this.append_guarded_blocking(&body, after, guard)).await
    }

    async fn list_with(
        &self,
        since: Option<DateTime<Utc>>,
        _effort: Effort,
    ) -> Result<Listing, StoreError> {
        let this = self.clone();
        blocking(move || this.list_blocking(since)).await
    }

    async fn list_delta(
        &self,
        cursor: Option<&Cursor>,
        _effort: Effort,
        _keep: &Keep,
    ) -> Result<Delta, StoreError> {
        let (this, cursor) = (self.clone(), cursor.cloned());
        blocking(move || this.delta_blocking(cursor.as_ref())).await
    }

    async fn whoami(&self) -> Result<String, StoreError> {
        Ok(self.author.clone())
    }

    async fn init(&self) -> Result<Init, StoreError> {
        let this = self.clone();
        blocking(move || this.init_blocking()).await
    }

    async fn delete(&self, ids: &[u64]) -> Result<Deleted, StoreError> {
        let (this, ids) = (self.clone(), ids.to_vec());
        blocking(move || this.delete_blocking(&ids)).await
    }

    fn trusts_everyone(&self) -> bool {
        true
    }

    fn keeps_an_outbox(&self) -> bool {
        false
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}
