//! Incremental reads of the thread file: the complete lines after a byte offset, so a reader
//! that remembers where it stopped never re-reads (or re-parses) the lines before it.
//!
//! The offset is only trusted for the same file: same device and inode (the file was not
//! replaced, as `prune` does), not shorter than the offset, and the bytes just before the offset
//! unchanged (a hash of up to [`TAIL`] bytes). Otherwise the read starts again at byte 0 and
//! says so (`full`).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};

use super::file::open_regular;
use super::{LocalThread, read_lines};
use crate::store::{Cursor, Delta, StoreError};

/// How many bytes before the offset are hashed.
const TAIL: u64 = 256;

impl LocalThread {
    /// The blocking half of [`crate::store::Thread::list_delta`] for the local store.
    pub fn delta_blocking(&self, cursor: Option<&Cursor>) -> Result<Delta, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        let location = format!("local store {}", self.dir().display());
        let mut file = match open_regular(&path, OpenOptions::new().read(true)) {
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
        let start = match cursor {
            Some(&Cursor::Offset {
                identity: known,
                offset,
                tail,
            }) if known == identity
                && offset <= meta.len()
                && tail_hash(&mut file, offset).map_err(io("cannot read"))? == tail =>
            {
                offset
            }
            _ => 0,
        };
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
        Ok(Delta {
            listing: read_lines(&path, &bytes, None),
            cursor: Some(Cursor::Offset {
                identity,
                offset,
                tail,
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
