//! The durable outbox: comment bodies that could not be posted yet, one file each, in order.
//!
//! Like a store, it knows nothing about the format; it keeps opaque bodies, each written by the
//! atomic-write contract (`fsutil::write_atomic`), so a crash leaves a complete entry or a stray
//! temp file that readers ignore. Names sort in spool order (a nanosecond sequence that never
//! goes backwards, then the pid), so a new entry always goes behind the ones already waiting.
//!
//! Flushing takes an exclusive advisory lock on `.flush.lock`, so concurrent flushers never post
//! the same entry twice and entries go out in order; a dead flusher's lock is released by the
//! OS. An entry leaves the queue (for [`LANDED_DIR`]) only after its post is confirmed.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::fsutil::{
    NotOurs, check_private_dir, create_private_dir, read_regular, sync_dir, write_atomic,
};

const SUFFIX: &str = ".rec";
const LOCK_FILE: &str = ".flush.lock";
/// Where entries the forge will never take are moved, beside the queue.
pub const DEAD_DIR: &str = "dead";
/// Where posted entries are kept, beside the queue, until a read of the thread holds them: this
/// machine's own records, which its offline answers must know (issue #42).
pub const LANDED_DIR: &str = "landed";
/// The most posted entries kept in [`LANDED_DIR`]; older ones go first.
const MAX_LANDED: usize = 256;
/// No rendered record is larger than this (the body cap is far smaller); anything bigger is not one.
const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// One waiting body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spooled {
    /// The entry's file.
    pub path: PathBuf,
    /// When it was spooled.
    pub spooled_at: DateTime<Utc>,
    /// The body (empty when it could not be read).
    pub body: String,
    /// Why the entry could not be read as text (not UTF-8, a directory, permissions), if so.
    pub unreadable: Option<String>,
}

impl Spooled {
    /// The entry `name` at `path`, spooled when its name's sequence says.
    fn at(path: PathBuf, name: &str, body: String, unreadable: Option<String>) -> Spooled {
        let nanos = sequence(name).unwrap_or(0).min(i64::MAX as u64) as i64;
        Spooled {
            path,
            spooled_at: DateTime::from_timestamp_nanos(nanos),
            body,
            unreadable,
        }
    }
}

/// An outbox directory (created on first use).
#[derive(Debug, Clone)]
pub struct Outbox {
    dir: PathBuf,
    origin: Option<super::Origin>,
}

/// Held while flushing; dropping it releases the lock.
#[derive(Debug)]
pub struct FlushLock {
    _file: File,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Outbox {
    /// An outbox in `dir` (created on first push).
    pub fn new(dir: impl Into<PathBuf>) -> Outbox {
        Outbox {
            dir: dir.into(),
            origin: None,
        }
    }

    /// Notes, on the first push, where this outbox's records are going (see `flush --all`).
    pub fn with_origin(mut self, origin: super::Origin) -> Outbox {
        self.origin = Some(origin);
        self
    }

    /// The outbox directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores a body durably behind everything already waiting. Returns the entry's path.
    pub fn push(&self, body: &str) -> io::Result<PathBuf> {
        self.create_dir()?;
        if let Some(origin) = &self.origin {
            self.set_origin(origin)?;
        }
        let now = Utc::now().timestamp_nanos_opt().unwrap_or(i64::MAX).max(0) as u64;
        let last = self
            .names()?
            .iter()
            .filter_map(|n| sequence(n))
            .max()
            .unwrap_or(0);
        let seq = now.max(last + 1);
        let pid = std::process::id();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{seq:020}-{pid:010}-{n:06}{SUFFIX}"));
        write_atomic(&path, body.as_bytes(), true)?;
        Ok(path)
    }

    /// Every waiting entry, oldest first. Temp files and entries owned by another user are
    /// skipped; entries that are not readable text come back marked `unreadable`. An outbox
    /// directory that someone else owns or may write to is refused: what it holds would be
    /// posted with our token and trusted on resume.
    pub fn pending(&self) -> io::Result<Vec<Spooled>> {
        let mut names = self.names()?;
        if names.is_empty() {
            return Ok(Vec::new());
        }
        check_private_dir(&self.dir, "anyone could queue records under your name")
            .map_err(|e| io::Error::new(e.kind(), format!("refusing the outbox: {e}")))?;
        names.sort();
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let path = self.dir.join(&name);
            let (body, unreadable) = match read_entry(&path) {
                Entry::Text(b) => (b, None),
                Entry::Gone => continue, // flushed meanwhile
                Entry::NotOurs => {
                    tracing::warn!(
                        "{} is owned by another user; it is skipped (remove it if you do not \
                         know where it came from)",
                        path.display()
                    );
                    continue;
                }
                Entry::Unreadable(why) => (String::new(), Some(why)),
            };
            out.push(Spooled::at(path, &name, body, unreadable));
        }
        Ok(out)
    }

    /// Whether the directory is an outbox forgestate made (it holds the flush lock or the files
    /// that say where its records go and how the forge answered), not just any directory.
    pub fn is_outbox(&self) -> bool {
        [LOCK_FILE, ".origin.json", ".state.json"]
            .iter()
            .any(|f| self.dir.join(f).is_file())
    }

    /// How many entries wait (0 when the directory does not exist).
    pub fn len(&self) -> usize {
        self.names().map(|n| n.len()).unwrap_or(0)
    }

    /// Whether nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Deletes a flushed entry.
    pub fn remove(&self, entry: &Spooled) -> io::Result<()> {
        match std::fs::remove_file(&entry.path) {
            Ok(()) => sync_dir(&self.dir),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Moves a posted entry out of the queue into [`LANDED_DIR`], where it answers this
    /// machine's offline reads until a read of the thread holds it ([`Outbox::forget_landed`]).
    /// A rename: the entry is in the queue or among the landed, whenever a kill comes.
    pub fn land(&self, entry: &Path) -> io::Result<()> {
        let Some(name) = entry.file_name() else {
            return Ok(());
        };
        let landed = self.landed_dir();
        create_private_dir(&landed)?;
        match std::fs::rename(entry, landed.join(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
        sync_dir(&self.dir)?;
        let mut names = names_in(&landed)?;
        if names.len() > MAX_LANDED {
            names.sort();
            for name in &names[..names.len() - MAX_LANDED] {
                let _ = std::fs::remove_file(landed.join(name));
            }
        }
        Ok(())
    }

    /// The posted entries kept in [`LANDED_DIR`], oldest first (`spooled_at` is when each was
    /// spooled); unreadable ones are skipped.
    pub fn landed(&self) -> io::Result<Vec<Spooled>> {
        let landed = self.landed_dir();
        let mut names = names_in(&landed)?;
        if names.is_empty() {
            return Ok(Vec::new());
        }
        check_private_dir(&landed, "anyone could plant records under your name")
            .map_err(|e| io::Error::new(e.kind(), format!("refusing the posted records: {e}")))?;
        names.sort();
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let path = landed.join(&name);
            if let Entry::Text(body) = read_entry(&path) {
                out.push(Spooled::at(path, &name, body, None));
            }
        }
        Ok(out)
    }

    /// Deletes posted entries a read of the thread now holds (a hint: one left behind is
    /// deleted by a later read).
    pub fn forget_landed<'a>(&self, entries: impl IntoIterator<Item = &'a Spooled>) {
        for entry in entries {
            if entry.path.parent() == Some(self.landed_dir().as_path()) {
                let _ = std::fs::remove_file(&entry.path);
            }
        }
    }

    fn landed_dir(&self) -> PathBuf {
        self.dir.join(LANDED_DIR)
    }

    /// Takes the flush lock without waiting; `None` when another process is flushing.
    pub fn try_lock(&self) -> io::Result<Option<FlushLock>> {
        let file = self.lock_file()?;
        match file.try_lock() {
            Ok(()) => Ok(Some(FlushLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// Takes the flush lock, waiting up to `patience` for another flusher to finish.
    pub async fn lock(&self, patience: Duration) -> io::Result<Option<FlushLock>> {
        let deadline = std::time::Instant::now() + patience;
        loop {
            if let Some(lock) = self.try_lock()? {
                return Ok(Some(lock));
            }
            if std::time::Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Creates the directory, readable by its owner only: waiting records are not yet public.
    fn create_dir(&self) -> io::Result<()> {
        create_private_dir(&self.dir)
    }

    fn lock_file(&self) -> io::Result<File> {
        self.create_dir()?;
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Never wait on a FIFO planted under the lock's name.
            options.mode(0o600).custom_flags(libc::O_NONBLOCK);
        }
        options.open(self.dir.join(LOCK_FILE))
    }

    /// Names of complete entries (not temp or lock files).
    fn names(&self) -> io::Result<Vec<String>> {
        names_in(&self.dir)
    }
}

/// Names of complete entries in `dir` (not temp or lock files); none when it does not exist.
fn names_in(dir: &Path) -> io::Result<Vec<String>> {
    files_in(dir, |name| !name.starts_with('.') && name.ends_with(SUFFIX))
}

/// The names in `dir` that `keep` keeps; none when it does not exist.
pub(super) fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> io::Result<Vec<String>> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for entry in read {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if keep(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// What reading an entry found.
enum Entry {
    /// Its text.
    Text(String),
    /// It vanished (flushed by another process).
    Gone,
    /// Another user owns it: never posted, never moved, never trusted.
    NotOurs,
    /// It is there but is not readable text (a FIFO, a directory, too big, not UTF-8).
    Unreadable(String),
}

/// An entry's text. Entries are never read without bound and never opened in a way that blocks.
fn read_entry(path: &Path) -> Entry {
    match read_regular(path, MAX_ENTRY_BYTES) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Entry::Text(text),
            Err(e) => Entry::Unreadable(format!("is not UTF-8 text ({e})")),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Entry::Gone,
        Err(e) if NotOurs::is(&e) => Entry::NotOurs,
        Err(e) if e.kind() == io::ErrorKind::InvalidData => Entry::Unreadable(e.to_string()),
        Err(e) => Entry::Unreadable(format!("cannot be read: {e}")),
    }
}

/// The spool sequence (nanoseconds since the epoch) at the start of an entry's name.
fn sequence(name: &str) -> Option<u64> {
    name.split('-').next()?.parse().ok()
}
