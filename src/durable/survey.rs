//! Every outbox on the machine, at a glance: what `forgestate outbox` lists and `flush --all`
//! walks.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{DrainState, Origin, Outbox};

/// One outbox, summed up.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OutboxSummary {
    /// Its directory.
    pub dir: PathBuf,
    /// Where its records were going, when it says.
    pub origin: Option<Origin>,
    /// Records waiting.
    pub waiting: usize,
    /// When the oldest waiting record was spooled.
    #[schemars(with = "Option<String>")]
    pub oldest: Option<DateTime<Utc>>,
    /// How the latest drains went.
    pub state: DrainState,
    /// Records moved aside (refused by the forge, or not records at all).
    pub dead_letters: usize,
}

impl OutboxSummary {
    /// Sums up one outbox directory.
    pub fn of(dir: &Path) -> OutboxSummary {
        let outbox = Outbox::new(dir);
        let pending = outbox.pending().unwrap_or_default();
        OutboxSummary {
            dir: dir.to_path_buf(),
            origin: outbox.origin(),
            waiting: pending.len(),
            oldest: pending.first().map(|s| s.spooled_at),
            state: outbox.drain_state(),
            dead_letters: outbox.dead_letters().map(|d| d.len()).unwrap_or(0),
        }
    }
}

/// Every outbox directly under each root (one directory per forge/owner/repo), sorted by path.
/// Roots that do not exist are skipped; so are directories that were never used.
pub fn survey(roots: &[PathBuf]) -> Vec<OutboxSummary> {
    let mut out = Vec::new();
    for root in roots {
        let Ok(read) = std::fs::read_dir(root) else {
            continue;
        };
        for entry in read.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let summary = OutboxSummary::of(&path);
            if summary.waiting > 0 || summary.dead_letters > 0 || summary.origin.is_some() {
                out.push(summary);
            }
        }
    }
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out.dedup_by(|a, b| a.dir == b.dir);
    out
}
