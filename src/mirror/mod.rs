//! The read cache: an on-disk mirror of one thread's comments, parsed, so that a warm read asks
//! the store only for what changed (`Thread::list_delta`: a forge's `since`, the local store's
//! byte offset) and parses only the records its answer needs.
//!
//! The mirror knows the record format (it keeps parsed records), so it sits above the backends,
//! in the client's read path; the backends stay format-free. It is a cache and nothing more: the
//! thread is the truth, and losing the mirror loses nothing.
//!
//! - **Full resync** (the whole thread read again) when the mirror is missing, unreadable, of
//!   another schema, built for other trusted authors, for another thread (the session issue
//!   changed), older than `resync_after` (a forge: deleted comments are invisible to `since`),
//!   or when asked ([`Client::refresh`](crate::Client::refresh), the CLI's `--refresh`). A
//!   corrupt mirror is never used: it is rebuilt, with one warning in the answer.
//! - **Warm read**: the changes after the cursor are merged by comment id (an edited comment
//!   replaces its old copy; `since` is inclusive, so a comment may come back unchanged).
//! - **The login** of the token is cached under a salted SHA-256 of the token (random salt per
//!   mirror), never the token or an unsalted hash of it: another token asks the forge again.
//!
//! Files and their layout are in `disk.rs`, one comment as kept in `slot.rs`, the read in
//! `read.rs`, and the answer built from the mirror in `view.rs`; `offline.rs` answers from the
//! mirror as it is when the forge cannot be read.

mod boot;
mod deleted;
mod digest;
mod disk;
mod files;
mod fresh;
mod head;
mod merge;
mod offline;
mod read;
mod sig;
mod slot;
mod slots;
mod summary;
mod view;
mod warm;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};

use crate::scan::Trust;
use crate::store::{StoreError, Thread};

pub(crate) use view::{Keep, View};
pub(crate) use warm::Warm;

/// File name suffix of a mirror's base file.
pub(crate) const BASE_SUFFIX: &str = ".mirror";
/// File name suffix of a mirror's delta file.
pub(crate) const DELTA_SUFFIX: &str = ".mirror-delta";
/// File name suffix of a mirror's record id index.
pub(crate) const IDS_SUFFIX: &str = ".mirror-ids";

/// The read cache of one thread.
#[derive(Debug)]
pub(crate) struct Mirror {
    files: files::Files,
    resync_after: Duration,
    token: Option<SecretString>,
    refresh: AtomicBool,
    /// The login the last read trusted (from the cache or the store).
    login: Mutex<Option<String>>,
}

impl Mirror {
    /// The mirror named `name` (plus [`BASE_SUFFIX`] and [`DELTA_SUFFIX`]) in `dir`, fully
    /// resynced when older than `resync_after`. `token` is the forge token whose login the
    /// mirror may cache (`None`: no login to cache).
    pub(crate) fn new(
        dir: &Path,
        name: &str,
        resync_after: Duration,
        token: Option<SecretString>,
    ) -> Mirror {
        Mirror {
            files: files::Files {
                base: dir.join(format!("{name}{BASE_SUFFIX}")),
                delta: dir.join(format!("{name}{DELTA_SUFFIX}")),
                ids: dir.join(format!("{name}{IDS_SUFFIX}")),
            },
            resync_after,
            token,
            refresh: AtomicBool::new(false),
            login: Mutex::new(None),
        }
    }

    /// Makes the next read a full resync.
    pub(crate) fn refresh(&self) {
        self.refresh.store(true, Ordering::Relaxed);
    }

    /// Deletes the mirror's files, so the next read by any process reads the whole thread: for
    /// after deletions, which `since` cannot see. A file already gone is fine.
    pub(crate) fn discard(&self) -> std::io::Result<()> {
        self.refresh();
        for path in [&self.files.base, &self.files.delta, &self.files.ids] {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Drops a mirror found corrupt as an answer was built from it (`why`: a record's data
    /// does not match its checksum), so the next read rebuilds it: the warning that says so,
    /// worded as for a file that does not load (`read.rs`).
    pub(crate) fn discard_corrupt(&self, why: &str) -> String {
        tracing::debug!(
            "the read cache {} is unreadable: {why}",
            self.path().display()
        );
        if let Err(e) = self.discard() {
            tracing::warn!(
                "cannot remove the read cache {}: {e}",
                self.path().display()
            );
        }
        format!(
            "the read cache {} was unreadable ({why}); rebuilt it from the thread",
            self.path().display()
        )
    }

    /// The login the last read trusted, when it read one.
    pub(crate) fn login(&self) -> Option<String> {
        self.login.lock().ok().and_then(|l| l.clone())
    }

    /// Whom a read trusts: everyone (the store trusts everyone), or the configured `trusted`
    /// authors and the store's own login (`cached`, else `known`, asked earlier in this read,
    /// else the store's answer), remembered as the login this read trusted; with that trust as
    /// the mirror's header writes it (`None` for everyone), and whether the login was learned
    /// now, to be cached (with a token to fingerprint).
    async fn trusting<T: Thread>(
        &self,
        thread: &T,
        trusted: &BTreeSet<String>,
        (cached, known): (Option<String>, Option<String>),
        fingerprint: &Option<String>,
    ) -> Result<(Trust, Option<Vec<String>>, bool), StoreError> {
        if thread.trusts_everyone() {
            return Ok((Trust::Everyone, None, false));
        }
        let learned = cached.is_none() && fingerprint.is_some();
        let login = match cached.or(known) {
            Some(login) => login,
            None => thread.whoami().await?,
        };
        if let Ok(mut l) = self.login.lock() {
            *l = Some(login.clone());
        }
        let mut set = trusted.clone();
        set.insert(login);
        let list = set.iter().cloned().collect();
        Ok((Trust::Only(set), Some(list), learned))
    }

    /// The base file's path (for messages and tests).
    pub(crate) fn path(&self) -> &Path {
        &self.files.base
    }

    /// The salt kept with a cached login (a fresh one when none is), the token's fingerprint
    /// under it, and the login `cached` holds when it is this token's.
    fn cached_login(
        &self,
        salt: Option<String>,
        cached: &Option<(String, String)>,
    ) -> (String, Option<String>, Option<String>) {
        let salt = salt.filter(|s| !s.is_empty()).unwrap_or_else(random_hex);
        let fingerprint = self.fingerprint(&salt);
        let login = match (cached, &fingerprint) {
            (Some((fp, login)), Some(mine)) if fp == mine => Some(login.clone()),
            _ => None,
        };
        (salt, fingerprint, login)
    }

    /// The salted fingerprint of the token in use, as hex; `None` without a token.
    fn fingerprint(&self, salt: &str) -> Option<String> {
        let token = self.token.as_ref()?;
        let mut hash = Sha256::new();
        hash.update(salt.as_bytes());
        hash.update([0]);
        hash.update(token.expose_secret().as_bytes());
        Some(hex(&hash.finalize()))
    }
}

/// A fresh random salt (or generation name): 32 bytes of hex.
fn random_hex() -> String {
    let mut hash = Sha256::new();
    // UUIDv7s carry 74 random bits each (from the OS generator); the rest makes it unique.
    for _ in 0..4 {
        hash.update(uuid::Uuid::now_v7().as_bytes());
    }
    hash.update(std::process::id().to_le_bytes());
    hex(&hash.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How the read cache behaves (`[cache]` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadCache {
    /// Whether reads go through the cache at all.
    pub enabled: bool,
    /// How old a forge mirror may get before a read resyncs it fully (comments deleted on the
    /// forge disappear from answers after at most this long).
    pub resync_after: Duration,
}

impl Default for ReadCache {
    fn default() -> Self {
        ReadCache {
            enabled: crate::defaults::CACHE_ENABLED,
            resync_after: Duration::from_secs(crate::defaults::CACHE_RESYNC_SECS),
        }
    }
}

/// The name of a local store's mirror files in its directory (`.thread.mirror`, ...).
pub const LOCAL_NAME: &str = ".thread";
