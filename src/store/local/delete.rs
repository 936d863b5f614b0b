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
use super::ids::{Numbering, Placed};
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
        // Each line's id as a reader numbers it (`ids`): a repeated id is written back as the id
        // it is read under, so removing a line never gives another one a new id.
        let segments: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let mut numbering = Numbering::after(None);
        let placed: Vec<Option<(Line, Placed)>> = segments
            .iter()
            .enumerate()
            .map(|(i, segment)| {
                let line = serde_json::from_slice::<Line>(segment).ok()?;
                let placed = numbering.place(i + 1, line.id, segment);
                Some((line, placed))
            })
            .collect();
        // The newest line stays, emptied, so the next append still takes the id after it.
        let hole = numbering.max().filter(|m| wanted.contains(m));
        let mut kept = Vec::with_capacity(bytes.len());
        let mut deleted = Vec::new();
        let last = segments.len().saturating_sub(1);
        let encode = |e: serde_json::Error| io("cannot encode a line for")(e.into());
        for (i, (segment, placed)) in segments.iter().zip(placed).enumerate() {
            let line: Cow<[u8]> = match placed {
                // A copy of a line kept, or not: the line itself stands for it.
                Some((_, Placed::Copy { .. })) => continue,
                Some((line, Placed::Own { id, .. } | Placed::Renumbered { id, .. }))
                    if wanted.contains(&id) =>
                {
                    deleted.push(id);
                    match Some(id) == hole {
                        true => Cow::Owned(written(line, id, true).map_err(encode)?),
                        false => continue,
                    }
                }
                Some((line, Placed::Renumbered { id, .. })) => {
                    Cow::Owned(written(line, id, false).map_err(encode)?)
                }
                // Its own id, or a line that does not read, or one no id was left for: as it is.
                _ => Cow::Borrowed(*segment),
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

/// `line` as written back under `id`, its body emptied when `empty` (the newest line's deletion).
fn written(mut line: Line, id: u64, empty: bool) -> serde_json::Result<Vec<u8>> {
    line.id = id;
    if empty {
        line.body.clear();
    }
    serde_json::to_vec(&line)
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
