//! What a client knows of each session's lineage: per (agent, session), the id of the newest
//! record it saved or a `resume` returned, in memory and, with a lineage directory, on this
//! machine's disk, so a fresh process (the bare CLI) continues where the last one left off.
//!
//! One small file per (agent, session), named by a hash of the pair and holding the pair and
//! the id, written by rename (`fsutil::write_hint`: a hint, so without fsync), private. It costs no request. A file
//! that is missing, unreadable, not ours, or names another pair or no record id is as good as
//! none: the record then goes without a `Parent:`, which loses lineage, never a record.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The largest lineage file read (it holds two names and an id).
const MAX_FILE_BYTES: u64 = 4 * 1024;

/// What a lineage directory others may write lets them do.
const RISK: &str = "another account could choose the `Parent:` of this machine's records";

/// The newest record id known per (agent, session).
#[derive(Debug, Default)]
pub(super) struct Known {
    map: Mutex<HashMap<(String, String), String>>,
    /// Where this machine keeps them between processes (`None`: in memory only).
    dir: Option<PathBuf>,
}

/// One lineage file.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    agent: String,
    session: String,
    id: String,
}

impl Known {
    /// Known ids kept in `dir` too (read on first use, written on every change).
    pub(super) fn in_dir(dir: PathBuf) -> Known {
        Known {
            dir: Some(dir),
            ..Known::default()
        }
    }

    /// The directory this machine's lineage is kept in, if any (its writer is kept there too).
    pub(super) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The newest record id of (agent, session) known, if any.
    pub(super) fn get(&self, agent: &str, session: &str) -> Option<String> {
        let key = (agent.to_string(), session.to_string());
        if let Some(id) = self.map().get(&key) {
            return Some(id.clone());
        }
        let id = self.read(agent, session)?;
        Some(self.map().entry(key).or_insert(id).clone())
    }

    pub(super) fn set(&self, agent: &str, session: &str, id: String) {
        let key = (agent.to_string(), session.to_string());
        let known = {
            let mut map = self.map();
            if map.get(&key) == Some(&id) {
                return;
            }
            map.insert(key.clone(), id.clone()).is_some()
        };
        // A fresh process (each CLI command) knows nothing yet: the file may already hold this
        // id (a `resume` that found nothing new), and then is not written again.
        if !known && self.read(agent, session).as_ref() == Some(&id) {
            return;
        }
        self.write(agent, session, id);
    }

    /// The ids known in memory (a panic elsewhere while it was held leaves them usable).
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), String>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn path(&self, agent: &str, session: &str) -> Option<PathBuf> {
        let mut pair = Vec::with_capacity(agent.len() + session.len() + 1);
        pair.extend_from_slice(agent.as_bytes());
        pair.push(0);
        pair.extend_from_slice(session.as_bytes());
        let hash = crate::format::context_hash(&pair);
        let name = hash.trim_start_matches("sha256:");
        Some(self.dir.as_ref()?.join(format!("{name}.json")))
    }

    fn read(&self, agent: &str, session: &str) -> Option<String> {
        let path = self.path(agent, session)?;
        let bytes = match crate::fsutil::read_private(&path, MAX_FILE_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(
                    "ignoring the lineage file {}: {e}; the next record goes without a Parent: \
                     line",
                    path.display()
                );
                return None;
            }
        };
        match serde_json::from_slice::<Line>(&bytes) {
            Ok(line)
                if line.agent == agent
                    && line.session == session
                    && crate::format::is_record_id(&line.id) =>
            {
                Some(line.id)
            }
            _ => {
                tracing::warn!(
                    "ignoring the lineage file {}: it does not hold this session's last record \
                     id; delete it if it keeps coming back",
                    path.display()
                );
                None
            }
        }
    }

    fn write(&self, agent: &str, session: &str, id: String) {
        let Some(path) = self.path(agent, session) else {
            return;
        };
        let line = Line {
            agent: agent.to_string(),
            session: session.to_string(),
            id,
        };
        let result = (|| {
            if let Some(dir) = path.parent() {
                crate::fsutil::make_private_dir(dir, RISK)?;
            }
            let bytes = serde_json::to_vec(&line).map_err(std::io::Error::other)?;
            crate::fsutil::write_hint(&path, &bytes, true)
        })();
        if let Err(e) = result {
            tracing::warn!(
                "cannot remember this record as the session's last in {}: {e}; the next command \
                 writes no Parent: line",
                path.display()
            );
        }
    }
}
