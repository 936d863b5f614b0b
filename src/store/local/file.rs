//! The thread file's low-level reading: opening it safely, finding the largest id and the last
//! valid line, and summarising odd lines into a few warnings.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::Line;
use super::ids::Numbering;

/// How far back we read at a time when looking for the last line.
const TAIL_CHUNK: u64 = 64 * 1024;

/// Opens `path` with `options` and refuses anything that is not a regular file.
///
/// The open does not block (a FIFO would otherwise wait for a writer forever) and the type is
/// judged on the opened handle, not on a separate `stat` that a swap could race. With `private`
/// (a store [`LocalThread::private`](super::LocalThread::private) made: `import`'s source,
/// `export`'s target), a symbolic link is never followed, a file created is readable by its owner
/// only, and a file another user owns, or that others may write, is refused: whoever can write it
/// chooses the records `import` posts with your token.
pub(super) fn open_regular(
    path: &Path,
    options: &mut OpenOptions,
    private: bool,
) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if private { libc::O_NOFOLLOW } else { 0 };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
        if private {
            options.mode(0o600);
        }
    }
    let file = options.open(path).map_err(|e| match private {
        true if is_symlink(path) => io::Error::new(
            io::ErrorKind::PermissionDenied,
            "it is a symbolic link, and import and export never follow one (whoever made it \
             chooses what is read or overwritten); copy the file itself into the directory \
             (`cp -L`), or use another directory",
        ),
        _ => e,
    })?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file; move it away (the store creates a new thread \
                 file) or point --store or local.dir at another directory",
                describe(kind)
            ),
        ));
    }
    if private {
        check_private(path, &meta)?;
    }
    Ok(file)
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Refuses a thread file another user owns or others may write.
fn check_private(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    use crate::fsutil::{owned_by_me, writable_by_others};
    let why = if !owned_by_me(meta) {
        "it is owned by another user, who chooses what it holds; copy it into a directory of \
         your own"
            .to_string()
    } else if writable_by_others(meta) {
        format!(
            "it is writable by others ({}), so anyone could have planted records in it; run \
             `chmod go-w {}` once you have checked what it holds",
            mode(meta),
            path.display()
        )
    } else {
        return Ok(());
    };
    Err(io::Error::new(io::ErrorKind::PermissionDenied, why))
}

/// Makes a thread file the store writes into readable by its owner only (an export written by
/// an earlier version may be readable by anyone).
pub(super) fn make_private(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

fn mode(meta: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        format!("mode {:o}", meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        "its mode".to_string()
    }
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// Opens `path` like [`open_regular`] and takes an exclusive lock on it, making sure the path
/// still names the file that was locked: a delete replaces the file by rename while holding the
/// lock, and whoever waited for that lock on the old file must not write to it.
pub(super) fn lock_current(path: &Path, options: &OpenOptions, private: bool) -> io::Result<File> {
    loop {
        let file = open_regular(path, &mut options.clone(), private)?;
        file.lock()?;
        if same_file(&file, path)? {
            return Ok(file);
        }
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (open, named) = (file.metadata()?, std::fs::metadata(path));
    match named {
        Ok(named) => Ok(open.dev() == named.dev() && open.ino() == named.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, _path: &Path) -> io::Result<bool> {
    Ok(true)
}

/// The id after `max` (1 for an empty thread), or an error saying how to fix a file whose ids
/// were hand-edited up to the limit.
pub(super) fn next_id(max: Option<u64>) -> io::Result<u64> {
    match max {
        None => Ok(1),
        Some(max) => max.checked_add(1).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "its largest id is {max}, so no id is left for a new record; renumber the \
                     \"id\" of each line in ascending order from 1, or move the file away to \
                     start a new thread"
                ),
            )
        }),
    }
}

/// What an append needs to know about the file as it stands.
#[derive(Debug, Default)]
pub(super) struct Tail {
    /// The largest id of any line up to the last valid one.
    pub max_id: Option<u64>,
    /// The latest `created_at` of the last valid line and the line with the largest id.
    pub created_at: Option<DateTime<Utc>>,
    /// Whether the file ends with a newline (an empty file does).
    pub ends_clean: bool,
}

/// Reads the file (of length `len`) for an append: the last valid line, found from the end, and
/// the largest id of every line up to it. Lines after the last valid one are torn or corrupt and
/// do not count. Ids are usually in order, but a merged or hand-edited file need not be.
pub(super) fn tail(file: &mut File, len: u64) -> io::Result<Tail> {
    let Some((start, end, ends_clean, last)) = last_line(file, len)? else {
        let ends_clean = len == 0 || read_range(file, len - 1, len)? == b"\n";
        return Ok(Tail {
            ends_clean,
            ..Tail::default()
        });
    };
    let (mut max_id, mut max_at) = (last.id, start);
    // Whether every id is above the one before: otherwise an id may repeat, and the lines are
    // numbered as a reader numbers them (`ids`), so a new record's id is above those too.
    let (mut ordered, mut prev) = (true, None);
    file.seek(SeekFrom::Start(0))?;
    let mut reader = BufReader::with_capacity(256 * 1024, file.by_ref().take(start));
    let (mut buf, mut offset) = (Vec::new(), 0u64);
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        if let Some(id) = line_id(&buf) {
            ordered &= prev.is_none_or(|p| id > p);
            prev = Some(id);
            if id > max_id {
                (max_id, max_at) = (id, offset);
            }
        }
        offset += n as u64;
    }
    ordered &= prev.is_none_or(|p| last.id > p);
    if !ordered {
        let bytes = read_range(file, 0, end)?;
        max_id = max_id.max(numbered_max(&bytes).unwrap_or(0));
    }
    let mut created_at = last.created_at;
    if max_at != start {
        let line_end = line_end(file, max_at, end)?;
        if let Ok(line) = serde_json::from_slice::<Line>(&read_range(file, max_at, line_end)?) {
            created_at = created_at.max(line.created_at);
        }
    }
    Ok(Tail {
        max_id: Some(max_id),
        created_at: Some(created_at),
        ends_clean,
    })
}

/// The largest id the lines of `bytes` are read under ([`Numbering`]).
fn numbered_max(bytes: &[u8]) -> Option<u64> {
    let mut numbering = Numbering::after(None);
    for (index, segment) in bytes.split(|&b| b == b'\n').enumerate() {
        if let Ok(line) = serde_json::from_slice::<Line>(segment) {
            numbering.place(index + 1, line.id, segment);
        }
    }
    numbering.max()
}

/// The id of one line, cheaply: the prefix this store writes (`{"id":N,`) is read directly, and
/// anything else (a hand-written line) is parsed. `None` for a line with no readable id.
fn line_id(line: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: u64,
    }
    if let Some(rest) = line.strip_prefix(br#"{"id":"#) {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest.get(digits) == Some(&b',') {
            return std::str::from_utf8(&rest[..digits]).ok()?.parse().ok();
        }
    }
    serde_json::from_slice::<IdOnly>(line).ok().map(|l| l.id)
}

/// Finds the last line of the file that parses, reading backwards: its start and end offsets,
/// whether the file ends with a newline, and the line.
fn last_line(file: &mut File, len: u64) -> io::Result<Option<(u64, u64, bool, Line)>> {
    if len == 0 {
        return Ok(None);
    }
    let ends_clean = read_range(file, len - 1, len)? == b"\n";
    let mut end = if ends_clean { len - 1 } else { len };
    loop {
        let start = line_start(file, end)?;
        if let Ok(line) = serde_json::from_slice::<Line>(&read_range(file, start, end)?) {
            return Ok(Some((start, end, ends_clean, line)));
        }
        if start == 0 {
            return Ok(None);
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

/// The offset of the first `\n` at or after `start`, or `limit`.
fn line_end(file: &mut File, start: u64, limit: u64) -> io::Result<u64> {
    let mut lo = start;
    while lo < limit {
        let hi = lo.saturating_add(TAIL_CHUNK).min(limit);
        let chunk = read_range(file, lo, hi)?;
        if let Some(at) = chunk.iter().position(|&b| b == b'\n') {
            return Ok(lo + at as u64);
        }
        lo = hi;
    }
    Ok(limit)
}

fn read_range(file: &mut File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(end - start).map_err(io::Error::other)?];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut buf)?;
    Ok(buf)
}

/// Odd lines met while listing, reported as one warning per kind (with a count and the first
/// one) rather than one per line, so a badly damaged file does not flood the output.
pub(super) struct LineWarnings<'a> {
    path: &'a Path,
    corrupt: Option<String>,
    corrupt_count: usize,
    disorder: Option<String>,
    disorder_count: usize,
    repeat: Option<String>,
    repeat_count: usize,
    copy: Option<String>,
    copy_count: usize,
}

impl<'a> LineWarnings<'a> {
    pub fn new(path: &'a Path) -> LineWarnings<'a> {
        LineWarnings {
            path,
            corrupt: None,
            corrupt_count: 0,
            disorder: None,
            disorder_count: 0,
            repeat: None,
            repeat_count: 0,
            copy: None,
            copy_count: 0,
        }
    }

    /// Line `number` (1-based) of `bytes` bytes does not parse.
    pub fn corrupt(&mut self, number: usize, bytes: usize, error: &serde_json::Error) {
        self.corrupt_count += 1;
        self.corrupt
            .get_or_insert_with(|| format!("line {number} ({bytes} bytes): {error}"));
    }

    /// Line `number` has id `id`, not above the `prev` of the line before it.
    pub fn out_of_order(&mut self, number: usize, id: u64, prev: u64) {
        self.disorder_count += 1;
        self.disorder
            .get_or_insert_with(|| format!("line {number} has id {id} after id {prev}"));
    }

    /// Line `number` repeats the id `id` of line `of` with other content, and is read as `read_as`
    /// (`None`: no id was left, and it is skipped).
    pub fn repeat(&mut self, number: usize, id: u64, of: usize, read_as: Option<u64>) {
        self.repeat_count += 1;
        self.repeat.get_or_insert_with(|| match read_as {
            Some(new) => format!("line {number} repeats id {id} of line {of}, read as id {new}"),
            None => format!(
                "line {number} repeats id {id} of line {of} and is skipped: no id is left above \
                 the largest; renumber the \"id\" of each line in ascending order from 1"
            ),
        });
    }

    /// Line `number` is a copy of line `of` (same id, same bytes).
    pub fn copy(&mut self, number: usize, of: usize) {
        self.copy_count += 1;
        self.copy
            .get_or_insert_with(|| format!("line {number} is a copy of line {of}"));
    }

    /// The warnings: at most one per kind.
    pub fn finish(self) -> Vec<String> {
        let path = self.path.display();
        let mut out = Vec::new();
        match (self.corrupt_count, self.corrupt) {
            (1, Some(first)) => out.push(format!("{path}: skipped corrupt {first}")),
            (n, Some(first)) => out.push(format!(
                "{path}: skipped {n} corrupt lines; the first is {first}"
            )),
            _ => {}
        }
        let fix = "the file was edited or merged by hand; records are read in id order";
        match (self.disorder_count, self.disorder) {
            (1, Some(first)) => out.push(format!("{path}: {first}; {fix}")),
            (n, Some(first)) => out.push(format!(
                "{path}: {n} lines have an id not above the line before (the first: {first}); \
                 {fix}"
            )),
            _ => {}
        }
        let fix = "the file was merged or edited by hand; no record is lost: the later line is \
                   a record of its own, read under the id after the largest before it, and new \
                   records are numbered after it; `list --invalid` and `history` show both, and \
                   setting that line's \"id\" in the file to the id it is read as settles it";
        match (self.repeat_count, self.repeat) {
            (1, Some(first)) => out.push(format!(
                "{path}: {first}: two records with other content had the same id; {fix}"
            )),
            (n, Some(first)) => out.push(format!(
                "{path}: {n} lines repeat an earlier line's id with other content (the first: \
                 {first}); {fix}"
            )),
            _ => {}
        }
        let fix = "the same record twice, as merging a store with a copy of itself leaves; each \
                   is read once";
        match (self.copy_count, self.copy) {
            (1, Some(first)) => out.push(format!("{path}: {first}; {fix}")),
            (n, Some(first)) => out.push(format!(
                "{path}: {n} lines are copies of earlier lines (the first: {first}); {fix}"
            )),
            _ => {}
        }
        out
    }
}
