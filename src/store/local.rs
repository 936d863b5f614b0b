//! The embedded local store: one append-only `thread.jsonl` per directory, one comment per line.
//!
//! Durability and concurrency, in order of the steps of an append:
//! 1. take an exclusive advisory lock on the file (`flock`), so writers from any number of
//!    processes are serialised and lines never interleave;
//! 2. read the last valid line from the end of the file to get the next id, so ids are strictly
//!    increasing across processes;
//! 3. write the new line with one `write_all` in append mode, then `fdatasync`.
//!
//! A crash during step 3 can leave a torn last line. Readers skip it and report it; the next
//! append starts on a fresh line, so the torn bytes are kept (for forensics) but never merged
//! into a good record.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Comment, Effort, Listing, StoreError, Thread};

/// The file inside the store directory.
pub const THREAD_FILE: &str = "thread.jsonl";

/// How far back we read at a time when looking for the last line.
const TAIL_CHUNK: u64 = 64 * 1024;

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
}

impl LocalThread {
    /// A store in `dir` (created on the first append) whose new comments are by `author`.
    pub fn new(dir: impl Into<PathBuf>, author: impl Into<String>) -> LocalThread {
        LocalThread {
            dir: dir.into(),
            author: author.into(),
        }
    }

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
        std::fs::create_dir_all(&self.dir).map_err(|source| StoreError::Io {
            op: "cannot create the store directory",
            path: self.dir.clone(),
            source,
        })
    }

    /// The blocking half of [`Thread::append`].
    pub fn append_blocking(&self, body: &str) -> Result<Comment, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        self.ensure_dir()?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io("cannot open"))?;
        file.lock().map_err(io("cannot lock"))?;
        // The lock is released when `file` is dropped, on every path out of this function.
        let len = file.metadata().map_err(io("cannot stat"))?.len();
        let (last, ends_clean) = last_line(&mut file, len).map_err(io("cannot read"))?;
        let now = Utc::now();
        // Keep created_at non-decreasing in id order, as a forge's (created, id) order is.
        let created_at = last.as_ref().map_or(now, |l| l.created_at.max(now));
        let line = Line {
            id: last.as_ref().map_or(1, |l| l.id + 1),
            author: self.author.clone(),
            created_at,
            updated_at: created_at,
            body: body.to_string(),
        };
        let mut bytes = Vec::with_capacity(body.len() + 160);
        if !ends_clean {
            bytes.push(b'\n'); // seal a torn last line so it cannot swallow this record
        }
        serde_json::to_writer(&mut bytes, &line)
            .map_err(|e| io("cannot encode a line for")(io::Error::other(e)))?;
        bytes.push(b'\n');
        file.write_all(&bytes).map_err(io("cannot append to"))?;
        file.sync_data().map_err(io("cannot sync"))?;
        if len == 0 {
            sync_dir(&self.dir);
        }
        Ok(line.into_comment())
    }

    /// The blocking half of [`Thread::init`]: creates the directory and an empty thread file.
    pub fn init_blocking(&self) -> Result<String, StoreError> {
        let path = self.file();
        self.ensure_dir()?;
        OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|source| StoreError::Io {
                op: "cannot create",
                path: path.clone(),
                source,
            })?;
        sync_dir(&self.dir);
        Ok(path.display().to_string())
    }

    /// The blocking half of [`Thread::list`].
    pub fn list_blocking(&self, since: Option<DateTime<Utc>>) -> Result<Listing, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Listing::default()),
            Err(e) => return Err(io("cannot open")(e)),
        };
        file.lock_shared().map_err(io("cannot lock"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io("cannot read"))?;
        drop(file);

        let mut listing = Listing::default();
        let ends_clean = bytes.last().is_none_or(|&b| b == b'\n');
        let mut segments = bytes.split(|&b| b == b'\n').enumerate().peekable();
        while let Some((index, segment)) = segments.next() {
            let is_last = segments.peek().is_none();
            if segment.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Line>(segment) {
                Ok(line) => {
                    if let Some(prev) = listing.comments.last()
                        && line.id <= prev.id
                    {
                        listing.warnings.push(format!(
                            "{}: line {} has id {} after id {}; the file was edited by hand, \
                             thread order may be wrong",
                            path.display(),
                            index + 1,
                            line.id,
                            prev.id
                        ));
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
                Err(e) => listing.warnings.push(format!(
                    "{}: skipped corrupt line {} ({} bytes): {e}",
                    path.display(),
                    index + 1,
                    segment.len()
                )),
            }
        }
        Ok(listing)
    }
}

impl Line {
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

/// Finds the last line of the file that parses, reading backwards. Also says whether the file
/// ends with a newline (an empty file does).
fn last_line(file: &mut File, len: u64) -> io::Result<(Option<Line>, bool)> {
    if len == 0 {
        return Ok((None, true));
    }
    let ends_clean = read_range(file, len - 1, len)? == b"\n";
    let mut end = if ends_clean { len - 1 } else { len };
    loop {
        let start = line_start(file, end)?;
        if let Ok(line) = serde_json::from_slice::<Line>(&read_range(file, start, end)?) {
            return Ok((Some(line), ends_clean));
        }
        if start == 0 {
            return Ok((None, ends_clean));
        }
        end = start - 1;
    }
}

/// The offset just after the last `\n` before `end`, or 0.
fn line_start(file: &mut File, end: u64) -> io::Result<u64> {
    let mut hi = end;
    while hi > 0 {
        let lo = hi.saturating_sub(TAIL_CHUNK);
        let chunk = read_range(file, lo, hi)?;
        if let Some(at) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(lo + at as u64 + 1);
        }
        hi = lo;
    }
    Ok(0)
}

fn read_range(file: &mut File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(end - start).map_err(io::Error::other)?];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut buf)?;
    Ok(buf)
}

/// Makes a newly created file's directory entry durable. Best effort: not every platform can
/// open a directory for syncing.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl Thread for LocalThread {
    fn describe(&self) -> String {
        format!("local store {}", self.dir.display())
    }

    async fn append_with(&self, body: &str, _effort: Effort) -> Result<Comment, StoreError> {
        let (this, body) = (self.clone(), body.to_string());
        blocking(move || this.append_blocking(&body)).await
    }

    async fn list_with(
        &self,
        since: Option<DateTime<Utc>>,
        _effort: Effort,
    ) -> Result<Listing, StoreError> {
        let this = self.clone();
        blocking(move || this.list_blocking(since)).await
    }

    async fn whoami(&self) -> Result<String, StoreError> {
        Ok(self.author.clone())
    }

    async fn init(&self) -> Result<String, StoreError> {
        let this = self.clone();
        blocking(move || this.init_blocking()).await
    }

    fn trusts_everyone(&self) -> bool {
        true
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}
