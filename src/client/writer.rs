//! Who writes: the writer a client names on every record it writes (`Writer:`), one lineage of
//! writes. A client made in a process has a fresh one (one per Python `Client`, per MCP server
//! process); the CLI keeps one per machine's state directory, in its lineage directory, so each
//! command of a machine is the same writer. See `crate::scan::fence` for what a writer is for.
//!
//! The machine's writer is made (a file written and fsynced) on the first write, not on a read:
//! a read only asks whether the writer it reads as was fenced, and a writer that was never kept
//! has written nothing, so nothing of it can be fenced. A read on a machine with no writer yet
//! judges as a passing writer of its own, which no record names.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file holding the machine's writer, in the lineage directory.
const FILE: &str = "writer";

/// A writer nobody else has: `w-` and 16 random hex digits.
pub(crate) fn fresh() -> String {
    // A UUIDv7's last 16 hex digits are (but for the variant bits) random.
    let id = uuid::Uuid::now_v7().simple().to_string();
    format!("w-{}", &id[16..])
}

/// Who a client writes as.
#[derive(Debug)]
pub(crate) enum Who {
    /// A writer named up front: fresh, or given.
    Named(String),
    /// The machine's writer, kept in a lineage directory.
    Kept {
        dir: PathBuf,
        /// The writer the file names, once read or made.
        kept: OnceLock<String>,
        /// What a read judges as while the machine has no writer yet (never written down).
        passing: OnceLock<String>,
    },
}

impl Who {
    /// The machine's writer kept in `dir`, read or made when first asked.
    pub(crate) fn kept_in(dir: PathBuf) -> Who {
        Who::Kept {
            dir,
            kept: OnceLock::new(),
            passing: OnceLock::new(),
        }
    }

    /// The writer records are written as: the machine's is read, or made and kept, now.
    pub(crate) fn writing(&self) -> &str {
        match self {
            Who::Named(name) => name,
            Who::Kept { dir, kept, .. } => kept.get_or_init(|| make(dir)),
        }
    }

    /// The writer a read judges fencing for: the machine's when it has one (read, never made),
    /// else a passing one of this client's, which no record names.
    pub(crate) fn reading(&self) -> &str {
        match self {
            Who::Named(name) => name,
            Who::Kept { dir, kept, passing } => match kept.get() {
                Some(writer) => writer,
                None => match read(dir) {
                    Some(writer) => kept.get_or_init(|| writer),
                    None => passing.get_or_init(fresh),
                },
            },
        }
    }
}

/// The writer the file in `dir` names, if it holds a valid one.
fn read(dir: &Path) -> Option<String> {
    let bytes = crate::fsutil::read_private(&dir.join(FILE), 256).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    (crate::format::check_field("writer", text).is_ok() && !text.is_empty())
        .then(|| text.to_string())
}

/// The writer kept in `dir` (a lineage directory), made and kept there on first use. A file
/// that cannot be read or written gives a fresh writer for this process, with a warning.
fn make(dir: &Path) -> String {
    if let Some(writer) = read(dir) {
        return writer;
    }
    let path = dir.join(FILE);
    let writer = fresh();
    let kept = crate::fsutil::make_private_dir(dir, "another account could write as this machine")
        .and_then(|()| crate::fsutil::write_atomic(&path, writer.as_bytes(), true));
    match kept {
        // Two first commands at once: the file names the one whose rename came last.
        Ok(()) => read(dir).unwrap_or(writer),
        Err(e) => {
            tracing::warn!(
                "cannot keep this machine's writer in {}: {e}; this command writes as {writer}",
                path.display()
            );
            writer
        }
    }
}
