//! Deleting comments from the thread file: the file is rewritten without them, atomically, under
//! the store's exclusive lock.
//!
//! The new file replaces the old one by rename, so a crash leaves one or the other, never a
//! half-written thread. Appenders lock the file and then check that the path still names the
//! file they locked (`file::lock_current`), so nobody appends to a file a delete just replaced.
//! Lines that do not parse (a torn last line, a corrupt one) are kept byte for byte. Ids are
//! never renumbered, and the line with the largest id is never removed, so ids are never
//! reused (a reader that remembers the last id it saw stays right): deleting that comment
//! empties its body instead, a comment of no text that keeps its id, time and author.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::{self, Read};

use super::file;
use super::{Deleted, Line, LocalThread, StoreError};

impl LocalThread {
    /// The blocking half of [`crate::store::Thread::delete`].
    pub fn delete_blocking(&self, ids: &[u64]) -> Result<Deleted, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        let wanted: BTreeSet<u64> = ids.iter().copied().collect();
        if wanted.is_empty() {
            return Ok(Deleted::default());
        }
        let mut locked =
            match file::lock_current(&path, OpenOptions::new().read(true), self.private) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Deleted {
                        deleted: Vec::new(),
                        missing: wanted.into_iter().collect(),
                    });
                }
                Err(e) => return Err(io("cannot open")(e)),
            };
        // The lock is held until `locked` is dropped, after the rename.
        let mut bytes = Vec::new();
        locked.read_to_end(&mut bytes).map_err(io("cannot read"))?;
        let max_id = bytes.split(|&b| b == b'\n').filter_map(line_id).max();
        // The newest line stays, emptied, so the next append still takes the id after it.
        let hole = max_id.filter(|m| wanted.contains(m));
        let mut kept = Vec::with_capacity(bytes.len());
        let mut deleted = Vec::new();
        let segments: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let last = segments.len().saturating_sub(1);
        for (i, segment) in segments.into_iter().enumerate() {
            let line = match line_id(segment).filter(|id| wanted.contains(id)) {
                Some(id) if Some(id) == hole => match emptied(segment) {
                    Some(line) => {
                        deleted.push(id);
                        Cow::Owned(line)
                    }
                    // A line whose id reads but whose fields do not: kept as it is.
                    None => Cow::Borrowed(segment),
                },
                Some(id) => {
                    deleted.push(id);
                    continue;
                }
                None => Cow::Borrowed(segment),
            };
            kept.extend_from_slice(&line);
            if i < last {
                kept.push(b'\n');
            }
        }
        if deleted.is_empty() {
            return Ok(Deleted {
                deleted,
                missing: wanted.into_iter().collect(),
            });
        }
        let private = private_mode(&locked);
        crate::fsutil::write_atomic(&path, &kept, private).map_err(io("cannot rewrite"))?;
        drop(locked);
        let missing = wanted
            .into_iter()
            .filter(|id| !deleted.contains(id))
            .collect();
        deleted.sort_unstable();
        deleted.dedup();
        Ok(Deleted { deleted, missing })
    }
}

/// `segment` with an empty body (same id, author and times), for the newest line's deletion.
fn emptied(segment: &[u8]) -> Option<Vec<u8>> {
    let mut line = serde_json::from_slice::<Line>(segment).ok()?;
    line.body.clear();
    serde_json::to_vec(&line).ok()
}

/// The id of a complete line; `None` for a torn or corrupt one (which is kept as it is).
fn line_id(segment: &[u8]) -> Option<u64> {
    serde_json::from_slice::<Line>(segment).ok().map(|l| l.id)
}

/// Whether the thread file is readable by its owner only (the rewrite keeps it so).
fn private_mode(file: &std::fs::File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o077 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        false
    }
}
