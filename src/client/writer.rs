//! Who writes: the writer a client names on every record it writes (`Writer:`), one lineage of
//! writes. A client made in a process has a fresh one (one per Python `Client`, per MCP server
//! process); the CLI keeps one per machine's state directory, in its lineage directory, so each
//! command of a machine is the same writer. See `crate::scan::fence` for what a writer is for.

use std::path::Path;

/// The file holding the machine's writer, in the lineage directory.
const FILE: &str = "writer";

/// A writer nobody else has: `w-` and 16 random hex digits.
pub(crate) fn fresh() -> String {
    // A UUIDv7's last 16 hex digits are (but for the variant bits) random.
    let id = uuid::Uuid::now_v7().simple().to_string();
    format!("w-{}", &id[16..])
}

/// The writer kept in `dir` (a lineage directory), made and kept there on first use. A file
/// that cannot be read or written gives a fresh writer for this process, with a warning.
pub(crate) fn kept_in(dir: &Path) -> String {
    let path = dir.join(FILE);
    let valid = |text: &str| {
        let text = text.trim();
        (crate::format::check_field("writer", text).is_ok() && !text.is_empty())
            .then(|| text.to_string())
    };
    if let Ok(bytes) = crate::fsutil::read_private(&path, 256)
        && let Some(writer) = valid(&String::from_utf8_lossy(&bytes))
    {
        return writer;
    }
    let writer = fresh();
    let kept = crate::fsutil::make_private_dir(dir, "another account could write as this machine")
        .and_then(|()| crate::fsutil::write_atomic(&path, writer.as_bytes(), true));
    match kept {
        // Two first commands at once: the file names the one whose rename came last.
        Ok(()) => crate::fsutil::read_private(&path, 256)
            .ok()
            .and_then(|b| valid(&String::from_utf8_lossy(&b)))
            .unwrap_or(writer),
        Err(e) => {
            tracing::warn!(
                "cannot keep this machine's writer in {}: {e}; this command writes as {writer}",
                path.display()
            );
            writer
        }
    }
}
