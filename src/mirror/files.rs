//! The mirror's file paths, and the data area of a base (or a spill) kept open for reading the
//! records an answer needs. A leaf under `disk.rs`, `summary.rs`, `view.rs` and `digest.rs`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;

/// The mirror's file paths.
#[derive(Debug, Clone)]
pub(super) struct Files {
    pub base: PathBuf,
    pub delta: PathBuf,
    /// The base's record id index (`summary.rs`).
    pub ids: PathBuf,
}

/// The base's data area, open for reading the records an answer needs.
#[derive(Debug)]
pub(super) struct Data {
    file: Mutex<File>,
    start: u64,
}

impl Data {
    /// The data area of `file`, starting `start` bytes in (after a base's header and index).
    pub(super) fn at(file: File, start: u64) -> Data {
        Data {
            file: Mutex::new(file),
            start,
        }
    }

    /// A file of records' data alone (a spill, `digest.rs`), its offsets from its first byte.
    pub(super) fn whole(file: File) -> Data {
        Data {
            file: Mutex::new(file),
            start: 0,
        }
    }

    /// The JSON value at `(offset, len)`.
    pub fn read(&self, offset: u64, len: u64) -> Result<Value, String> {
        let buf = self.bytes(offset, len)?;
        serde_json::from_slice(&buf).map_err(|e| format!("its data does not read: {e}"))
    }

    /// Up to `max` raw bytes from `offset` on (fewer at the end of the file).
    pub(super) fn chunk(&self, offset: u64, max: usize) -> Result<Vec<u8>, String> {
        let mut buf = Vec::with_capacity(max);
        let mut file = self
            .file
            .lock()
            .map_err(|_| "a reader panicked".to_string())?;
        file.seek(SeekFrom::Start(self.start + offset))
            .and_then(|_| (&mut *file).take(max as u64).read_to_end(&mut buf))
            .map_err(|e| format!("cannot read its data: {e}"))?;
        Ok(buf)
    }

    /// The raw bytes at `(offset, len)`.
    pub(super) fn bytes(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let mut buf = vec![0; usize::try_from(len).map_err(|e| e.to_string())?];
        let mut file = self
            .file
            .lock()
            .map_err(|_| "a reader panicked".to_string())?;
        file.seek(SeekFrom::Start(self.start + offset))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(|e| format!("cannot read its data: {e}"))?;
        Ok(buf)
    }
}
