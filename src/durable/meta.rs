//! What an outbox knows about itself: where its records were going, how the forge last answered,
//! and the dead letters the forge will never take.
//!
//! Three small files beside the queue, each written atomically: `.origin.json` (the forge,
//! owner and repository the records were spooled for, so `flush --all` can find them again),
//! `.state.json` (consecutive failures and the last error, which drive the drain backoff), and
//! `dead/` (refused entries, each with a `.why.json` giving the reason and the server's answer).

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::outbox::{DEAD_DIR, Outbox, Spooled, files_in};
use crate::fsutil::{create_private_dir, read_regular, sync_dir, write_atomic};

const ORIGIN_FILE: &str = ".origin.json";
const STATE_FILE: &str = ".state.json";
const WHY_SUFFIX: &str = ".why.json";

/// Where an outbox's records were going.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Origin {
    /// The forge's base URL.
    pub url: String,
    /// The repository owner.
    pub owner: String,
    /// The repository name.
    pub repo: String,
}

/// How the forge answered the latest drains.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DrainState {
    /// Failed drains in a row (0 after any success).
    pub failures: u32,
    /// When the latest failure happened.
    #[schemars(with = "Option<String>")]
    pub last_failure_at: Option<DateTime<Utc>>,
    /// What the latest failure said.
    pub last_error: Option<String>,
}

impl DrainState {
    /// How long after the latest failure drains are skipped: 15 s doubling per failure, capped
    /// at `max`. Zero when the last drain succeeded.
    pub fn backoff(&self, max: Duration) -> Duration {
        if self.failures == 0 {
            return Duration::ZERO;
        }
        let shift = (self.failures - 1).min(16);
        Duration::from_secs(15u64 << shift).min(max)
    }

    /// Whether a drain should wait: the latest failure is more recent than the backoff.
    pub fn backing_off(&self, now: DateTime<Utc>, max: Duration) -> bool {
        let Some(at) = self.last_failure_at else {
            return false;
        };
        let wait = chrono::Duration::from_std(self.backoff(max)).unwrap_or(chrono::Duration::MAX);
        // A failure "in the future" (a clock stepped back) does not block draining forever.
        at <= now && now < at + wait
    }
}

/// An entry moved aside because it can never be posted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// The entry's file in the `dead/` directory.
    #[serde(skip)]
    pub path: PathBuf,
    /// Why it was moved aside.
    pub reason: String,
    /// What the forge answered, when it answered.
    pub answer: Option<String>,
    /// When it was moved.
    pub moved_at: DateTime<Utc>,
}

impl Outbox {
    /// Records where this outbox's entries are going (written once; rewritten if it changed).
    pub fn set_origin(&self, origin: &Origin) -> io::Result<()> {
        if self.origin().as_ref() == Some(origin) {
            return Ok(());
        }
        create_private_dir(self.dir())?;
        let text = serde_json::to_vec_pretty(origin).map_err(io::Error::other)?;
        write_atomic(&self.dir().join(ORIGIN_FILE), &text, true)
    }

    /// Where this outbox's entries were going, if it says.
    pub fn origin(&self) -> Option<Origin> {
        read_json(&self.dir().join(ORIGIN_FILE))
    }

    /// The drain state (a missing or unreadable file is a clean state).
    pub fn drain_state(&self) -> DrainState {
        read_json(&self.dir().join(STATE_FILE)).unwrap_or_default()
    }

    /// Notes a failed drain.
    pub fn record_failure(&self, error: &str) {
        let mut state = self.drain_state();
        state.failures = state.failures.saturating_add(1);
        state.last_failure_at = Some(Utc::now());
        state.last_error = Some(error.to_string());
        self.write_state(&state);
    }

    /// Notes that the forge took records again.
    pub fn record_success(&self) {
        let mut state = self.drain_state();
        if state.failures == 0 {
            return;
        }
        state.failures = 0;
        self.write_state(&state);
    }

    fn write_state(&self, state: &DrainState) {
        let written = create_private_dir(self.dir()).and_then(|()| {
            let text = serde_json::to_vec_pretty(state).map_err(io::Error::other)?;
            write_atomic(&self.dir().join(STATE_FILE), &text, true)
        });
        if let Err(e) = written {
            tracing::debug!(
                "cannot record the drain state in {}: {e}",
                self.dir().display()
            );
        }
    }

    /// The directory of dead letters.
    pub fn dead_dir(&self) -> PathBuf {
        self.dir().join(DEAD_DIR)
    }

    /// Moves an entry to `dead/` with the reason and the forge's answer beside it. Returns the
    /// entry's new path.
    pub fn bury(&self, entry: &Spooled, reason: &str, answer: Option<&str>) -> io::Result<PathBuf> {
        let dead = self.dead_dir();
        create_private_dir(&dead)?;
        let name = entry
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "entry.rec".into());
        let letter = DeadLetter {
            path: dead.join(&name),
            reason: reason.to_string(),
            answer: answer.map(str::to_string),
            moved_at: Utc::now(),
        };
        let why = serde_json::to_vec_pretty(&letter).map_err(io::Error::other)?;
        write_atomic(&dead.join(format!("{name}{WHY_SUFFIX}")), &why, true)?;
        std::fs::rename(&entry.path, &letter.path)?;
        sync_dir(self.dir())?;
        Ok(letter.path)
    }

    /// Every dead letter, oldest first.
    pub fn dead_letters(&self) -> io::Result<Vec<DeadLetter>> {
        let dead = self.dead_dir();
        let mut out: Vec<DeadLetter> = files_in(&dead, |name| name.ends_with(WHY_SUFFIX))?
            .into_iter()
            .filter_map(|name| {
                let mut letter = read_json::<DeadLetter>(&dead.join(&name))?;
                letter.path = dead.join(name.trim_end_matches(WHY_SUFFIX));
                Some(letter)
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

/// No metadata file is anywhere near this large.
const MAX_META_BYTES: u64 = 1024 * 1024;

/// A small JSON file, or `None` when it is missing, unreadable, not a regular file (a FIFO is
/// never waited on), too large or someone else's.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = read_regular(path, MAX_META_BYTES).ok()?;
    serde_json::from_slice(&text).ok()
}
