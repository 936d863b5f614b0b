//! The mirror's file paths, and the data area of a base (or a spill) kept open for reading the
//! records an answer needs. A leaf under `disk.rs`, `summary.rs`, `view.rs` and `digest.rs`.

use std::fs::File;
use std::path::PathBuf;
#[cfg(not(unix))]
use std::sync::Mutex;

use serde_json::Value;

/// The checksum of a record's data, or of a base's index: CRC-32 (`crc32fast`). It catches a
/// byte changed on disk (a bad sector, a stray edit); the cache is the account's own
/// (`docs/security.md`), so it guards against no one, and is chosen for speed.
pub(super) fn sum(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The mirror's file paths.
#[derive(Debug, Clone)]
pub(super) struct Files {
    pub base: PathBuf,
    pub delta: PathBuf,
    /// The base's record id index (`summary.rs`).
    pub ids: PathBuf,
}

/// The base's data area, open for reading the records an answer needs. Readers on several
/// threads (the base's writer and the summary, side by side) read it at once: each read names
/// its offset (`pread` on Unix), with no shared cursor to take turns on.
#[derive(Debug)]
pub(super) struct Data {
    file: File,
    start: u64,
    /// Where a read must move the file's one cursor (not Unix), reads take turns.
    #[cfg(not(unix))]
    turn: Mutex<()>,
}

impl Data {
    /// The data area of `file`, starting `start` bytes in (after a base's header and index).
    pub(super) fn at(file: File, start: u64) -> Data {
        Data {
            file,
            start,
            #[cfg(not(unix))]
            turn: Mutex::new(()),
        }
    }

    /// A file of records' data alone (a spill, `digest.rs`), its offsets from its first byte.
    pub(super) fn whole(file: File) -> Data {
        Data::at(file, 0)
    }

    /// The JSON value at `(offset, len)`, whose checksum is `sum`.
    pub fn read(&self, offset: u64, len: u64, sum: u32) -> Result<Value, String> {
        let buf = self.checked(offset, len, sum)?;
        serde_json::from_slice(&buf).map_err(|e| format!("its data does not read: {e}"))
    }

    /// The raw bytes at `(offset, len)`, when their checksum is `sum` (a record's data, as
    /// its [`Blob::At`](super::slot::Blob::At) names it); else an error: they changed on disk.
    pub(super) fn checked(&self, offset: u64, len: u64, sum: u32) -> Result<Vec<u8>, String> {
        let buf = self.bytes(offset, len)?;
        if self::sum(&buf) != sum {
            return Err(
                "a record's data does not match its checksum: it was changed on disk".into(),
            );
        }
        Ok(buf)
    }

    /// Up to `max` raw bytes from `offset` on (fewer at the end of the file).
    pub(super) fn chunk(&self, offset: u64, max: usize) -> Result<Vec<u8>, String> {
        let mut buf = Vec::new();
        self.chunk_into(offset, max, &mut buf)?;
        Ok(buf)
    }

    /// [`Data::chunk`] into `buf`, in place of what it held: a buffer read into again and again
    /// is allocated (and its pages faulted in) once.
    pub(super) fn chunk_into(
        &self,
        offset: u64,
        max: usize,
        buf: &mut Vec<u8>,
    ) -> Result<(), String> {
        buf.clear();
        buf.resize(max, 0);
        let mut got = 0;
        while got < max {
            match self.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    buf.clear();
                    return Err(format!("cannot read its data: {e}"));
                }
            }
        }
        buf.truncate(got);
        Ok(())
    }

    /// The raw bytes at `(offset, len)`.
    pub(super) fn bytes(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let len = usize::try_from(len).map_err(|e| e.to_string())?;
        let buf = self.chunk(offset, len)?;
        if buf.len() < len {
            return Err("cannot read its data: the file is cut short".into());
        }
        Ok(buf)
    }

    /// Reads into `buf` from `offset` of the data area.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let at = self
            .start
            .checked_add(offset)
            .ok_or_else(|| std::io::Error::other("an offset past the end"))?;
        #[cfg(unix)]
        return std::os::unix::fs::FileExt::read_at(&self.file, buf, at);
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let _turn = self
                .turn
                .lock()
                .map_err(|_| std::io::Error::other("a reader panicked"))?;
            let mut file = &self.file;
            file.seek(SeekFrom::Start(at))?;
            file.read(buf)
        }
    }
}
