//! Incremental reads of the thread file: the complete lines after a byte offset, so a reader
//! that remembers where it stopped never re-reads (or re-parses) the lines before it.
//!
//! The offset is only trusted for the same file, changed since only by appends:
//!
//! - same device and inode (the file was not replaced, as `prune` does);
//! - not shorter than the offset, and the bytes just before the offset unchanged (a hash of up to
//!   [`TAIL`] bytes: a truncation, or an edit that moved the end, shows there);
//! - if it has the size it had at the last read, the same modification time (nanoseconds): a
//!   file of the same size written since was edited in place (an append always grows it). A
//!   read that saw a modification time within [`RACY_NS`] of its own clock cannot tell a write
//!   in the same clock tick apart, so its cursor is marked racy and the next read of an
//!   unchanged-looking file starts again (git's "racily clean" rule).
//!
//! Otherwise the read starts again at byte 0 and says so (`full`). Why not a checksum of every
//! indexed byte: that reads the whole file on every warm read (100 MB at 100k records), which is
//! what the index exists to avoid. What this misses: an edit that keeps the length, lies before
//! the last [`TAIL`] bytes, and is followed by an append before the next read (the size then
//! grew, as an append's does); `--refresh` reads everything.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};

use super::file::open_regular;
use super::{LocalThread, read_lines_after};
use crate::store::{Cursor, Delta, StoreError};

/// How many bytes before the offset are hashed.
const TAIL: u64 = 256;

/// A modification time this close to the reading clock (in nanoseconds) may share its clock
/// tick with a later write (coarse file-system clocks tick every 1 to 10 ms).
const RACY_NS: i128 = 20_000_000;

impl LocalThread {
    /// The blocking half of [`crate::store::Thread::list_delta`] for the local store.
    pub fn delta_blocking(&self, cursor: Option<&Cursor>) -> Result<Delta, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        let location = format!("local store {}", self.dir().display());
        let mut file = match open_regular(&path, OpenOptions::new().read(true), self.private) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Delta {
                    full: true,
                    location,
                    ..Delta::default()
                });
            }
            Err(e) => return Err(io("cannot open")(e)),
        };
        file.lock_shared().map_err(io("cannot lock"))?;
        let meta = file.metadata().map_err(io("cannot inspect"))?;
        let identity = identity(&meta);
        let (len, mtime_ns) = (meta.len(), mtime_ns(&meta));
        let start = match cursor {
            Some(&Cursor::Offset {
                identity: known,
                offset,
                tail,
                len: known_len,
                mtime_ns: known_mtime,
                racy,
                max_id,
            }) if known == identity
                && (offset == 0 || max_id.is_some())
                && known_mtime != 0
                && offset <= len
                && known_len <= len
                && (len > known_len || (mtime_ns == known_mtime && !racy))
                && tail_hash(&mut file, offset).map_err(io("cannot read"))? == tail =>
            {
                (offset, max_id)
            }
            _ => (0, None),
        };
        let (start, max_before) = start;
        // Taken after the metadata: a write after the `stat` has a later time than this.
        let racy = now_ns().is_none_or(|now| now - mtime_ns < RACY_NS);
        file.seek(SeekFrom::Start(start))
            .map_err(io("cannot read"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io("cannot read"))?;
        // Only complete lines move the offset: a torn or half-written last line is read again.
        let consumed = bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i as u64 + 1);
        let offset = start + consumed;
        let tail = tail_hash(&mut file, offset).map_err(io("cannot read"))?;
        drop(file);
        let (listing, max_id) = read_lines_after(&path, &bytes, None, max_before);
        if start > 0 && !listing.warnings.is_empty() {
            // An odd line after the cursor (a torn last line, or one sealed by an append since,
            // or an id not above every one before, which only the whole file can number):
            // the whole file is read instead, so its warnings name the file's own line numbers
            // and replace what the last full read said (a torn line may be a corrupt one now).
            return self.delta_blocking(None);
        }
        Ok(Delta {
            listing,
            cursor: Some(Cursor::Offset {
                identity,
                offset,
                tail,
                len,
                mtime_ns,
                racy,
                max_id,
            }),
            full: start == 0,
            location,
        })
    }
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// The modification time in nanoseconds since the epoch (0 where the platform has none).
fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified().ok().map_or(0, nanos)
}

/// This machine's clock in nanoseconds since the epoch.
fn now_ns() -> Option<i128> {
    Some(nanos(std::time::SystemTime::now())).filter(|&n| n != 0)
}

fn nanos(t: std::time::SystemTime) -> i128 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// FNV-1a over up to [`TAIL`] bytes before `offset`.
fn tail_hash(file: &mut File, offset: u64) -> io::Result<u64> {
    let from = offset.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(TAIL as usize);
    file.by_ref().take(offset - from).read_to_end(&mut buf)?;
    Ok(buf.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread of two lines, and the cursor a read of it left.
    fn read_once() -> (tempfile::TempDir, LocalThread, Cursor) {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalThread::new(dir.path(), "tester");
        store.append_blocking("one").unwrap();
        store.append_blocking("two").unwrap();
        let first = store.delta_blocking(None).unwrap();
        assert!(first.full);
        (dir, store, first.cursor.unwrap())
    }

    fn with(cursor: &Cursor, racy_now: bool, mtime_shift: i128) -> Cursor {
        let Cursor::Offset {
            identity,
            offset,
            tail,
            len,
            mtime_ns,
            max_id,
            ..
        } = cursor.clone()
        else {
            panic!("a local store's cursor is an offset")
        };
        Cursor::Offset {
            identity,
            offset,
            tail,
            len,
            mtime_ns: mtime_ns + mtime_shift,
            racy: racy_now,
            max_id,
        }
    }

    #[test]
    fn an_unchanged_file_is_not_read_again_unless_its_cursor_was_racy() {
        let (_dir, store, cursor) = read_once();
        let calm = with(&cursor, false, 0);
        let again = store.delta_blocking(Some(&calm)).unwrap();
        assert!(!again.full, "same size, same time: nothing to read");
        assert!(again.listing.comments.is_empty());
        let racy = with(&cursor, true, 0);
        let again = store.delta_blocking(Some(&racy)).unwrap();
        assert!(
            again.full,
            "a racy cursor cannot vouch for an unchanged-looking file"
        );
        assert_eq!(again.listing.comments.len(), 2);
    }

    #[test]
    fn same_size_with_another_time_is_an_edit_and_an_append_is_read_after_the_offset() {
        let (_dir, store, cursor) = read_once();
        let edited = store
            .delta_blocking(Some(&with(&cursor, false, -1)))
            .unwrap();
        assert!(edited.full, "same size, other time: edited in place");
        store.append_blocking("three").unwrap();
        let appended = store
            .delta_blocking(Some(&with(&cursor, false, 0)))
            .unwrap();
        assert!(!appended.full);
        assert_eq!(appended.listing.comments.len(), 1);
        assert_eq!(appended.listing.comments[0].body, "three");
    }

    #[test]
    fn a_cursor_from_before_times_were_kept_reads_everything() {
        let (_dir, store, cursor) = read_once();
        let Cursor::Offset {
            identity,
            offset,
            tail,
            ..
        } = cursor
        else {
            panic!("a local store's cursor is an offset")
        };
        let old: Cursor = serde_json::from_value(serde_json::json!({"Offset": {
            "identity": identity, "offset": offset, "tail": tail}}))
        .unwrap();
        assert!(store.delta_blocking(Some(&old)).unwrap().full);
    }
}
