//! The on-disk cache of the session issue's number, per forge, owner and repo, so that a
//! steady-state `checkpoint` is a single HTTP request. (The token's login is deliberately not
//! cached on disk: a machine may switch tokens, and trust must follow the token in use.)
//!
//! Losing or corrupting the cache costs requests, never data: every problem here is logged and
//! treated as an empty cache. It holds no secret. Writes are by rename; only this machine's rotation work is fsynced
//! ([`CacheEntry::work`]).
//!
//! Whoever can write the cache chooses where records are posted (the issue number) and what
//! `resume` answers (the read cache), so the cache directory must be ours and writable by no one
//! else ([`usable_dir`]: otherwise it is not used, with one warning), and a file in it that is
//! not ours, or that others may write, is ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What is remembered between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    pub issue: Option<u64>,
    pub issue_url: Option<String>,
    /// When the issue was last seen open, with the right title and label.
    pub checked_at: Option<DateTime<Utc>>,
    /// The title and label the issue was recognised by. A number cached under other settings
    /// is not used: the configuration changed, so the session issue must be found again.
    pub title: Option<String>,
    pub label: Option<String>,
    /// The head's number and when it was created (what a cold read of the chain needs), so
    /// no process fetches the issue again. (The third field is no longer used.)
    #[serde(default)]
    pub opened: Option<(u64, DateTime<Utc>, Option<u64>)>,
    /// Issue numbers seen in repository-wide comment lists: whether each is a member of the
    /// session thread (`forge/chain.rs`), so an unknown issue costs one request once.
    #[serde(default)]
    pub members: BTreeMap<u64, bool>,
    /// Open members a newer one continues (a reopened old issue, an unfinished rotation) that
    /// this machine found and warned of: its next record rotates them again to close them,
    /// whichever process of the machine writes it.
    #[serde(default)]
    pub reopened: BTreeSet<u64>,
    /// Members other than the head whose records up to this comment id were carried to the
    /// head (or found there already).
    #[serde(default)]
    pub tidied: BTreeMap<u64, u64>,
    /// Successors this machine's rotations created whose old issue they have not closed yet:
    /// a rerun here finishes its own interrupted run at once, where a rotation another machine
    /// is carrying is left to it (`client/rotate.rs`).
    #[serde(default)]
    pub rotating: BTreeSet<u64>,
    /// Members whose tidy this machine left to another machine carrying from them at the time:
    /// its next record tidies them again (`client/tidy.rs`).
    #[serde(default)]
    pub untidied: BTreeSet<u64>,
    /// Old issues whose rotation is unfinished as far as this machine knows: its own run, not
    /// done yet (its next record finishes it at once), or one it left to the run carrying it
    /// (its next record finishes it once that run shows no progress: `client/rotate.rs`,
    /// `STALLED`). Forgotten once looked at, or when this machine closes the old issue.
    #[serde(default)]
    pub left: BTreeSet<u64>,
    /// The repository's id, from the session issue (`repository.id`): another id at the same
    /// URL is a forge recreated there, whose issues are not the ones remembered.
    #[serde(default)]
    pub repo_id: Option<i64>,
    /// The instance's `max_response_items` (`GET /settings/api`), so a process with this
    /// cache never asks for it before its first list.
    #[serde(default)]
    pub page_size: Option<u32>,
    /// What `GET /version` answered (`-v` names the forge from it without asking again).
    #[serde(default)]
    pub version: Option<String>,
    /// `(salt, fingerprint)` of the token the issue was last checked with: under another token
    /// (another account, whose trust differs) the number is checked again before it is used.
    #[serde(default)]
    pub token: Option<(String, String)>,
    /// The forge, owner and repository the file was written for ([`store_key`]): a file moved or
    /// copied under another forge's name is not believed.
    #[serde(default)]
    pub forge: Option<String>,
}

impl CacheEntry {
    /// This machine's unfinished rotation work: what only this file remembers, so a change to
    /// it is written durably.
    #[allow(clippy::type_complexity)]
    pub fn work(
        &self,
    ) -> (
        &BTreeSet<u64>,
        &BTreeMap<u64, u64>,
        &BTreeSet<u64>,
        &BTreeSet<u64>,
        &BTreeSet<u64>,
    ) {
        let CacheEntry {
            reopened,
            tidied,
            rotating,
            untidied,
            left,
            ..
        } = self;
        (reopened, tidied, rotating, untidied, left)
    }
}

/// A cache file, or none (then nothing is remembered).
#[derive(Debug, Clone)]
pub struct DiskCache {
    path: Option<PathBuf>,
    /// The forge, owner and repository it is for, as the file names them inside.
    forge: String,
}

impl DiskCache {
    /// The cache file for one forge/owner/repo inside `dir`.
    pub fn new(dir: Option<&Path>, url: &str, owner: &str, repo: &str) -> DiskCache {
        let key = store_key(url, owner, repo);
        DiskCache {
            path: dir.map(|d| d.join(format!("{key}.json"))),
            forge: format!("{url} {owner}/{repo}"),
        }
    }

    pub fn load(&self) -> CacheEntry {
        let Some(path) = &self.path else {
            return CacheEntry::default();
        };
        match crate::fsutil::read_private(path, MAX_CACHE_BYTES) {
            Ok(bytes) => match serde_json::from_slice::<CacheEntry>(&bytes) {
                Ok(entry) if entry.forge.as_ref().is_some_and(|f| *f != self.forge) => {
                    tracing::warn!(
                        "ignoring cache {}: it was written for {}, not {} (moved or copied from \
                         another forge's name); the session issue is looked up again",
                        path.display(),
                        entry.forge.unwrap_or_default(),
                        self.forge
                    );
                    CacheEntry::default()
                }
                Ok(entry) => entry,
                Err(e) => {
                    tracing::warn!("ignoring unreadable cache {}: {e}", path.display());
                    CacheEntry::default()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => CacheEntry::default(),
            Err(e) => {
                tracing::warn!("ignoring cache {}: {e}", path.display());
                CacheEntry::default()
            }
        }
    }

    /// Writes `entry` by rename; `durable` adds the fsyncs (`fsutil::write_atomic`), else it is
    /// a hint a crash may lose (`fsutil::write_hint`).
    pub fn store(&self, entry: &CacheEntry, durable: bool) {
        let Some(path) = &self.path else { return };
        let entry = CacheEntry {
            forge: Some(self.forge.clone()),
            ..entry.clone()
        };
        if let Err(e) = write(path, &entry, durable) {
            tracing::warn!(
                "cannot update cache {}: {e}; forgestate will re-discover next time",
                path.display()
            );
        }
    }
}

/// A file-name-safe key for one forge/owner/repo, shared by the cache and the outbox.
pub fn store_key(url: &str, owner: &str, repo: &str) -> String {
    format!("{url}__{owner}__{repo}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write(path: &Path, entry: &CacheEntry, durable: bool) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::fsutil::make_private_dir(dir, RISK)?;
    let bytes = serde_json::to_vec_pretty(entry).map_err(std::io::Error::other)?;
    match durable {
        true => crate::fsutil::write_atomic(path, &bytes, true),
        false => crate::fsutil::write_hint(path, &bytes, true),
    }
}

/// The largest issue-number cache file read (it holds a few short fields).
const MAX_CACHE_BYTES: u64 = 64 * 1024;

/// What a cache directory others may write lets them do.
const RISK: &str = "another account could choose where records are posted and what `resume` \
                    answers";

/// Directories already warned about by this process.
static WARNED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Why `dir` may not hold this user's caches (another account owns it, or may write to it), or
/// `None` when it may (a directory not made yet is created private when first written).
pub fn dir_problem(dir: &Path) -> Option<String> {
    match crate::fsutil::check_private_dir(dir, RISK) {
        Ok(()) => not_writable(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(e.to_string()),
    }
}

/// Why our own directory `dir` cannot take cache files: its mode denies its owner writing or
/// entering it (a `chmod 500`), so every write would fail, on every run. Read from the mode
/// bits, so that the answer is the same for root, whom the kernel would let write.
fn not_writable(dir: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).ok()?.permissions().mode() & 0o7777;
        (mode & 0o300 != 0o300).then(|| {
            format!(
                "{} is not writable by you (mode {mode:o}), so nothing can be cached there; run \
                 `chmod 700 {}`",
                dir.display(),
                dir.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// `dir` when it may hold this user's caches (the issue number, the read cache, the cached
/// login), else `None`, with one warning per directory and process naming it: nothing is cached
/// then, which costs requests, never records.
pub fn usable_dir(dir: &Path) -> Option<PathBuf> {
    let Some(problem) = dir_problem(dir) else {
        return Some(dir.to_path_buf());
    };
    let first = WARNED
        .lock()
        .map(|mut w| w.insert(dir.to_path_buf()))
        .unwrap_or(true);
    if first {
        tracing::warn!(
            "{problem}, or set [forge] cache_dir (or $XDG_CACHE_HOME) to a directory of your \
             own; until then this cache directory is not used (nothing is cached)"
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::CacheEntry;

    /// What a process discovers is a hint; this machine's rotation work is what a crash must
    /// not lose, so only a change to it is written with fsyncs.
    #[test]
    fn only_rotation_work_is_durable() {
        let base = CacheEntry::default();
        let mut found = base.clone();
        found.issue = Some(7);
        found.version = Some("15.0.3".into());
        found.page_size = Some(50);
        found.members.insert(7, true);
        found.opened = Some((7, chrono::Utc::now(), None));
        assert_eq!(found.work(), base.work());
        for change in [
            |e: &mut CacheEntry| {
                e.rotating.insert(8);
            },
            |e: &mut CacheEntry| {
                e.left.insert(6);
            },
            |e: &mut CacheEntry| {
                e.untidied.insert(6);
            },
            |e: &mut CacheEntry| {
                e.reopened.insert(5);
            },
            |e: &mut CacheEntry| {
                e.tidied.insert(6, 40);
            },
        ] {
            let mut worked = found.clone();
            change(&mut worked);
            assert_ne!(worked.work(), found.work());
        }
    }
}
