//! Writing comments into the local store as another store held them (`export`): each keeps its
//! id, author and times, so the exported thread reads back as the original did.

use std::io::{self, Read, Write};

use super::{Comment, Line, LocalThread, StoreError, file, read_lines};

/// What [`LocalThread::append_kept_blocking`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kept {
    /// Comments written.
    pub written: usize,
    /// Comments the store already held (same id): an export run again.
    pub present: usize,
}

impl LocalThread {
    /// Appends `comments` (in ascending id order) with their own ids, authors and times, under
    /// the store's lock. A comment the store already holds (same id, time and body) is skipped
    /// (rerunning an export writes nothing new), another comment under its id is refused; one whose id is below the store's largest and not in it is
    /// refused, since ids must increase in thread order (the store holds another thread).
    pub fn append_kept_blocking(&self, comments: &[Comment]) -> Result<Kept, StoreError> {
        let path = self.file();
        let io = |op| self.io_error(op);
        let mut handle = self.lock_for_append()?;
        if self.private {
            file::make_private(&handle).map_err(io("cannot make private"))?;
        }
        let mut bytes = Vec::new();
        handle.read_to_end(&mut bytes).map_err(io("cannot read"))?;
        let held = read_lines(&path, &bytes, None);
        let ids: std::collections::HashMap<u64, &Comment> =
            held.comments.iter().map(|c| (c.id, c)).collect();
        let mut max = held.comments.iter().map(|c| c.id).max();
        let mut out = Vec::new();
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            out.push(b'\n');
        }
        // An export run again shares comments with the store; a store none of whose comments
        // is among these holds another thread (a local store's own records, say: their ids are
        // small, so the order check alone lets the two threads mix).
        let shares = comments
            .iter()
            .any(|c| ids.get(&c.id).is_some_and(|there| there.body == c.body));
        if !held.comments.is_empty() && !comments.is_empty() && !shares {
            return Err(io("cannot export into")(io::Error::other(format!(
                "the store holds {} comment(s), none of them from this thread; the directory \
                 holds another thread: export into an empty directory",
                held.comments.len()
            ))));
        }
        let mut kept = Kept::default();
        for c in comments {
            if let Some(there) = ids.get(&c.id) {
                if there.body != c.body || there.created_at != c.created_at {
                    return Err(io("cannot export into")(io::Error::other(format!(
                        "the store already holds another comment {}; the directory holds \
                         another thread: export into an empty directory",
                        c.id
                    ))));
                }
                kept.present += 1;
                continue;
            }
            if max.is_some_and(|m| c.id <= m) {
                return Err(io("cannot export into")(io::Error::other(format!(
                    "comment {} would come before comment {} the store already holds, and ids \
                     must increase in thread order; the directory holds another thread: export \
                     into an empty directory",
                    c.id,
                    max.unwrap_or_default()
                ))));
            }
            let line = Line {
                id: c.id,
                author: c.author.clone(),
                created_at: c.created_at,
                updated_at: c.updated_at,
                body: c.body.clone(),
            };
            line.write_to(&mut out)
                .map_err(io("cannot encode a line for"))?;
            max = Some(c.id);
            kept.written += 1;
        }
        if kept.written > 0 {
            handle.write_all(&out).map_err(io("cannot append to"))?;
            handle.sync_data().map_err(io("cannot sync"))?;
            let _ = crate::fsutil::sync_dir(&self.dir);
        }
        Ok(kept)
    }

    /// [`LocalThread::append_kept_blocking`] off the async runtime's threads.
    pub async fn append_kept(&self, comments: Vec<Comment>) -> Result<Kept, StoreError> {
        let this = self.clone();
        super::blocking(move || this.append_kept_blocking(&comments)).await
    }
}
